/**
 * `pnpm bench http`: requests per second with 64 in flight against a loopback server (in its own
 * process) answering at once and after 20 ms — the sluice provider client against the plain
 * @effect/platform client on the same undici pool, and against raw undici.
 *
 * Each variant runs in a process of its own: warm-up, then ROUNDS timed rounds; the table shows the
 * median. "no spans" variants switch off Effect's HTTP client spans (`withTracerDisabledWhen`),
 * which is the first thing to try when the client's own overhead dominates; "tracing off" runs
 * the requests with `Effect.withTracerEnabled(false)`, which also drops sluice's `Provider.call`
 * span; "forked" runs each plain request in `Effect.fork` and `Fiber.join`; "own fiber" runs it on a
 * fiber started with `Runtime.runFork` and awaited through an observer, as sluice's provider started
 * its call's fiber before its rebuild (no join: the refs are not copied back); "in a provider" runs
 * it through `Provider.call` (bulkhead of 64, span `Provider.call`) without sluice's HTTP client
 * around it; "on the caller's scheduler" is sluice's client with `scheduler: "caller"`.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, Fiber, Layer, Runtime } from "effect"
import { spawn, spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

const IN_FLIGHT = 64
const ROUNDS = 5
const REQUESTS: Record<number, number> = { 0: 10_000, 20: 3_000 }
const LATENCIES = [0, 20] as const

type Variant = (url: string, latency: number, requests: number) => Promise<() => Promise<number>>

/** Runs `requests` requests with IN_FLIGHT workers; returns requests per second. */
const perSecond = async (requests: number, one: () => Promise<unknown>): Promise<number> => {
  let next = 0
  const start = performance.now()
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next++ < requests) await one()
  }))
  return requests / ((performance.now() - start) / 1000)
}

const effectPerSecond = (requests: number, one: Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    const start = performance.now()
    yield* Effect.forEach(Array.from({ length: requests }), () => one, { concurrency: IN_FLIGHT, discard: true })
    return requests / ((performance.now() - start) / 1000)
  })

/** Builds a runtime for `layer`, returns a round that runs `effect` in it. */
const inRuntime = async <R>(
  layer: Layer.Layer<R, unknown>,
  round: Effect.Effect<number, unknown, R>
): Promise<() => Promise<number>> => {
  const { ManagedRuntime } = await import("effect")
  const runtime = ManagedRuntime.make(layer)
  await runtime.runPromise(Effect.void)
  return () => runtime.runPromise(round)
}

/** What tracing a variant keeps: everything, all but the HTTP client's spans, nothing. */
type Tracing = "spans" | "no spans" | "tracing off"

const traced = (tracing: Tracing) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  tracing === "tracing off" ? Effect.withTracerEnabled(effect, false) : effect

const platformLayer = (spans: boolean) => {
  const dispatcher = Layer.scoped(
    NodeHttpClient.Dispatcher,
    Effect.acquireRelease(
      Effect.sync(() => new Undici.Agent({ connections: IN_FLIGHT, pipelining: 1 })),
      (agent) => Effect.promise(() => agent.destroy())
    )
  )
  const client = NodeHttpClient.layerUndiciWithoutDispatcher.pipe(Layer.provide(dispatcher))
  return spans ? client : Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, HttpClient.withTracerDisabledWhen(() => true))
  ).pipe(Layer.provide(client))
}

/** One request of the plain client, its body read. */
const plainRequest = (client: HttpClient.HttpClient, url: string, latency: number) =>
  Effect.flatMap(client.execute(HttpClientRequest.get(`${url}/r?delay=${latency}`)), (r) => r.text)

const platformVariant = (tracing: Tracing): Variant => (url, latency, requests) =>
  inRuntime(
    platformLayer(tracing !== "no spans"),
    Effect.flatMap(HttpClient.HttpClient, (client) => {
      const one = plainRequest(client, url, latency)
      return effectPerSecond(requests, traced(tracing)(one))
    })
  )

class Bench extends Provider.Tag("bench")<Bench>() {}
class BenchHttp extends ProviderHttpClient.Tag("bench")<BenchHttp>() {}

