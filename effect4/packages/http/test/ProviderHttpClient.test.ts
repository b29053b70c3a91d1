/**
 * The HTTP client against real HTTP servers on 127.0.0.1: concurrency is counted by the server,
 * from a request's first byte to its response's last, so what is asserted is what an upstream
 * would see.
 */
import { assert, describe, it } from "@effect/vitest"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Duration, Effect, Exit, Fiber, Metric, Result, Schema, Stream } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import { TestClock } from "effect/testing"
import type * as http from "node:http"
import { run, uniqueName, waitUntil, waitUntilEffect } from "./utils/run.js"
import { failMidBody, json, slowBody, type TestServer, testServer } from "./utils/server.js"

const Anything = Schema.Array(Schema.Unknown)

/**
 * `text` and `json` of `path` both fail with BodyTooLarge, leave the permit free, and the server
 * sees both requests aborted.
 */
const refusedAndAborted = (
  client: ProviderHttpClient.ProviderHttpClient,
  provider: Provider.Provider,
  server: TestServer,
  path: string
) =>
  Effect.gen(function*() {
    const reads: ReadonlyArray<Effect.Effect<unknown, { readonly _tag: string }>> = [
      client.text(HttpClientRequest.get(path)),
      client.json(HttpClientRequest.get(path), Anything)
    ]
    for (const read of reads) {
      const error = yield* Effect.flip(read)
      assert.strictEqual(error._tag, "BodyTooLarge")
    }
    assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    yield* server.idle
    assert.strictEqual(server.counters.aborted, 2)
  })

describe("permits are held until the body is read", () => {
  it.live("observed concurrency never exceeds the bulkhead while bodies arrive slowly", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(4, 64, 15) })
      const provider = yield* Provider.make({ name: uniqueName("slow"), bulkhead: { permits: 3 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const results = yield* Effect.forEach(
        Array.from({ length: 12 }, () => HttpClientRequest.get("/slow")),
        (request) => client.json(request, Anything),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.length, 12)
      assert.strictEqual(server.counters.requests, 12)
      // what the upstream saw: the bound, reached and never passed
      assert.strictEqual(server.counters.peak, 3)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0, waiting: 0 })
    })))

  it.live("the bound holds when the server breaks bodies halfway, and nothing leaks", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/broken": failMidBody(10) })
      const provider = yield* Provider.make({ name: uniqueName("broken"), bulkhead: { permits: 2 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const exits = yield* Effect.forEach(
        Array.from({ length: 8 }, () => HttpClientRequest.get("/broken")),
        (request) => Effect.exit(client.json(request, Anything)),
        { concurrency: "unbounded" }
      )
      assert.isTrue(exits.every(Exit.isFailure))
      assert.strictEqual(server.counters.requests, 8)
      assert.isAtMost(server.counters.peak, 2)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0, waiting: 0 })
    })))

  it.live("a caller interrupted mid-body releases its permit only once its request is aborted", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/long": slowBody(200, 64, 10) })
      const provider = yield* Provider.make({ name: uniqueName("interrupt"), bulkhead: { permits: 1 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const pool = yield* HttpPool.HttpPool
      const fiber = yield* Effect.forkChild(client.text(HttpClientRequest.get("/long")))
      yield* waitUntil(() => server.counters.active === 1, "the request is in flight")
      yield* Effect.sleep("30 millis") // part of the body has arrived
      yield* Fiber.interrupt(fiber)
      // the permit is back, and by then the request was aborted: its connection is closed (undici
      // drops an origin's entry once its pool is empty)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0, waiting: 0 })
      assert.strictEqual((yield* pool.stats)[client.origin]?.connected ?? 0, 0)
      yield* server.idle
      assert.strictEqual(server.counters.aborted, 1)
    })))
})

