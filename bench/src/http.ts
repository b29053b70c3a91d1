/**
 * `pnpm bench http`: requests per second with 64 in flight against a loopback server (in its own
 * process) answering at once and after 20 ms — the sluice middleware and provider client against
 * the plain @effect/platform client on the same undici pool, and against raw undici.
 *
 * Two measurements in one run. Each variant in a process of its own: warm-up, then ROUNDS timed
 * rounds, the median. Then interleaved (`--interleaved URL`, a child process): the plain client and
 * sluice's clients in one process, a round of each in turn, the median of each round's ratio to the
 * plain client's: on a shared machine the load drifts between one process and the next, not within
 * a round. "no spans" switches off Effect's HTTP client spans (`withTracerDisabledWhen`); "in a
 * provider" runs the plain request through `Provider.call` (bulkhead of 64) without sluice's HTTP
 * layer; "middleware" is `Middleware.layer`'s HttpClient, "sluice" `ProviderHttpClient.text`, each
 * on the check phase (their default) and on the caller's scheduler; "FiberRef set by hand" is the
 * middleware with the save-and-restore `Effect.locally` replaced (bench/src/lib/sendingByHand.ts).
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import * as Undici from "@effect/platform-node/Undici"
import { HttpPool, ProviderHttpClient } from "@sluice/http"
import { Effect, Layer } from "effect"
import { spawnSync } from "node:child_process"
import * as os from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  Bench,
  effectPerSecond,
  IN_FLIGHT,
  inRuntime,
  middlewareRound,
  plainRequest,
  platformLayer,
  type Round,
  startServer
} from "./lib/httpRounds.js"
import { formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"
import { loadByHand } from "./lib/sendingByHand.js"

const ROUNDS = 5
const INTERLEAVED_ROUNDS = 20
const REQUESTS: Record<number, number> = { 0: 10_000, 20: 3_000 }
const LATENCIES = [0, 20] as const
const buildDir = dirname(fileURLToPath(import.meta.url))
const srcDir = join(buildDir, "..", "src")

type Variant = (url: string, latency: number, requests: number) => Promise<Round>

/** Runs `requests` requests with IN_FLIGHT workers; returns requests per second. */
const perSecond = async (requests: number, one: () => Promise<unknown>): Promise<number> => {
  let next = 0
  const start = performance.now()
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next++ < requests) await one()
  }))
  return requests / ((performance.now() - start) / 1000)
}

/** What tracing a variant keeps: everything, all but the HTTP client's spans, nothing. */
type Tracing = "spans" | "no spans" | "tracing off"

const traced = (tracing: Tracing) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  tracing === "tracing off" ? Effect.withTracerEnabled(effect, false) : effect

const platformVariant = (tracing: Tracing): Variant => (url, latency, requests) =>
  inRuntime(
    platformLayer(tracing !== "no spans"),
    Effect.flatMap(HttpClient.HttpClient, (client) => {
      const one = plainRequest(client, url, latency)
      return effectPerSecond(requests, traced(tracing)(one))
    })
  )

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
  // the provider around the plain client: what the provider costs, sluice's HTTP client apart
  "@effect/platform, in a provider": (url, latency, requests) =>
    inRuntime(
      Layer.merge(platformLayer(true), Bench.layer({ bulkhead: { permits: IN_FLIGHT } })),
      Effect.flatMap(Effect.all([HttpClient.HttpClient, Bench]), ([client, provider]) => {
        const one = plainRequest(client, url, latency)
        return effectPerSecond(requests, provider.call(one))
      })
    ),
  "middleware": (url, latency, requests) => middlewareRound(url, latency, requests),
  "middleware, on the caller's scheduler": (url, latency, requests) =>
    middlewareRound(url, latency, requests, "caller"),
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

/** Runs this file again with `args`; the last line it prints, parsed. */
const child = <A>(args: ReadonlyArray<string>, what: string): A => {
  const run = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), ...args], {
    encoding: "utf8",
    env: process.env,
    timeout: 600_000,
    stdio: ["ignore", "pipe", "inherit"]
  })
  if (run.status !== 0) throw new Error(`${what} failed (exit ${run.status})`)
  return JSON.parse(run.stdout.trim().split("\n").pop() ?? "{}") as A
}

const measure = (name: string, url: string, latency: number): number => {
  const { perSecond } = child<{ perSecond: number }>(
    ["--child", name, url, String(latency)],
    `${name} at ${latency} ms`
  )
  process.stderr.write(`  ${name} at ${latency} ms: ${perSecond.toFixed(0)}/s\n`)
  return perSecond
}

const interleavedNames = [
  "@effect/platform",
  "@effect/platform, in a provider",
  "middleware",
  "middleware, on the caller's scheduler",
  "middleware, FiberRef set by hand",
  "sluice"
] as const

/** Per latency, the median ratio of each interleaved client to the plain client, and by hand to `Effect.locally`. */
type Interleaved = ReadonlyArray<{ readonly ratios: ReadonlyArray<number>; readonly byHand: number }>

/**
 * The clients of `interleavedNames` in this process, a round of each in turn (the order rotated
 * every round); prints the median of each round's ratio to the plain client's round beside it.
 */