const sluiceVariant = (
  tracing: Tracing,
  scheduler: ProviderHttpClient.Options["scheduler"] = "check-phase"
): Variant =>
(url, latency, requests) => {
  const pool = tracing !== "no spans" ? HttpPool.layerWithUnboundedHttpClient() : Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, HttpClient.withTracerDisabledWhen(() => true))
  ).pipe(Layer.provideMerge(HttpPool.layerWithUnboundedHttpClient()))
  const layer = BenchHttp.layer(Bench, { baseUrl: url, scheduler }).pipe(
    Layer.provide(Bench.layer({ bulkhead: { permits: IN_FLIGHT } })),
    Layer.provide(pool)
  )
  return inRuntime(
    layer,
    Effect.flatMap(
      BenchHttp,
      (http) => effectPerSecond(requests, traced(tracing)(http.text(HttpClientRequest.get(`/r?delay=${latency}`))))
    )
  )
}

const variants: Record<string, Variant> = {
  "raw undici": async (url, latency, requests) => {
    const pool = new Undici.Pool(url, { connections: IN_FLIGHT, pipelining: 1 })
    return () =>
      perSecond(requests, async () => {
        const res = await pool.request({ method: "GET", path: `/r?delay=${latency}` })
        await res.body.text()
      })
  },
  "@effect/platform": platformVariant("spans"),
  "@effect/platform, no spans": platformVariant("no spans"),
  "@effect/platform, tracing off": platformVariant("tracing off"),
  // each call on a fiber of its own, joined: the join copies the child's refs back, which costs
  "@effect/platform, forked": (url, latency, requests) =>
    inRuntime(
      platformLayer(true),
      Effect.flatMap(HttpClient.HttpClient, (client) => {
        const one = plainRequest(client, url, latency)
        return effectPerSecond(requests, Effect.flatMap(Effect.fork(one), Fiber.join))
      })
    ),
  // the same without the join, on a fiber started as the provider starts its call's: the fiber alone
  "@effect/platform, own fiber": (url, latency, requests) =>
    inRuntime(
      platformLayer(true),
      Effect.flatMap(HttpClient.HttpClient, (client) => {
        const one = plainRequest(client, url, latency)
        const own = Effect.flatMap(Effect.runtime<never>(), (runtime) =>
          Effect.async<string, unknown>((resume) => {
            Runtime.runFork(runtime, one).addObserver(resume)
          }))
        return effectPerSecond(requests, own)
      })
    ),
  // the provider around the plain client: what the provider costs, sluice's HTTP client apart
  "@effect/platform, in a provider": (url, latency, requests) =>
    inRuntime(
      Layer.merge(platformLayer(true), Bench.layer({ bulkhead: { permits: IN_FLIGHT } })),
      Effect.flatMap(Effect.all([HttpClient.HttpClient, Bench]), ([client, provider]) => {
        const one = plainRequest(client, url, latency)
        return effectPerSecond(requests, provider.call(one))
      })
    ),
  "sluice": sluiceVariant("spans"),
  "sluice, no spans": sluiceVariant("no spans"),
  "sluice, tracing off": sluiceVariant("tracing off"),
  "sluice, on the caller's scheduler": sluiceVariant("spans", "caller")
}

const runChild = async (name: string, url: string, latency: number): Promise<void> => {
  const variant = variants[name]
  if (variant === undefined) throw new Error(`unknown variant ${name}`)
  const requests = REQUESTS[latency] ?? 1_000
  const round = await variant(url, latency, requests)
  await round() // warm-up: connections opened, code optimised
  const rates: Array<number> = []
  for (let i = 0; i < ROUNDS; i++) rates.push(await round())
  process.stdout.write(`${JSON.stringify({ perSecond: median(rates) })}\n`)
  process.exit(0)
}