describe("one pool, sized from the bulkheads", () => {
  it.live("a pool smaller than the bulkheads on an origin is refused with the numbers", () =>
    run(
      Effect.gen(function*() {
        const server = yield* testServer({})
        const a = yield* Provider.make({ name: uniqueName("a"), bulkhead: { permits: 2 } })
        const b = yield* Provider.make({ name: uniqueName("b"), bulkhead: { permits: 2, maxPermits: 3 } })
        yield* ProviderHttpClient.make(a, { baseUrl: server.url })
        const error = yield* Effect.flip(ProviderHttpClient.make(b, { baseUrl: `${server.url}/v1` }))
        assert.strictEqual(error._tag, "PoolTooSmall")
        assert.include(error, { origin: server.url, connections: 4, required: 5 })
        assert.strictEqual(
          error.message,
          `origin ${server.url}: its pool allows 4 connections, but the bulkheads on it need 5 (${a.name} 2 + ${b.name} 3); ` +
            "a smaller pool would queue calls that hold a permit where no metric sees them"
        )
      }),
      { connectionsPerOrigin: 4 }
    ))

  it.live("a pool sized from the reservations never queues a request while permits are free", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(10, 64, 10) })
      const provider = yield* Provider.make({ name: uniqueName("sized"), bulkhead: { permits: 4 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const pool = yield* HttpPool.HttpPool
      const fiber = yield* Effect.forkChild(
        Effect.forEach(Array.from({ length: 4 }), () => client.text(HttpClientRequest.get("/slow")), {
          concurrency: "unbounded"
        })
      )
      yield* waitUntil(() => server.counters.active === 4, "4 requests are in flight")
      const stats = (yield* pool.stats)[client.origin]
      // every permit holder has its own connection: nothing waits inside undici
      assert.include(stats, { running: 4, pending: 0, queued: 0 })
      const [reservation] = (yield* pool.reservations).filter((r) => r.origin === client.origin)
      assert.include(reservation, { reserved: 4, poolSize: 4 })
      yield* Fiber.join(fiber)
    })))
})