const interleaved = async (url: string): Promise<Interleaved> => {
  const byHand = await loadByHand(srcDir, buildDir)
  const all: Record<(typeof interleavedNames)[number], Variant> = {
    "@effect/platform": variants["@effect/platform"]!,
    "@effect/platform, in a provider": variants["@effect/platform, in a provider"]!,
    "middleware": variants["middleware"]!,
    "middleware, on the caller's scheduler": variants["middleware, on the caller's scheduler"]!,
    "middleware, FiberRef set by hand": (url, latency, requests) => byHand.middlewareRound(url, latency, requests),
    "sluice": variants["sluice"]!
  }
  const out: Array<Interleaved[number]> = []
  for (const latency of LATENCIES) {
    // rounds short enough that no pool sits idle past the server's keep-alive while the others run
    const requests = Math.round((REQUESTS[latency] ?? 1_000) / 10)
    const rounds = await Promise.all(interleavedNames.map((name) => all[name](url, latency, requests)))
    for (const round of rounds) await round() // warm-up
    const ratios: Array<Array<number>> = interleavedNames.map(() => [])
    const byHandRatios: Array<number> = []
    for (let i = 0; i < INTERLEAVED_ROUNDS; i++) {
      const rates: Array<number> = rounds.map(() => 0)
      for (let k = 0; k < rounds.length; k++) {
        const j = (i + k) % rounds.length
        rates[j] = await rounds[j]!()
      }
      rates.forEach((rate, j) => ratios[j]!.push(rate / rates[0]!))
      byHandRatios.push(
        rates[interleavedNames.indexOf("middleware, FiberRef set by hand")]! /
          rates[interleavedNames.indexOf("middleware")]!
      )
    }
    const medians = ratios.map(median)
    const line = interleavedNames.slice(1).map((name, j) => `${name} ${formatRatio(medians[j + 1]!)}`).join(", ")
    process.stderr.write(
      `  interleaved at ${latency} ms, ${INTERLEAVED_ROUNDS} rounds, median ratio to @effect/platform: ${line}; ` +
        `by hand / Effect.locally ${formatRatio(median(byHandRatios))}\n`
    )
    out.push({ ratios: medians, byHand: median(byHandRatios) })
  }
  return out
}

const loadLine = (): string => os.loadavg().map((l) => l.toFixed(2)).join(", ")

const main = async (): Promise<void> => {
  const { server, url } = await startServer(srcDir)
  try {
    const loadBefore = loadLine()
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
    console.log(`\n${textTable(header, rows)}`)
    const mixed = child<Interleaved>(["--interleaved", url, "--json"], "the interleaved run")
    const loadAfter = loadLine()
    const mixedHeader = ["client", ...LATENCIES.map((l) => `${l} ms: vs platform`)]
    const mixedRows = [
      ...interleavedNames.slice(1).map((name, j) => [name, ...mixed.map((m) => formatRatio(m.ratios[j + 1]!))]),
      ["FiberRef set by hand / `Effect.locally`", ...mixed.map((m) => formatRatio(m.byHand))]
    ]
    console.log(`\n${textTable(mixedHeader, mixedRows)}`)
    const target = (i: number, bound: string) =>
      `${formatRatio(mixed[i]!.ratios[interleavedNames.indexOf("middleware")]!)} at ${LATENCIES[i]} ms ` +
      `(target ≥ ${bound})`
    writeSection(
      "HTTP client",
      [
        `Measured by \`pnpm bench http\` on ${machineLine()}; load average (1, 5, 15 min) ${loadBefore} before, ` +
        `${loadAfter} after.`,
        "",
        `${IN_FLIGHT} requests in flight against a loopback server in its own process answering a 90-byte JSON body ` +
        `at once and after 20 ms (ceiling ${
          IN_FLIGHT * 50
        }/s there); every client on an undici pool of ${IN_FLIGHT}. ` +
        "sluice's clients run each request through a provider (bulkhead of 64, no limiter) and read the body inside " +
        "the permit: \"middleware\" is `Middleware.layer`'s `HttpClient`, \"sluice\" `ProviderHttpClient.text`, both " +
        "on the check phase (their default) unless \"on the caller's scheduler\".",
        "",
        `**Interleaved**, the ratios to trust on a shared machine: the clients in one process, a round of each in ` +
        `turn (${(REQUESTS[0]! / 10).toLocaleString("en")} requests at 0 ms, ${REQUESTS[20]! / 10} at 20 ms), ` +
        `${INTERLEAVED_ROUNDS} rounds, the median of each round's ratio to the plain @effect/platform client's. ` +
        "\"FiberRef set by hand\": the middleware with the save-and-restore of `HttpClient.currentTracerPropagation` " +
        "that `Effect.locally` replaced (bench/src/lib/sendingByHand.ts); \"in a provider\": the plain client " +
        "through `Provider.call` (bulkhead of 64), without sluice's HTTP layer.",
        "",
        markdownTable(mixedHeader, mixedRows),
        "",
        `Targets: the middleware ${target(0, "0.75x")}, ${target(1, "0.85x")}. The last row decides ` +
        "`Effect.locally` against the FiberRef set by hand: the hand-written one would stay only with a gain " +
        "above the rounds' noise (a few %) at either latency.",
        "",
        `**Each client in its own process**, ${REQUESTS[0]!.toLocaleString("en")} and ` +
        `${
          REQUESTS[20]!.toLocaleString("en")
        } requests a round, median of ${ROUNDS} rounds after a warm-up (the load ` +
        "drifts between processes: read the ratios above). \"no spans\": `withTracerDisabledWhen(() => true)` on the " +
        "plain client; \"in a provider\": the plain client through `Provider.call`, without sluice's HTTP layer.",
        "",
        markdownTable(header, rows)
      ].join("\n")
    )
  } finally {
    server.stdin?.end()
  }
}

if (process.argv[2] === "--child") {
  await runChild(process.argv[3]!, process.argv[4]!, Number(process.argv[5]))
} else if (process.argv[2] === "--interleaved") {
  const result = await interleaved(process.argv[3]!)
  if (process.argv[4] === "--json") process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
} else {
  await main()
}
