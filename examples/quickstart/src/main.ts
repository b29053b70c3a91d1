// sluice in one file: a provider (a bulkhead, a rate limiter, an attempt timeout, retries) and its
// HTTP client, against a stand-in upstream on loopback. Offline; about ten seconds, most of them
// loading the TypeScript through tsx.
//   bash scripts/pnpm.sh quickstart        (or, from an installed app: tsc, then node)
import { HttpClientRequest } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Layer, Schema } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

// The stand-in: answers in 20 ms with the city's latitude, takes 2 s for "Atlantis" (which no
// gazetteer has: 404 if it ever answers), and answers its third request with a 429 and
// Retry-After, as a quota-limited API does.
const latitudes: Record<string, number> = { Lyon: 45.76, Porto: 41.15, Turku: 60.45, Gdańsk: 54.35, Bergen: 60.39 }
const upstream = Effect.acquireRelease(
  Effect.async<Http.Server>((resume) => {
    let requests = 0
    const server = Http.createServer((req, res) => {
      const q = new URL(req.url ?? "/", "http://localhost").searchParams.get("q") ?? ""
      if (++requests === 3) return res.writeHead(429, { "retry-after": "1" }).end()
      const lat = latitudes[q]
      const answer = () =>
        lat === undefined
          ? res.writeHead(404).end()
          : res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ q, lat }))
      const timer = setTimeout(answer, q === "Atlantis" ? 2000 : 20)
      res.on("close", () => clearTimeout(timer))
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.sync(() => server.close().closeAllConnections())
)

// One tag per upstream: the provider, and the HTTP client that runs every request through it.
class Geo extends Provider.Tag("geo")<Geo>() {}
class GeoHttp extends ProviderHttpClient.Tag("geo")<GeoHttp>() {}

const GeoLive = (baseUrl: string) =>
  GeoHttp.layer(Geo, { baseUrl, userAgent: "sluice-quickstart/1.0 (you@example.com)" }).pipe(
    // provideMerge: the app reads the stats of the very provider the client uses
    // withUpstreamErrors: the client's 429s and 5xx count in the provider's verdict
    Layer.provideMerge(Geo.layer(ProviderHttpClient.withUpstreamErrors({
      bulkhead: { permits: 4, maxWaiting: 100, maxWait: "5 seconds" }, // in flight at once, and the queue's budget
      rateLimiter: { limit: 10, window: "1 second", maxWait: "10 seconds" }, // starts per second
      attemptTimeout: "500 millis", // one attempt: connect, headers and body
      retry: { maxAttempts: 2 } // timeouts and 429s are retried, after the Retry-After pause
    }))),
    Layer.provide(HttpPool.layerWithUnboundedHttpClient()), // one pool sized from the bulkheads; GeoHttp bounds its client
    Layer.provide(RateLimiterStore.layerMemory) // or RedisRateLimiterStore.layer(...) to share the quota
  )

const Place = Schema.Struct({ q: Schema.String, lat: Schema.Number })

// Every refusal is its own typed error: queued too long is not the same as too slow.
const geocode = (q: string) =>
  Effect.flatMap(GeoHttp, (http) => http.json(HttpClientRequest.get("/search", { urlParams: { q } }), Place)).pipe(
    Effect.map((place) => `${place.q}: lat ${place.lat}`),
    Effect.catchTags({
      PermitWaitTimeout: (e) => Effect.succeed(`${q}: queued too long (${e.message})`),
      RateLimitExceeded: (e) => Effect.succeed(`${q}: over the quota (${e.message})`),
      CallTimeout: (e) => Effect.succeed(`${q}: too slow (${e.message})`)
    })
  )

const main = Effect.gen(function*() {
  const server = yield* upstream
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  yield* Effect.gen(function*() {
    const places = ["Lyon", "Porto", "Turku", "Atlantis", "Gdańsk", "Bergen"]
    const lines = yield* Effect.forEach(places, geocode, { concurrency: "unbounded" })
    for (const line of lines) console.log(line)
    const stats = yield* Effect.flatMap(Geo, (geo) => geo.stats)
    console.log(`${stats.calls} calls, ${stats.attempts} attempts, ${stats.upstreamErrors} upstream pushback`)
    console.log(`verdict: ${stats.verdict.binding}: ${stats.verdict.reason}`)
  }).pipe(Effect.provide(GeoLive(baseUrl)))
}).pipe(Effect.scoped)

NodeRuntime.runMain(main)