describe("429 and Retry-After", () => {
  /**
   * A server with a quota of `limit` requests per sliding second that answers 429 with a
   * Retry-After (in whole seconds) past it, and records every arrival that came while a cooldown
   * it had announced was still running (allowing 250 ms for requests already on their way when the
   * 429 was sent: generous, so that a loaded CI machine does not count a slow arrival as a breach).
   */
  const quotaServer = (limit: number) => {
    const arrivals: Array<number> = []
    const cooldowns: Array<{ readonly from: number; readonly until: number }> = []
    let violations = 0
    let tooMany = 0
    const handler = (_req: http.IncomingMessage, res: http.ServerResponse) => {
      const now = performance.now()
      if (cooldowns.some((c) => now >= c.from + 250 && now < c.until)) violations++
      const recent = arrivals.filter((t) => t > now - 1000)
      if (recent.length >= limit) {
        tooMany++
        cooldowns.push({ from: now, until: now + 1000 })
        res.statusCode = 429
        res.setHeader("retry-after", "1")
        res.end("slow down")
        return
      }
      arrivals.push(now)
      res.setHeader("content-type", "application/json")
      res.end("[]")
    }
    return { handler, stats: () => ({ violations, tooMany, served: arrivals.length }) }
  }

  it.live(
    "a 429 pauses the provider for every caller, and the calls are retried after it",
    () =>
      run(Effect.gen(function*() {
        const quota = quotaServer(2)
        const server = yield* testServer({ "/q": quota.handler })
        const provider = yield* Provider.make({
          name: uniqueName("quota"),
          bulkhead: { permits: 6 },
          rateLimiter: { limit: 1000, window: "1 second", burst: 1000 },
          retry: { maxAttempts: 6, backoff: { initial: "10 millis", jitter: 0 }, budget: false }
        })
        const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
        yield* Effect.forEach(Array.from({ length: 6 }), () => client.json(HttpClientRequest.get("/q"), Anything), {
          concurrency: "unbounded"
        })
        const stats = quota.stats()
        assert.strictEqual(stats.served, 6)
        assert.isAbove(stats.tooMany, 0)
        // nobody came back before the announced Retry-After had passed
        assert.strictEqual(stats.violations, 0)
        // every 429 counted, by provider and status
        const counted = yield* Metric.value(
          Metric.withAttributes(ProviderHttpClient.upstreamStatusTotal, { name: provider.name, status: "429" })
        )
        assert.strictEqual(counted.count, stats.tooMany)
      })),
    20_000
  )

  it.live("with the limiter set to the quota, no 429 at all", () =>
    run(Effect.gen(function*() {
      const quota = quotaServer(4)
      const server = yield* testServer({ "/q": quota.handler })
      const provider = yield* Provider.make({
        name: uniqueName("paced"),
        bulkhead: { permits: 8 },
        // the server's 4 per second, evenly spaced, with a 10 % margin so that arrival jitter on a
        // loaded machine cannot squeeze five arrivals into one second
        rateLimiter: { limit: 4, window: "1100 millis" }
      })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      yield* Effect.forEach(Array.from({ length: 8 }), () => client.json(HttpClientRequest.get("/q"), Anything), {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(quota.stats(), { violations: 0, tooMany: 0, served: 8 })
    })), 20_000)

  /**
   * A server whose first answer is a 429 with `Retry-After: 2` whose body starts and never ends;
   * later requests get `[]`. On the TestClock: the sockets are real, the budgets and the pause are
   * the test's.
   */
  const stalled429 = (maxAttempts: number) =>
    Effect.gen(function*() {
      const server = yield* testServer({
        "/q": (_req, res, counters) => {
          if (counters.requests > 1) return res.end("[]")
          res.statusCode = 429
          res.setHeader("retry-after", "2")
          res.write("slow down")
        }
      })
      const provider = yield* Provider.make({
        name: uniqueName("stalled-429"),
        bulkhead: { permits: 1 },
        rateLimiter: { limit: 100, window: "1 second" },
        attemptTimeout: "500 millis",
        retry: { maxAttempts, backoff: { initial: "10 millis", jitter: 0 }, budget: false }
      })
      const limiter = provider.rateLimiter
      assert(limiter !== undefined)
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const fiber = yield* Effect.forkChild(client.text(HttpClientRequest.get("/q")))
      // the pause is set at the headers, while the body is still being drained
      yield* waitUntilEffect(
        Effect.map(Effect.orDie(limiter.pauseRemaining), (left) => !Duration.isZero(left)),
        "the limiter is paused"
      )
      assert.strictEqual(Duration.toMillis(yield* limiter.pauseRemaining), 2_000)
      return { server, provider, fiber }
    })

  it.effect("a 429 whose body never ends pauses the provider at its headers; the retry waits out the pause", () =>
    run(Effect.gen(function*() {
      const { fiber, provider, server } = yield* stalled429(2)
      // the attempt budget ends mid-drain: the request is aborted, the retry sleeps in the limiter
      yield* TestClock.adjust("1900 millis")
      yield* TestClock.withLive(server.idle)
      assert.strictEqual(server.counters.aborted, 1)
      assert.strictEqual(server.counters.requests, 1)
      yield* TestClock.adjust("100 millis")
      assert.strictEqual(yield* Fiber.join(fiber), "[]")
      assert.strictEqual(server.counters.requests, 2)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))

  it.effect("a 429 whose body outlasts the attempt budget, on the last attempt, is a CallTimeout", () =>
    run(Effect.gen(function*() {
      const { fiber, provider, server } = yield* stalled429(1)
      yield* TestClock.adjust("500 millis")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error._tag, "CallTimeout")
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
      yield* TestClock.withLive(server.idle)
      assert.strictEqual(server.counters.aborted, 1)
    })))

  it.live("under 429s, a provider given withUpstreamErrors counts them and its verdict reads upstream", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/q": json({ error: "quota" }, 429, { "retry-after": "0" }) })
      class Own extends Schema.TaggedError<Own>()("Own", {}) {}
      const provider = yield* Provider.make(ProviderHttpClient.withUpstreamErrors({
        name: uniqueName("upstream"),
        bulkhead: { permits: 2 },
        rateLimiter: { limit: 1000, window: "1 second" },
        // the user's own predicate still counts
        isUpstreamError: (error) => error instanceof Own
      }))
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, retryAfter: { min: 0 } })
      for (let i = 0; i < 8; i++) {
        const error = yield* Effect.flip(client.json(HttpClientRequest.get("/q"), Anything))
        assert.strictEqual(error._tag, "UpstreamRateLimited")
      }
      yield* Effect.flip(provider.call(new Own()))
      const stats = yield* provider.stats
      assert.strictEqual(stats.upstreamErrors, 9)
      assert.strictEqual(stats.verdict.binding, "upstream")
      // a 404 is the request's fault, a 5xx the upstream's
      assert.isFalse(ProviderHttpClient.isUpstreamError(
        new ProviderHttpClient.UpstreamStatus({ provider: "p", status: 404, url: "/", body: "" })
      ))
      assert.isTrue(ProviderHttpClient.isUpstreamError(
        new ProviderHttpClient.UpstreamStatus({ provider: "p", status: 503, url: "/", body: "" })
      ))
    })))

  it("Retry-After is read as seconds or an HTTP date, and clamped", () => {
    const bounds = { fallbackMillis: 1_000, minMillis: 100, maxMillis: 60_000 }
    const now = Date.parse("2026-11-30T12:00:00Z")
    const ms = (header: string | undefined) =>
      Duration.toMillis(ProviderHttpClient.parseRetryAfter(header, now, bounds))
    assert.strictEqual(ms("3"), 3_000)
    assert.strictEqual(ms(" 7 "), 7_000)
    assert.strictEqual(ms("Mon, 30 Nov 2026 12:00:05 GMT"), 5_000)
    assert.strictEqual(ms(undefined), 1_000)
    assert.strictEqual(ms("0"), 100) // never hammer back at once
    assert.strictEqual(ms("Mon, 30 Nov 2026 11:00:00 GMT"), 100) // a date already past
    assert.strictEqual(ms("86400"), 60_000) // a day is not obeyed blindly
    assert.strictEqual(ms("-5"), 1_000)
    assert.strictEqual(ms("1.5"), 1_000)
    assert.strictEqual(ms("soon"), 1_000)
  })
})

