/**
 * `pnpm bench http`: requests per second with 64 in flight against a loopback server (in its own
 * process) answering at once and after 20 ms — the sluice middleware and provider client against
 * the plain @effect/platform client on the same undici pool, and against raw undici.
 *
 * Each variant runs in a process of its own: warm-up, then ROUNDS timed rounds; the table shows the
 * median. "no spans" switches off Effect's HTTP client spans (`withTracerDisabledWhen`); "in a
 * provider" runs the plain request through `Provider.call` (bulkhead of 64) without sluice's HTTP
 * layer; "middleware" is `Middleware.layer`'s HttpClient, "sluice" `ProviderHttpClient.text`, each
 * on the check phase (their default) and on the caller's scheduler. `--interleaved URL` runs the
 * plain client, the middleware and ProviderHttpClient in one process, a round of each in turn.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Undici from "@effect/platform-node/Undici"
import { HttpPool, Middleware, ProviderHttpClient } from "@sluice/http"
import { Provider } from "@sluice/provider"
import { Effect, Layer } from "effect"
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

/** The middleware's `HttpClient` service (`Middleware.layer`) over the pool: the plain client's code, bounded. */
const middlewareVariant = (scheduler: Middleware.Options["scheduler"]): Variant => (url, latency, requests) =>
  inRuntime(
    Middleware.layer(Bench, { baseUrl: url, scheduler }).pipe(
      Layer.provide(Bench.layer({ bulkhead: { permits: IN_FLIGHT } })),
      Layer.provide(HttpPool.layer())
    ),
    Effect.flatMap(HttpClient.HttpClient, (client) => effectPerSecond(requests, plainRequest(client, url, latency)))
  )

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
  // the provider around the plain client: what the provider costs, sluice's HTTP client apart
  "@effect/platform, in a provider": (url, latency, requests) =>
    inRuntime(
      Layer.merge(platformLayer(true), Bench.layer({ bulkhead: { permits: IN_FLIGHT } })),
      Effect.flatMap(Effect.all([HttpClient.HttpClient, Bench]), ([client, provider]) => {
        const one = plainRequest(client, url, latency)
        return effectPerSecond(requests, provider.call(one))
      })
    ),
  "middleware": middlewareVariant("check-phase"),
  "middleware, on the caller's scheduler": middlewareVariant("caller"),
  "sluice": sluiceVariant("spans"),
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
      `at ${latency} ms: the middleware ${
        formatRatio(rateOf("middleware", i) / rateOf("@effect/platform", i))
      } of the plain @effect/platform client (target ≥ ${latency === 0 ? "0.75" : "0.85"}x), ` +
      `ProviderHttpClient (\`sluice\`) ${formatRatio(rateOf("sluice", i) / rateOf("@effect/platform", i))}`
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
        "connections. sluice's clients run every request through a provider (bulkhead of 64, no limiter) and read the " +
        "body inside the permit: \"middleware\" is `Middleware.layer`'s `HttpClient` (the plain client's code, " +
        "bounded; its response handed on from memory), \"sluice\" is `ProviderHttpClient.text`.",
        "",
        markdownTable(header, rows),
        "",
        ...targets.map((t) => `- ${t}`),
        "- \"no spans\": `HttpClient.withTracerDisabledWhen(() => true)` on the underlying client, which switches off " +
        "the span @effect/platform records for every request; \"in a provider\": through `Provider.call` (bulkhead " +
        "of 64, its span), without sluice's HTTP client; \"sluice\" runs each call from the event loop's check " +
        "phase (`scheduler: \"check-phase\"`, its default), \"on the caller's scheduler\" with " +
        "`scheduler: \"caller\"`; so does the middleware (check phase by default; under the TestClock both stay on " +
        "the caller's)."
      ].join("\n")
    )
  } finally {
    server.stdin.end()
  }
}

/**
 * On a shared machine the load drifts between one variant's process and the next: `--interleaved`
 * runs the plain client, the middleware and `ProviderHttpClient` in one process, a round of each in
 * turn, and prints the median of each round's ratio to the plain client's round beside it.
 */
const interleaved = async (url: string): Promise<void> => {
  const names = ["@effect/platform", "middleware", "middleware, on the caller's scheduler", "sluice"] as const
  for (const latency of LATENCIES) {
    // rounds short enough that no pool sits idle past the server's keep-alive (5 s) while the others run
    const requests = Math.round((REQUESTS[latency] ?? 1_000) / 10)
    const rounds = await Promise.all(names.map((name) => variants[name]!(url, latency, requests)))
    for (const round of rounds) await round() // warm-up
    const ratios: Array<Array<number>> = names.map(() => [])
    for (let i = 0; i < 4 * ROUNDS; i++) {
      const rates: Array<number> = []
      for (const round of rounds) rates.push(await round())
      rates.forEach((rate, j) => ratios[j]!.push(rate / rates[0]!))
    }
    const line = names.slice(1).map((name, j) => `${name} ${formatRatio(median(ratios[j + 1]!))}`).join(", ")
    console.log(`interleaved at ${latency} ms, ${4 * ROUNDS} rounds, median ratio to @effect/platform: ${line}`)
  }
}

if (process.argv[2] === "--child") {
  await runChild(process.argv[3], process.argv[4], Number(process.argv[5]))
} else if (process.argv[2] === "--interleaved") {
  await interleaved(process.argv[3])
  process.exit(0)
} else {
  await main()
}
