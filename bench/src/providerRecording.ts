/**
 * `pnpm bench provider-recording`: what `recording` adds to a call through a provider with every
 * feature (bulkhead, limiter, attempt and total timeouts, retries, circuit breaker), recording off
 * against on, sequentially and with 64 calls in flight.
 *
 * Each measurement is a child process of its own (fresh heap and JIT state); off and on alternate,
 * `PAIRS` times, so that both see the same machine, and the table shows the medians and the median
 * of the pairs' differences: on a shared machine a difference read across minutes is noise.
 */
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { formatNs, formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

const ROUNDS = Number(process.env.SLUICE_BENCH_ROUNDS ?? 5)
const CALLS = Number(process.env.SLUICE_BENCH_CALLS ?? 50_000)
const PAIRS = Number(process.env.SLUICE_BENCH_PAIRS ?? 5)
const IN_FLIGHT = 64

type Settings = Omit<Provider.Options, "name">

const everything: Settings = {
  bulkhead: { permits: IN_FLIGHT },
  rateLimiter: { limit: 1_000_000_000, window: "1 second" },
  attemptTimeout: "10 seconds",
  totalTimeout: "30 seconds",
  retry: { maxAttempts: 3 },
  circuitBreaker: {}
}

type Suite = "sequential" | "concurrent"
const suites: ReadonlyArray<Suite> = ["sequential", "concurrent"]

/** `n` calls through `provider`: one after another in one fiber, or `IN_FLIGHT` at a time of a task that yields once. */
const drive = (suite: Suite, provider: Provider.Provider<unknown>, n: number): Effect.Effect<void, unknown> =>
  suite === "sequential"
    ? Effect.suspend(function next(i = 0): Effect.Effect<void, unknown> {
      return i === n ? Effect.void : Effect.flatMap(provider.call(Effect.succeed(1)), () => next(i + 1))
    })
    : Effect.forEach(Array.from({ length: n }), () => provider.call(Effect.as(Effect.yieldNow(), 1)), {
      concurrency: IN_FLIGHT,
      discard: true
    })

/** Nanoseconds per call, the median of `ROUNDS` rounds after a warm-up. */
const runChild = (suite: Suite, recording: boolean) =>
  Effect.gen(function*() {
    const provider = yield* Provider.make({ ...everything, recording, name: "bench" })
    yield* drive(suite, provider, Math.min(CALLS, 10_000))
    const times: Array<number> = []
    for (let i = 0; i < ROUNDS; i++) {
      const start = process.hrtime.bigint()
      yield* drive(suite, provider, CALLS)
      times.push(Number(process.hrtime.bigint() - start) / CALLS)
    }
    // the recording read, so that no engine can drop what it keeps
    const recorded = yield* provider.recording
    if (recording && (recorded === undefined || recorded.starts.length === 0)) return yield* Effect.die("no recording")
    return median(times)
  }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory))

const measure = (suite: Suite, recording: boolean): number => {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--child", suite, String(recording)],
    { encoding: "utf8", maxBuffer: 1 << 20, env: process.env }
  )
  if (child.status !== 0) throw new Error(`${suite} recording ${recording} failed:\n${child.stderr}`)
  const { nsPerCall } = JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as { nsPerCall: number }
  process.stderr.write(`  ${suite}, recording ${recording ? "on" : "off"}: ${formatNs(nsPerCall)}/call\n`)
  return nsPerCall
}

const main = (): void => {
  const rows: Array<Array<string>> = []
  for (const suite of suites) {
    const off: Array<number> = []
    const on: Array<number> = []
    for (let i = 0; i < PAIRS; i++) {
      off.push(measure(suite, false))
      on.push(measure(suite, true))
    }
    const differences = on.map((ns, i) => ns - off[i])
    rows.push([
      suite === "sequential" ? "one after another" : `${IN_FLIGHT} in flight`,
      formatNs(median(off)),
      formatNs(median(on)),
      formatNs(median(differences)),
      formatRatio(median(on) / median(off))
    ])
  }
  const header = ["calls", "recording off", "recording on", "added per call (median of pairs)", "on / off"]
  const title = `${CALLS.toLocaleString("en")} calls through a provider with every feature, recording off and on`
  const notes = [
    "every feature: a bulkhead of 64 permits, a limiter of 10⁹ per second (never binds), attempt and total " +
    "timeouts, 3 attempts (never retried), a circuit breaker; \"one after another\": Effect.succeed(1) in one " +
    "fiber; \"64 in flight\": a task that yields once, Effect.forEach with concurrency 64",
    "recording on: `recording: true` (1 s buckets, at most 512): per attempt a few array writes at the " +
    "queue, the grant, the limiter, the start and the end, and an `Effect.ensuring` to count the permit's release",
    `off and on alternate, ${PAIRS} pairs, each measurement in its own process (median of ${ROUNDS} rounds after a warm-up)`
  ]
  console.log(`\n${title}\n${textTable(header, rows)}\n${notes.map((n) => `  ${n}`).join("\n")}`)
  writeSection(
    "Provider recording",
    `Measured by \`pnpm bench provider-recording\` on ${machineLine()}.\n\n### ${title}\n\n${
      markdownTable(header, rows)
    }\n\n${notes.map((n) => `- ${n}`).join("\n")}`
  )
}

if (process.argv[2] === "--child") {
  const nsPerCall = await Effect.runPromise(runChild(process.argv[3] as Suite, process.argv[4] === "true"))
  process.stdout.write(`${JSON.stringify({ nsPerCall })}\n`)
} else {
  main()
}