describe("budgets and bodies", () => {
  it.live("a slow body gives CallTimeout and frees the connection", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(100, 64, 20) })
      const provider = yield* Provider.make({
        name: uniqueName("timeout"),
        bulkhead: { permits: 1 },
        attemptTimeout: "150 millis"
      })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const pool = yield* HttpPool.HttpPool
      const error = yield* Effect.flip(client.text(HttpClientRequest.get("/slow")))
      assert.strictEqual(error._tag, "CallTimeout")
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
      assert.strictEqual((yield* pool.stats)[client.origin]?.connected ?? 0, 0)
      yield* server.idle
      assert.strictEqual(server.counters.aborted, 1)
    })))

  it.live("a body that is not JSON, or not what the schema says, is a DecodeError", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({
        "/garbage": (_req, res) => res.end("{not json"),
        "/shape": json({ lat: "x" })
      })
      const provider = yield* Provider.make({ name: uniqueName("decode"), bulkhead: { permits: 2 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const garbage = yield* Effect.flip(client.json(HttpClientRequest.get("/garbage"), Anything))
      assert.strictEqual(garbage._tag, "DecodeError")
      assert.match(garbage.message, /could not be decoded: not JSON/)
      const shape = yield* Effect.flip(
        client.json(HttpClientRequest.get("/shape"), Schema.Struct({ lat: Schema.Number }))
      )
      assert.strictEqual(shape._tag, "DecodeError")
      assert.match(shape.message, /lat/)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))

  it.live("a body past maxBodySize is a BodyTooLarge, counted as it arrives, and the request is aborted", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/huge": slowBody(1_000, 1_024, 2) })
      const provider = yield* Provider.make({ name: uniqueName("huge"), bulkhead: { permits: 1 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, maxBodySize: 16 * 1024 })
      const error = yield* Effect.flip(client.text(HttpClientRequest.get("/huge")))
      assert.strictEqual(error._tag, "BodyTooLarge")
      if (error._tag !== "BodyTooLarge") return
      assert.strictEqual(error.limit, 16 * 1024)
      assert.isAbove(error.received, 16 * 1024)
      // it stopped near the limit instead of reading the whole megabyte
      assert.isBelow(error.received, 64 * 1024)
      yield* server.idle
      assert.strictEqual(server.counters.aborted, 1)
    })))

  it.live("a Content-Length past maxBodySize is refused before the body is read", () =>
    run(Effect.gen(function*() {
      const body = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => i))
      const server = yield* testServer({
        "/declared": (_req, res) => {
          res.setHeader("content-type", "application/json")
          res.setHeader("content-length", String(Buffer.byteLength(body)))
          res.end(body)
        },
        "/small": json([1, 2, 3])
      })
      const provider = yield* Provider.make({ name: uniqueName("declared"), bulkhead: { permits: 1 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, maxBodySize: 16 * 1024 })
      const error = yield* Effect.flip(client.text(HttpClientRequest.get("/declared")))
      assert.strictEqual(error._tag, "BodyTooLarge")
      if (error._tag === "BodyTooLarge") assert.strictEqual(error.received, Buffer.byteLength(body))
      // a declared body within the limit is read whole, as before
      assert.deepStrictEqual(yield* client.json(HttpClientRequest.get("/small"), Anything), [1, 2, 3])
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))

  it.live("a body refused for its Content-Length is aborted, not left to arrive", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({
        // 64 KiB declared, sent a KiB at a time
        "/declared-slow": (_req, res) => {
          res.setHeader("content-length", String(64 * 1024))
          let sent = 0
          const timer = setInterval(() => {
            if (res.destroyed || sent === 64) return clearInterval(timer)
            res.write(Buffer.alloc(1024))
            if (++sent === 64) res.end()
          }, 10)
        }
      })
      const provider = yield* Provider.make({ name: uniqueName("declared-slow"), bulkhead: { permits: 1 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, maxBodySize: 16 * 1024 })
      yield* refusedAndAborted(client, provider, server, "/declared-slow")
    })))

  it.live("a body refused for its Content-Length is refused at the headers, not after its first byte", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({
        // 64 KiB declared, headers sent, then not a byte of the body
        "/declared-stalled": (_req, res) => {
          res.setHeader("content-length", String(64 * 1024))
          res.flushHeaders()
        }
      })
      // the attempt budget only bounds the test: waiting for a byte would end in CallTimeout
      const provider = yield* Provider.make({
        name: uniqueName("declared-stalled"),
        bulkhead: { permits: 1 },
        attemptTimeout: "1 second"
      })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, maxBodySize: 16 * 1024 })
      yield* refusedAndAborted(client, provider, server, "/declared-stalled")
    })))

  it.live("5xx is retried through the provider, 4xx is not, and POST only when idempotent", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({
        "/500": json({ error: "boom" }, 500),
        "/404": json({ error: "nope" }, 404)
      })
      const provider = yield* Provider.make({
        name: uniqueName("status"),
        bulkhead: { permits: 2 },
        retry: { maxAttempts: 3, backoff: { initial: "5 millis", jitter: 0 }, budget: false }
      })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const e500 = yield* Effect.flip(client.text(HttpClientRequest.get("/500")))
      assert.strictEqual(e500._tag, "UpstreamStatus")
      assert.match(e500.message, /answered 500 to .*\/500: \{"error":"boom"\}/)
      assert.strictEqual(server.counters.byStatus.get(500), 3)
      const e404 = yield* Effect.flip(client.text(HttpClientRequest.get("/404")))
      assert.strictEqual(e404._tag, "UpstreamStatus")
      assert.strictEqual(server.counters.byStatus.get(404), 1)
      yield* Effect.flip(client.text(HttpClientRequest.post("/500")))
      assert.strictEqual(server.counters.byStatus.get(500), 4)
      yield* Effect.flip(client.text(HttpClientRequest.post("/500"), { idempotent: true }))
      assert.strictEqual(server.counters.byStatus.get(500), 7)
    })))

  it.live("a request to another origin fails with an error naming both, and is never sent", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({})
      const provider = yield* Provider.make({ name: uniqueName("origin"), bulkhead: { permits: 1 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const error = yield* Effect.flip(client.text(HttpClientRequest.get("http://example.invalid/x")))
      assert.strictEqual(error._tag, "HttpClientError")
      assert.strictEqual((error as { readonly reason: { readonly _tag: string } }).reason._tag, "InvalidUrlError")
      assert.include(error.message, server.url)
      assert.include(error.message, "http://example.invalid")
      assert.strictEqual(server.counters.requests, 0)
    })))

  it.live("sends a real User-Agent and no trace headers", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/echo": (req, res) => res.end(JSON.stringify(req.headers)) })
      const provider = yield* Provider.make({ name: uniqueName("headers"), bulkhead: { permits: 1 } })
      const client = yield* ProviderHttpClient.make(provider, {
        baseUrl: server.url,
        userAgent: "geocoder-test/1.0 (ops@example.com)"
      })
      // reserved on the origin before its pool is made by the first request
      const propagating = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, tracePropagation: true })
      const headers = yield* client.json(
        HttpClientRequest.get("/echo"),
        Schema.Record(Schema.String, Schema.String)
      ).pipe(Effect.withSpan("caller"))
      assert.strictEqual(headers["user-agent"], "geocoder-test/1.0 (ops@example.com)")
      assert.isUndefined(headers["traceparent"])
      assert.isUndefined(headers["b3"])
      // through execute too, and the caller's own setting is as it was after each request
      const Echo = Schema.Record(Schema.String, Schema.String)
      const viaExecute = yield* client.execute(HttpClientRequest.get("/echo"), (response) => response.json).pipe(
        Effect.withSpan("caller")
      )
      assert.isUndefined((viaExecute as Record<string, string>)["traceparent"])
      assert.isTrue(yield* HttpClient.TracerPropagationEnabled)
      // opted in: the headers go, whatever the caller's setting, which stays as it was
      const sent = yield* propagating.json(HttpClientRequest.get("/echo"), Echo).pipe(
        Effect.withSpan("caller"),
        Effect.provideService(HttpClient.TracerPropagationEnabled, false)
      )
      assert.isString(sent["traceparent"])
      assert.isTrue(yield* HttpClient.TracerPropagationEnabled)
    })))
})

