/**
 * The middleware against real HTTP servers on 127.0.0.1: every request an `HttpClient` sends is a
 * call of the provider, concurrency counted by the server from a request's first byte to its
 * response's last, streamed bodies included.
 */
import { assert, describe, expectTypeOf, it } from "@effect/vitest"
import { Middleware } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, Fiber, Layer, Logger, Stream } from "effect"
import { HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import type * as http from "node:http"
import { tokensPerMinute } from "./utils/providers.js"
import { run, uniqueName, waitUntil } from "./utils/run.js"
import { json, slowBody, testServer } from "./utils/server.js"

/** Server-sent events: `count` events `every` ms apart, the last one carrying `usage`. */
const events =
  (count: number, every: number, usage?: unknown) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.statusCode = 200
    res.setHeader("content-type", "text/event-stream")
    let sent = 0
    const tick = () => {
      if (res.destroyed) return
      if (sent === count) {
        if (usage !== undefined) res.write(`data: ${JSON.stringify({ usage })}\n\n`)
        res.end("data: [DONE]\n\n")
        return
      }
      sent++
      res.write(`data: {"n":${sent}}\n\n`)
      setTimeout(tick, every)
    }
    tick()
  }

const textOf = (response: HttpClientResponse.HttpClientResponse) => response.text

describe("Middleware: buffered", () => {
  it.live("the upstream sees at most the bulkhead, bodies read inside the permit and handed on", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(4, 64, 15) })
      const provider = yield* Provider.make({ name: uniqueName("mw-slow"), bulkhead: { permits: 3 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      const bodies = yield* Effect.forEach(
        Array.from({ length: 12 }),
        () => Effect.flatMap(client.get("/slow"), textOf),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(bodies.length, 12)
      assert.isTrue(bodies.every((body) => body.length === 258))
      assert.strictEqual(server.counters.peak, 3)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0, waiting: 0 })
    })))

  it.live("status, headers and body reach the caller as the upstream sent them, error statuses too", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({
        "/teapot": json({ error: "short and stout" }, 418, { "x-custom": "yes" }),
        "/created": json({ id: 7 }, 201, { location: "/things/7" }),
        "/empty": (_req, res) => {
          res.statusCode = 204
          res.end()
        }
      })
      const provider = yield* Provider.make({ name: uniqueName("mw-status"), bulkhead: { permits: 2 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      const teapot = yield* client.get("/teapot")
      assert.strictEqual(teapot.status, 418)
      assert.strictEqual(teapot.headers["x-custom"], "yes")
      assert.deepStrictEqual(yield* teapot.json, { error: "short and stout" })
      const created = yield* client.post("/created")
      assert.strictEqual(created.status, 201)
      assert.strictEqual(created.headers["location"], "/things/7")
      assert.deepStrictEqual(yield* created.json, { id: 7 })
      assert.strictEqual((yield* client.del("/empty")).status, 204)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))

  it.live("a 429 pauses the provider and is retried; the caller gets the answer", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({
        "/q": (_req, res, counters) =>
          counters.requests === 1
            ? json({ error: "slow down" }, 429, { "retry-after": "0" })(_req, res, counters)
            : json({ ok: true })(_req, res, counters)
      })
      const provider = yield* Provider.make({
        name: uniqueName("mw-429"),
        bulkhead: { permits: 1 },
        rateLimiter: { limit: 100, window: "1 second" },
        retry: { maxAttempts: 3, backoff: { initial: "1 millis", jitter: 0 }, budget: false }
      })
      const client = yield* Middleware.make(provider, { baseUrl: server.url, idempotent: true, retryAfter: { min: 0 } })
      const response = yield* client.post("/q")
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual(yield* response.json, { ok: true })
      assert.strictEqual(server.counters.requests, 2)
    })))

  it.live("sends the user agent and the headers given, a request's own first, and no trace headers", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/echo": (req, res) => res.end(JSON.stringify(req.headers)) })
      const provider = yield* Provider.make({ name: uniqueName("mw-headers"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, {
        baseUrl: server.url,
        userAgent: "consumer/1.0 (ops@example.com)",
        headers: { "x-api-key": "default", "x-team": "batch" }
      })
      const echoed = (yield* client.execute(
        HttpClientRequest.get("/echo").pipe(
          HttpClientRequest.setHeader("x-api-key", "the request's")
        )
      ).pipe(Effect.flatMap((response) => response.json), Effect.withSpan("caller"))) as Record<string, string>
      assert.strictEqual(echoed["user-agent"], "consumer/1.0 (ops@example.com)")
      assert.strictEqual(echoed["x-api-key"], "the request's")
      assert.strictEqual(echoed["x-team"], "batch")
      assert.isUndefined(echoed["traceparent"])
      assert.isUndefined(echoed["b3"])
    })))

  it.live("a request to another origin fails with an error naming both", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({})
      const provider = yield* Provider.make({ name: uniqueName("mw-origin"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      const error = yield* Effect.flip(client.get("http://example.invalid/x"))
      assert.strictEqual(error._tag, "HttpClientError")
      assert.strictEqual((error as HttpClientError.HttpClientError).reason._tag, "InvalidUrlError")
      assert.include(error.message, server.url)
      assert.include(error.message, "http://example.invalid")
      assert.strictEqual(server.counters.requests, 0)
    })))

  it.live("a body over maxBodySize is a BodyTooLarge, the permit released and the request aborted", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/huge": slowBody(1_000, 1_024, 2) })
      const provider = yield* Provider.make({ name: uniqueName("mw-huge"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url, maxBodySize: 16 * 1024 })
      const error = yield* Effect.flip(client.get("/huge"))
      assert.strictEqual(error._tag, "BodyTooLarge")
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
      yield* server.idle
      assert.strictEqual(server.counters.aborted, 1)
    })))
})