const measure = (name: string, url: string, latency: number): number => {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--child", name, url, String(latency)],
    { encoding: "utf8", env: process.env, timeout: 300_000 }
  )
  if (child.status !== 0) throw new Error(`${name} at ${latency} ms failed:\n${child.stderr}`)
  const { perSecond } = JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as { perSecond: number }
  process.stderr.write(`  ${name} at ${latency} ms: ${perSecond.toFixed(0)}/s\n`)
  return perSecond
}

const main = async (): Promise<void> => {
  const server = spawn(process.execPath, [
    join(dirname(fileURLToPath(import.meta.url)), "..", "src", "lib", "httpServer.mjs")
  ], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  const url = await new Promise<string>((resolve, reject) => {
    server.stdout.once("data", (data: Buffer) => resolve(data.toString().trim()))
    server.once("exit", (code) => reject(new Error(`server exited with ${code}`)))
  })
  try {
    const header = [
      "client",
      ...LATENCIES.flatMap((l) => [`${l} ms: req/s`, `${l} ms: vs platform`, `${l} ms: vs undici`])
    ]
    const results = Object.keys(variants).map((name) => ({
      name,
      rates: LATENCIES.map((latency) => measure(name, url, latency))
    }))
    const rateOf = (name: string, i: number) => results.find((r) => r.name === name)?.rates[i] ?? NaN
    const rows = results.map(({ name, rates }) => [
      name,
      ...rates.flatMap((rate, i) => [
        rate.toFixed(0),
        formatRatio(rate / rateOf("@effect/platform", i)),
        formatRatio(rate / rateOf("raw undici", i))
      ])
    ])
    const targets = LATENCIES.map((latency, i) =>
      `at ${latency} ms: sluice ${formatRatio(rateOf("sluice", i) / rateOf("@effect/platform", i))} of the plain ` +
      `@effect/platform client (target ≥ 0.90x), ${
        formatRatio(rateOf("sluice", i) / rateOf("raw undici", i))
      } of raw undici`
    )
    console.log(`\n${textTable(header, rows)}\n${targets.map((t) => `  ${t}`).join("\n")}`)
    writeSection(
      "HTTP client",
      [
        `Measured by \`pnpm bench http\` on ${machineLine()}.`,
        "",
        `${IN_FLIGHT} requests in flight against a loopback server in its own process, answering a 90-byte JSON body ` +
        `at once and after 20 ms (the ceiling there is ${IN_FLIGHT} / 20 ms = ${IN_FLIGHT * 50}/s). ` +
        `${REQUESTS[0].toLocaleString("en")} and ${REQUESTS[20].toLocaleString("en")} requests a round, median of ` +
        `${ROUNDS} rounds after a warm-up, each client in its own process, every client on an undici pool of ${IN_FLIGHT} ` +
        "connections. sluice's client runs every request through a provider (bulkhead of 64, no limiter) and reads the " +
        "body inside the permit.",
        "",
        markdownTable(header, rows),
        "",
        ...targets.map((t) => `- ${t}`),
        "- \"no spans\": `HttpClient.withTracerDisabledWhen(() => true)` on the underlying client, which switches off " +
        "the span @effect/platform records for every request; \"tracing off\": `Effect.withTracerEnabled(false)` " +
        "around each request, which drops every span, sluice's `Provider.call` included; \"forked\": each plain " +
        "request runs in `Effect.fork` and `Fiber.join`; \"own fiber\": on a fiber started with `Runtime.runFork` " +
        "and awaited through an observer, as sluice's provider started each call's fiber before its rebuild on " +
        "Effect's public API (it now forks a child of the caller), without the join's copy of the refs; \"in a " +
        "provider\": through `Provider.call` (bulkhead of 64, its span), without sluice's HTTP client; \"sluice\" " +
        "runs each call from the event loop's check phase (`scheduler: \"check-phase\"`, the default), \"on the " +
        "caller's scheduler\" with `scheduler: \"caller\"` (Effect's default scheduler here)."
      ].join("\n")
    )
  } finally {
    server.stdin.end()
  }
}

if (process.argv[2] === "--child") {
  await runChild(process.argv[3], process.argv[4], Number(process.argv[5]))
} else {
  await main()
}
