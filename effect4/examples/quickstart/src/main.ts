// sluice 2.x in one file: a bulkhead per upstream, each with its own bound and queue budget, its
// typed refusals and its stats, against a stand-in upstream on loopback. Offline.
//   from effect4/: bash ../scripts/pnpm.sh -C examples/quickstart start   (or, installed: tsc, then node)
import { Bulkhead } from "@sluice/bulkhead"
import { Console, Data, Effect, Layer } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

// The stand-in: /geo answers a city's latitude in 50 ms; /weather its forecast in 50 ms, but takes
// 2 s for "Atlantis".
const latitudes: Record<string, number> = { Lyon: 45.76, Porto: 41.15, Turku: 60.45, Gdańsk: 54.35, Bergen: 60.39 }
const upstream = Effect.acquireRelease(
  Effect.callback<Http.Server>((resume) => {
    const server = Http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost")
      const q = url.searchParams.get("q") ?? ""
      const answer = url.pathname === "/geo" ? `lat ${latitudes[q] ?? "unknown"}` : "forecast: fair"
      const timer = setTimeout(
        () => res.writeHead(200, { "content-type": "text/plain" }).end(answer),
        url.pathname === "/weather" && q === "Atlantis" ? 2000 : 50
      )
      res.on("close", () => clearTimeout(timer))
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.sync(() => server.close().closeAllConnections())
)

// One bulkhead per upstream: a slow or saturated one never takes the other's capacity.
class Geo extends Bulkhead.Tag("geo")<Geo>() {}
class Weather extends Bulkhead.Tag("weather")<Weather>() {}

const BulkheadsLive = Layer.mergeAll(
  Geo.layer({ permits: 2, maxWaiting: 2 }), // 2 in flight, 2 queued, the next refused at once
  Weather.layer({ permits: 1, maxWait: "300 millis" }) // 1 in flight, a caller waits 300 ms at most
)

class UpstreamError extends Data.TaggedError("UpstreamError")<{ readonly url: string; readonly cause: unknown }> {}

// The call: interrupting it (a refusal elsewhere, a timeout around it) aborts the request.
const get = (url: string) =>
  Effect.tryPromise({
    try: (signal) => fetch(url, { signal }).then((response) => response.text()),
    catch: (cause) => new UpstreamError({ url, cause })
  })

// Every refusal is its own typed error: a full queue is not the same as a queue too slow.
const lookup = (bulkhead: Bulkhead.Bulkhead, url: string, q: string) =>
  bulkhead.run(get(`${url}?q=${encodeURIComponent(q)}`)).pipe(
    Effect.map((answer) => `${q}: ${answer}`),
    Effect.catchTags({
      BulkheadFull: (e) => Effect.succeed(`${q}: refused (${e.message})`),
      PermitWaitTimeout: (e) => Effect.succeed(`${q}: queued too long (${e.message})`),
      UpstreamError: (e) => Effect.succeed(`${q}: upstream failed (${String(e.cause)})`)
    })
  )

const main = Effect.gen(function*() {
  const server = yield* upstream
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const geo = yield* Geo
  const weather = yield* Weather
  // five lookups at once: two run, two queue, the fifth finds the queue full
  const places = yield* Effect.forEach(
    ["Lyon", "Porto", "Turku", "Gdańsk", "Bergen"],
    (q) => lookup(geo, `${baseUrl}/geo`, q),
    { concurrency: "unbounded" }
  )
  // Atlantis holds the weather bulkhead's one permit for 2 s; Lyon gives up after 300 ms
  const forecasts = yield* Effect.forEach(
    ["Atlantis", "Lyon"],
    (q) => lookup(weather, `${baseUrl}/weather`, q),
    { concurrency: "unbounded" }
  )
  for (const line of [...places, ...forecasts]) yield* Console.log(line)
  for (const stats of [yield* geo.stats, yield* weather.stats]) {
    yield* Console.log(`${stats.name}: ${stats.permits} permits, ${stats.inFlight} in flight, ${stats.waiting} waiting`)
  }
}).pipe(Effect.scoped, Effect.provide(BulkheadsLive))

// a failure rejects: node prints it and exits 1
Effect.runPromise(main)