describe("Middleware: streamed", () => {
  it.live("a streamed body holds its permit to its last byte, as the server counts", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/events": events(5, 10) })
      const provider = yield* Provider.make({ name: uniqueName("mw-stream"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      const read = HttpClientRequest.get("/events").pipe(HttpClientRequest.accept("text/event-stream"))
      const sizes = yield* Effect.forEach(
        Array.from({ length: 3 }),
        () =>
          Effect.flatMap(client.execute(read), (response) =>
            response.stream.pipe(Stream.runFold(() => 0, (n: number, chunk) => n + chunk.length))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(sizes, [sizes[0], sizes[0], sizes[0]])
      assert.isAbove(sizes[0]!, 50)
      // the server counts each request until its response's last byte: never two at once
      assert.strictEqual(server.counters.peak, 1)
      assert.strictEqual(server.counters.requests, 3)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))

  it.live("the permit is held while the reader reads, and given back when it stops early", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/events": events(200, 10) })
      const provider = yield* Provider.make({ name: uniqueName("mw-stop"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      const response = yield* client.execute(
        HttpClientRequest.post("/events").pipe(HttpClientRequest.bodyJsonUnsafe({ stream: true }))
      )
      assert.include(yield* provider.bulkhead.stats, { inFlight: 1 })
      const first = yield* response.stream.pipe(Stream.take(2), Stream.runCollect)
      assert.strictEqual(first.length, 2)
      yield* waitUntil(() => Effect.runSync(provider.bulkhead.stats).inFlight === 0, "the permit is back")
      yield* server.idle
      assert.strictEqual(server.counters.aborted, 1)
    })))

  it.live("a reader that never reads holds the permit for the idle timeout at most", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/events": events(100, 1) })
      const provider = yield* Provider.make({ name: uniqueName("mw-idle"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url, streamIdleTimeout: "200 millis" })
      yield* client.execute(HttpClientRequest.get("/events").pipe(HttpClientRequest.accept("text/event-stream")))
      assert.include(yield* provider.bulkhead.stats, { inFlight: 1 })
      yield* waitUntil(() => Effect.runSync(provider.bulkhead.stats).inFlight === 0, "the permit is back")
    })))

  it.live("a streamed request answered with an error status gets the response as sent, its permit back", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/s": json({ error: { type: "overloaded_error" } }, 529) })
      const provider = yield* Provider.make({ name: uniqueName("mw-stream-error"), bulkhead: { permits: 1 } })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      const response = yield* client.execute(
        HttpClientRequest.post("/s").pipe(HttpClientRequest.bodyJsonUnsafe({ stream: true }))
      )
      assert.strictEqual(response.status, 529)
      assert.deepStrictEqual(yield* response.json, { error: { type: "overloaded_error" } })
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))
})

describe("Middleware: refusals", () => {
  it.live("used directly, the error channel names the provider's refusals", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(20, 8, 20) })
      const provider = yield* Provider.make({
        name: uniqueName("mw-typed"),
        bulkhead: { permits: 1, maxWait: "20 millis" }
      })
      const client = yield* Middleware.make(provider, { baseUrl: server.url })
      expectTypeOf(client).toEqualTypeOf<
        HttpClient.HttpClient.With<
          | HttpClientError.HttpClientError
          | Provider.ProviderClosed
          | Provider.PermitWaitTimeout
          | Middleware.BodyError
        >
      >()
      const slow = yield* Effect.forkChild(client.get("/slow"))
      yield* waitUntil(() => server.counters.active === 1, "the first request is in flight")
      const outcome = yield* client.get("/slow").pipe(
        Effect.as("answered"),
        Effect.catchTag("PermitWaitTimeout", () => Effect.succeed("queued too long"))
      )
      assert.strictEqual(outcome, "queued too long")
      yield* Fiber.join(slow)
    })))

  it.live("through the HttpClient service, a refusal is a TransportError's cause, lifted back by liftRefusals", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/q": json({ ok: true }) })
      class Api extends Provider.Tag(uniqueName("mw-layer"))<Api>() {}
      const Live = Middleware.layer(Api, { baseUrl: server.url }).pipe(
        Layer.provide(
          Api.layer({ bulkhead: { permits: 1 }, rateLimiter: { limit: 1, window: "1 minute", maxWait: 0 } })
        )
      )
      // what a library written against HttpClient.HttpClient sees
      const library = Effect.flatMap(HttpClient.HttpClient, (client) => Effect.flatMap(client.get("/q"), textOf))
      const outcomes = yield* Effect.forEach([1, 2], () =>
        library.pipe(
          Effect.tapError((error) =>
            Effect.sync(() => {
              assert.strictEqual(error._tag, "HttpClientError")
              assert.strictEqual(error.reason._tag, "TransportError")
              assert.strictEqual((error.reason.cause as { _tag: string })._tag, "RateLimitExceeded")
            })
          ),
          Middleware.liftRefusals,
          Effect.catchTag("RateLimitExceeded", (refusal) => Effect.succeed(`refused: ${refusal._tag}`))
        )).pipe(Effect.provide(Live))
      expectTypeOf(library.pipe(Middleware.liftRefusals)).toEqualTypeOf<
        Effect.Effect<string, HttpClientError.HttpClientError | Middleware.Refusal, HttpClient.HttpClient>
      >()
      assert.deepStrictEqual(outcomes, [`{"ok":true}`, "refused: RateLimitExceeded"])
    })))
})