describe("streams", () => {
  it.live("a stream holds its permit until it ends", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(5, 64, 10) })
      const provider = yield* Provider.make({ name: uniqueName("stream"), bulkhead: { permits: 1 } })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      const sizes = yield* Effect.forEach(
        Array.from({ length: 3 }),
        () =>
          client.stream(HttpClientRequest.get("/slow")).pipe(
            Stream.runFold(() => 0, (n: number, chunk) => n + chunk.length)
          ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(sizes, [322, 322, 322])
      assert.strictEqual(server.counters.peak, 1)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))

  /** Sends a first chunk, then resets the connection (a TCP RST) in the middle of the body. */
  const resetMidStream: Parameters<typeof testServer>[0][string] = (req, res) => {
    res.setHeader("content-type", "application/octet-stream")
    res.write(Buffer.alloc(64))
    setTimeout(() => req.socket.resetAndDestroy(), 20)
  }

  /**
   * Reads the stream of a server that resets it after its first chunk, through a provider of
   * `settings`, to its failure: what the consumer got, and the error.
   */
  const readReset = (settings: Omit<Provider.Options, "name">) =>
    Effect.gen(function*() {
      const server = yield* testServer({ "/reset": resetMidStream })
      const provider = yield* Provider.make({ ...settings, name: uniqueName("stream-reset") })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      let delivered = 0
      const error = yield* client.stream(HttpClientRequest.get("/reset")).pipe(
        Stream.runForEach((chunk) => Effect.sync(() => delivered += chunk.length)),
        Effect.flip
      )
      // the consumer saw the first chunk once, and the failure that ended it
      assert.strictEqual(delivered, 64)
      assert.strictEqual(error._tag, "HttpClientError")
      assert.strictEqual((error as { readonly reason: { readonly _tag: string } }).reason._tag, "DecodeError")
      return { server, stats: yield* provider.stats }
    })

  it.live("a stream whose connection is reset after its first chunk is a failed call, for the breaker too", () =>
    run(Effect.gen(function*() {
      const { stats } = yield* readReset({
        bulkhead: { permits: 1 },
        circuitBreaker: { consecutiveFailures: 1, openFor: "1 minute" }
      })
      assert.include(stats.outcomes, { success: 0, call_error: 1 })
      assert.strictEqual(stats.circuit, "open")
      assert.include(stats.bulkhead, { inFlight: 0 })
    })))

  it.live("a stream broken after its first chunk is never sent again, even by a predicate that retries all", () =>
    run(Effect.gen(function*() {
      const { server, stats } = yield* readReset({
        bulkhead: { permits: 1 },
        retry: { maxAttempts: 3, backoff: { initial: "1 millis", jitter: 0 }, isRetryable: () => true, budget: false }
      })
      assert.strictEqual(server.counters.requests, 1)
      assert.include(stats.outcomes, { success: 0, call_error: 1 })
    })))

  it.live("a stream given an attempt budget that ends it mid-body is a CallTimeout, never sent again", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/slow": slowBody(40, 64, 25) })
      const provider = yield* Provider.make({
        name: uniqueName("stream-budget"),
        bulkhead: { permits: 1 },
        retry: { maxAttempts: 3, backoff: { initial: "1 millis", jitter: 0 }, budget: false }
      })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url })
      let delivered = 0
      const error = yield* client.stream(HttpClientRequest.get("/slow"), { attemptTimeout: "150 millis" }).pipe(
        Stream.runForEach((chunk) => Effect.sync(() => delivered += chunk.length)),
        Effect.flip
      )
      assert.strictEqual(error._tag, "CallTimeout")
      assert.isAbove(delivered, 0)
      // one request: a retry would have delivered its first chunks a second time
      assert.strictEqual(server.counters.requests, 1)
      assert.include((yield* provider.stats).outcomes, { call_timeout: 1 })
    })))

  it.live("a stalled stream fails with StreamIdleTimeout and is not retried after its first chunk", () =>
    run(Effect.gen(function*() {
      const server = yield* testServer({ "/stall": slowBody(3, 64, 5_000) })
      const provider = yield* Provider.make({
        name: uniqueName("stall"),
        bulkhead: { permits: 1 },
        retry: { maxAttempts: 3, backoff: { initial: "5 millis" }, budget: false }
      })
      const client = yield* ProviderHttpClient.make(provider, { baseUrl: server.url, streamIdleTimeout: "100 millis" })
      const result = yield* client.stream(HttpClientRequest.get("/stall")).pipe(Stream.runCollect, Effect.result)
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) assert.strictEqual((result.failure as { _tag: string })._tag, "StreamIdleTimeout")
      assert.strictEqual(server.counters.requests, 1)
      assert.include(yield* provider.bulkhead.stats, { inFlight: 0 })
    })))
})
