// @sluice/http: a loopback server; the middleware holds its one permit to each body's last byte
// (the server never sees two at once), a 429 forever ends in UpstreamRateLimited whose String
// starts with its tag, and a refusal given through HttpClient.HttpClient is lifted back.
import { HttpPool, Middleware, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Layer } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { check } from "../check.js"

interface Upstream {
  readonly url: string
  readonly seen: { active: number; peak: number; requests: number }
}

/** `/slow` writes its body over 60 ms; `/busy` answers 429 with `Retry-After: 0`. */
const upstream = Effect.acquireRelease(
  Effect.callback<{ readonly server: http.Server; readonly upstream: Upstream }>((resume) => {
    const seen = { active: 0, peak: 0, requests: 0 }
    const server = http.createServer((req, res) => {
      seen.requests++
      seen.active++
      seen.peak = Math.max(seen.peak, seen.active)
      res.on("close", () => seen.active--)
      if (req.url === "/busy") {
        res.writeHead(429, { "retry-after": "0", "content-type": "application/json" })
        res.end(`{"error":"slow down"}`)
        return
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.write("[1,")
      setTimeout(() => res.write("2,"), 30)
      setTimeout(() => res.end("3]"), 60)
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resume(Effect.succeed({ server, upstream: { url: `http://127.0.0.1:${port}`, seen } }))
    })
  }),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ upstream }) => upstream))

const heldToTheLastByte = Effect.gen(function*() {
  const server = yield* upstream
  const geo = yield* Provider.make({ name: "geo", bulkhead: { permits: 1 } })
  const client = yield* Middleware.make(geo, { baseUrl: server.url })
  const bodies = yield* Effect.forEach(
    [1, 2, 3],
    () => Effect.flatMap(client.get("/slow"), (response) => response.json),
    { concurrency: "unbounded" }
  )
  yield* check(JSON.stringify(bodies) === "[[1,2,3],[1,2,3],[1,2,3]]", "each body reaches the caller whole", bodies)
  yield* check(server.seen.peak === 1, "the upstream never sees more than the bulkhead's one permit", server.seen)
}).pipe(Effect.scoped, Effect.provide(HttpPool.layer()))

const rateLimited = Effect.gen(function*() {
  const server = yield* upstream
  const llm = yield* Provider.make({
    name: "llm",
    bulkhead: { permits: 1 },
    rateLimiter: { limit: 100, window: "1 minute" },
    retry: { maxAttempts: 2, backoff: { initial: "1 millis", jitter: 0 }, budget: false }
  })
  const client = yield* ProviderHttpClient.make(llm, { baseUrl: server.url, retryAfter: { min: 0 } })
  const refused = yield* Effect.flip(client.text(HttpClientRequest.get("/busy")))
  yield* check(refused._tag === "UpstreamRateLimited", "a 429 after the last attempt is UpstreamRateLimited", refused)
  yield* check(
    String(refused).startsWith("UpstreamRateLimited: "),
    "String(error) starts with its tag",
    String(refused)
  )
  yield* check(server.seen.requests === 2, "the provider stops at its attempts", server.seen)
}).pipe(
  Effect.scoped,
  Effect.provide(HttpPool.layerWithUnboundedHttpClient()),
  Effect.provide(RateLimiterStore.layerMemory)
)

class Api extends Provider.Tag("api")<Api>() {}

const lifted = Effect.gen(function*() {
  const server = yield* upstream
  // what a library written against HttpClient.HttpClient does
  const library = Effect.flatMap(
    HttpClient.HttpClient,
    (client) => Effect.flatMap(client.get(`${server.url}/slow`), (response) => response.text)
  )
  const Live = Middleware.layer(Api, { baseUrl: server.url }).pipe(
    Layer.provide(Api.layer({ bulkhead: { permits: 1 }, rateLimiter: { limit: 1, window: "1 minute", maxWait: 0 } })),
    Layer.provide(RateLimiterStore.layerMemory)
  )
  const outcomes = yield* Effect.forEach([1, 2], () =>
    library.pipe(
      Middleware.liftRefusals,
      Effect.catchTag("RateLimitExceeded", (refusal) => Effect.succeed(`refused: ${refusal._tag}`))
    )).pipe(Effect.provide(Live))
  yield* check(
    JSON.stringify(outcomes) === JSON.stringify(["[1,2,3]", "refused: RateLimitExceeded"]),
    "the second call is refused by the limiter, the refusal lifted out of the HttpClientError",
    outcomes
  )
}).pipe(Effect.scoped, Effect.provide(HttpPool.layer()))

export const checks = Effect.andThen(heldToTheLastByte, Effect.andThen(rateLimited, lifted))