describe("Middleware: usage", () => {
  it.live("junk from usage is logged with the provider and the value, and the answer is delivered", () => {
    const logged: Array<string> = []
    const capture = Logger.layer([Logger.make(({ message }) => {
      logged.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
    })])
    return run(Effect.gen(function*() {
      const server = yield* testServer({ "/c": json({ usage: { total_tokens: 12 } }) })
      const provider = yield* tokensPerMinute(uniqueName("mw-junk"), 1)
      const junk: ReadonlyArray<() => unknown> = [
        () => ({ tokens: undefined }),
        () => Number.NaN,
        () => ({ tokens: -3 }),
        () => {
          throw new Error("boom")
        },
        () => undefined
      ]
      // every client reserves on the origin before the first request creates its pool
      const clients = yield* Effect.forEach(junk, (usage) =>
        Middleware.make(provider, {
          baseUrl: server.url,
          estimate: () => ({ requests: 1, tokens: 50 }),
          usage: usage as never
        }))
      for (const client of clients) {
        const body = yield* Effect.flatMap(client.get("/c"), (response) => response.json)
        assert.deepStrictEqual(body, { usage: { total_tokens: 12 } })
      }
      assert.isTrue(logged.some((line) => line.includes("{ tokens: undefined }") && line.includes(provider.name)))
      assert.isTrue(logged.some((line) => line.includes("returned NaN")))
      assert.isTrue(logged.some((line) => line.includes("tokens is not an integer ≥ 0")))
      assert.isTrue(logged.some((line) => line.includes("threw (Error: boom)")))
      assert.isTrue(logged.some((line) => line.includes("read nothing from a 200 response")))
    })).pipe(Effect.provide(capture))
  })

  it.live("a streamed response's final usage event settles the estimate, inside the permit", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/s": events(3, 5, { total_tokens: 40 }) })
      const provider = yield* tokensPerMinute(uniqueName("mw-stream-usage"), 1)
      const seen: Array<unknown> = []
      const client = yield* Middleware.make(provider, {
        baseUrl: server.url,
        estimate: () => ({ requests: 1, tokens: 900 }),
        usage: ({ body }) => {
          seen.push(body)
          const match = typeof body === "string" ? /"total_tokens":(\d+)/.exec(body) : null
          return match === null ? undefined : { tokens: Number(match[1]) }
        }
      })
      const request = HttpClientRequest.get("/s").pipe(HttpClientRequest.accept("text/event-stream"))
      yield* Effect.flatMap(client.execute(request), textOf)
      // 900 reserved, 40 settled: 960 tokens are left of the 1000, so 950 more fit
      yield* Effect.flatMap(client.execute(request), textOf)
      assert.strictEqual(seen.length, 2)
      const limiter = provider.rateLimiter!
      yield* limiter.take({ cost: { tokens: 900 }, maxWait: 0 })
    })))
})
