/**
 * Effect 4's own HTTP limits beside sluice's middleware, against real loopback servers (RFC 0003
 * §4, the HTTP row). (a) A server answering 429 with `Retry-After: 1` forever: Effect's
 * `HttpClient.withRateLimiter` (memory store, `times` unset) keeps sending, one try per second of
 * the TestClock; sluice's provider stops at its retries with `UpstreamRateLimited` and sends
 * nothing more. (c) One permit and a slow body: a `Semaphore` around Effect's client is released
 * at the headers, so the second request reaches the server before the first body's last byte;
 * sluice's permit is held to that byte. If Effect's half ever fails, re-weigh using it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Middleware, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, Fiber, Semaphore } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { RateLimiter as EffectRateLimiter } from "effect/persistence"
import { TestClock } from "effect/testing"
import type * as http from "node:http"
import { run, uniqueName, waitUntilEffect } from "../utils/run.js"
import { type Handler, testServer } from "../utils/server.js"

/** 429 with `Retry-After: 1`, every time. */
const tooManyForever: Handler = (_req, res) => {
  res.statusCode = 429
  res.setHeader("retry-after", "1")
  res.setHeader("content-type", "application/json")
  res.end(`{"error":"slow down"}`)
}

/**
 * Moves the TestClock one second at a time, `seconds` times, each step once the server has
 * answered every request so far and the client had a moment of real time to sleep on the answer.
 * Returns how many requests the server had seen after each step.
 */
const secondBySecond = (counters: { requests: number; active: number }, seconds: number) =>
  Effect.gen(function*() {
    const seen: Array<number> = []
    for (let second = 0; second < seconds; second++) {
      yield* waitUntilEffect(Effect.sync(() => counters.active === 0), "the server answered")
      yield* TestClock.withLive(Effect.sleep("20 millis"))
      yield* TestClock.adjust("1 second")
      yield* TestClock.withLive(Effect.sleep("20 millis"))
      seen.push(counters.requests)
    }
    return seen
  })

/** A JSON body written in 5 pieces 30 ms apart; the log gets `start n` and `end n` as the server sees them. */
const loggedSlowBody = (log: Array<string>): Handler => {
  let n = 0
  return (_req: http.IncomingMessage, res: http.ServerResponse) => {
    const id = ++n
    log.push(`start ${id}`)
    res.on("finish", () => log.push(`end ${id}`))
    res.statusCode = 200
    res.setHeader("content-type", "application/json")
    res.write("[")
    let sent = 0
    const tick = () => {
      if (res.destroyed) return
      if (sent === 5) {
        res.end("]")
        return
      }
      sent++
      res.write(" ".repeat(16))
      setTimeout(tick, 30)
    }
    tick()
  }
}

describe("comparison (a): a server that answers 429 with Retry-After: 1 forever", () => {
  it.effect("Effect: withRateLimiter retries without end, one try per second of the clock", () =>
    run(
      Effect.gen(function*() {
        const server = yield* testServer({ "/q": tooManyForever })
        const limiter = yield* EffectRateLimiter.make
        const client = (yield* HttpClient.HttpClient).pipe(
          HttpClient.withRateLimiter({ limiter, key: uniqueName("effect-429"), limit: 100, window: "1 minute" })
        )
        const fiber = yield* Effect.forkChild(client.get(`${server.url}/q`))
        yield* waitUntilEffect(Effect.sync(() => server.counters.requests === 1), "the first try")
        const seen = yield* secondBySecond(server.counters, 20)
        // still trying after 20 seconds, one try for each second: 21 tries, all answered 429
        assert.strictEqual(server.counters.requests, 21)
        assert.deepStrictEqual(seen, Array.from({ length: 20 }, (_, i) => i + 2))
        assert.strictEqual(server.counters.byStatus.get(429), 21)
        assert.isUndefined(fiber.pollUnsafe())
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.provide(EffectRateLimiter.layerStoreMemory))
    ))

  it.effect("sluice: the provider stops at its retries with UpstreamRateLimited, then sends nothing", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/q": tooManyForever })
      const provider = yield* Provider.make({
        name: uniqueName("sluice-429"),
        bulkhead: { permits: 1 },
        rateLimiter: { limit: 100, window: "1 minute" },
        retry: { maxAttempts: 3, backoff: { initial: "1 millis", jitter: 0 } }
      })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const fiber = yield* Effect.forkChild(Effect.flip(client.text(HttpClientRequest.get("/q"))))
      yield* waitUntilEffect(Effect.sync(() => server.counters.requests === 1), "the first try")
      const seen = yield* secondBySecond(server.counters, 20)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "UpstreamRateLimited")
      assert.include(error.message, "429")
      // three attempts, each after the pause the Retry-After set on the limiter, then none
      assert.strictEqual(server.counters.requests, 3)
      assert.deepStrictEqual(seen, [2, ...Array.from({ length: 19 }, () => 3)])
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))
})

describe("comparison (c): one permit and a slow body", () => {
  it.live("Effect: a Semaphore around the client frees its permit at the headers; the second starts mid-body", () =>
    run(Effect.gen(function*() {
      const log: Array<string> = []
      const server = yield* testServer({ "/slow": loggedSlowBody(log) })
      const semaphore = yield* Semaphore.make(1)
      const client = (yield* HttpClient.HttpClient).pipe(
        HttpClient.transform((effect) => Semaphore.withPermits(semaphore, 1)(effect))
      )
      yield* Effect.forEach(
        [1, 2],
        () => Effect.flatMap(client.get(`${server.url}/slow`), (response) => response.text),
        { concurrency: "unbounded" }
      )
      assert.isBelow(log.indexOf("start 2"), log.indexOf("end 1"))
      assert.strictEqual(server.counters.peak, 2)
    })))

  it.live("sluice: the permit is held to the body's last byte; the second starts after it", () =>
    run(Effect.gen(function*() {
      const log: Array<string> = []
      const server = yield* testServer({ "/slow": loggedSlowBody(log) })
      const provider = yield* Provider.make({ name: uniqueName("sluice-slow"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      yield* Effect.forEach(
        [1, 2],
        () => Effect.flatMap(client.get("/slow"), (response) => response.text),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(log, ["start 1", "end 1", "start 2", "end 2"])
      assert.strictEqual(server.counters.peak, 1)
    })))
})
