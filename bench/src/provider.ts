/**
 * `pnpm bench provider`: what `Provider.call` costs on top of the effect it runs.
 *
 * Every variant runs in a child process of its own (fresh heap and JIT state), five rounds each;
 * the table shows the median. Suites:
 * - sequential: `call(Effect.succeed(1))` one after another in one Effect loop (no runtime start
 *   per call), through a bare effect, `bulkhead.run` alone, then a provider with a bulkhead only,
 *   and each feature added in turn: a limiter (a limit that never binds), an attempt timeout, a
 *   total timeout, retries, a circuit breaker;
 * - concurrent: 64 calls at once of a task that yields once, so that permits are held across a
 *   suspension.
 */
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { formatNs, formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

const ROUNDS = 5
const SEQUENTIAL = 200_000
const CONCURRENT = 200_000
const IN_FLIGHT = 64

/** n runs of `effect`, one after another, in one fiber. */
const loop = (n: number, effect: Effect.Effect<unknown, unknown>): Effect.Effect<void, unknown> =>
  Effect.suspend(function next(i = 0): Effect.Effect<void, unknown> {
    return i === n ? Effect.void : Effect.flatMap(effect, () => next(i + 1))
  })

/** n runs of `effect`, `IN_FLIGHT` at a time. */
const fanOut = (n: number, effect: Effect.Effect<unknown, unknown>): Effect.Effect<void, unknown> =>
  Effect.forEach(Array.from({ length: n }), () => effect, { concurrency: IN_FLIGHT, discard: true })

type Settings = Omit<Provider.Options, "name">

const bulkheadOnly: Settings = { bulkhead: { permits: IN_FLIGHT } }
const withLimiter: Settings = { ...bulkheadOnly, rateLimiter: { limit: 1_000_000_000, window: "1 second" } }
const withAttempt: Settings = { ...withLimiter, attemptTimeout: "10 seconds" }
const withTotal: Settings = { ...withAttempt, totalTimeout: "30 seconds" }
const withRetry: Settings = { ...withTotal, retry: { maxAttempts: 3 } }
const withBreaker: Settings = { ...withRetry, circuitBreaker: {} }

/** The elapsed nanoseconds per call of `rounds` rounds of `run(n)`, each in one Effect. */
const rounds = (
  n: number,
  count: number,
  round: (n: number) => Effect.Effect<void, unknown>
): Effect.Effect<Array<number>, unknown> =>
  Effect.gen(function*() {
    const times: Array<number> = []
    yield* round(Math.min(n, 20_000)) // warm-up: code optimised
    for (let i = 0; i < count; i++) {
      const start = process.hrtime.bigint()
      yield* round(n)
      times.push(Number(process.hrtime.bigint() - start) / n)
    }
    return times
  })

const throughProvider = (
  settings: Settings,
  drive: (n: number, effect: Effect.Effect<unknown, unknown>) => Effect.Effect<void, unknown>,
  task: Effect.Effect<unknown>
) =>
(n: number, count: number) =>
  Effect.gen(function*() {
    const provider = yield* Provider.make({ ...settings, name: "bench" })
    return yield* rounds(n, count, (k) => drive(k, provider.call(task)))
  }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory))

const succeed = Effect.succeed(1)
const yieldOnce = Effect.as(Effect.yieldNow(), 1)

interface Variant {
  readonly suite: "sequential" | "concurrent"
  readonly name: string
  readonly run: (n: number, count: number) => Effect.Effect<Array<number>, unknown>
}

const variants: ReadonlyArray<Variant> = [
  { suite: "sequential", name: "bare effect", run: (n, count) => rounds(n, count, (k) => loop(k, succeed)) },
  {
    suite: "sequential",
    name: "bulkhead.run",
    run: (n, count) => {
      const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: IN_FLIGHT })
      return rounds(n, count, (k) => loop(k, bulkhead.run(succeed)))
    }
  },
  { suite: "sequential", name: "provider: bulkhead", run: throughProvider(bulkheadOnly, loop, succeed) },
  { suite: "sequential", name: "+ limiter", run: throughProvider(withLimiter, loop, succeed) },
  { suite: "sequential", name: "+ attemptTimeout", run: throughProvider(withAttempt, loop, succeed) },
  { suite: "sequential", name: "+ totalTimeout", run: throughProvider(withTotal, loop, succeed) },
  { suite: "sequential", name: "+ retry", run: throughProvider(withRetry, loop, succeed) },
  { suite: "sequential", name: "+ circuit breaker", run: throughProvider(withBreaker, loop, succeed) },
  {
    suite: "concurrent",
    name: "bare effect",
    run: (n, count) => rounds(n, count, (k) => fanOut(k, yieldOnce))
  },
  {
    suite: "concurrent",
    name: "bulkhead.run",
    run: (n, count) => {
      const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: IN_FLIGHT })
      return rounds(n, count, (k) => fanOut(k, bulkhead.run(yieldOnce)))
    }
  },
  { suite: "concurrent", name: "provider: bulkhead", run: throughProvider(bulkheadOnly, fanOut, yieldOnce) },
  { suite: "concurrent", name: "provider: all features", run: throughProvider(withBreaker, fanOut, yieldOnce) }
]

const keyOf = (v: Variant): string => `${v.suite}/${v.name}`

// ---------------------------------------------------------------------------------------------
// child: run one variant, print one JSON line
// ---------------------------------------------------------------------------------------------

const runChild = async (key: string): Promise<void> => {
  const variant = variants.find((v) => keyOf(v) === key)
  if (variant === undefined) throw new Error(`unknown variant ${key}`)
  const n = variant.suite === "sequential" ? SEQUENTIAL : CONCURRENT
  const times = await Effect.runPromise(variant.run(n, ROUNDS))
  process.stdout.write(`${JSON.stringify({ nsPerCall: median(times) })}\n`)
}

const measure = (variant: Variant): number => {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--child", keyOf(variant)],
    { encoding: "utf8", maxBuffer: 1 << 20, env: process.env }
  )
  if (child.status !== 0) throw new Error(`${keyOf(variant)} failed:\n${child.stderr}`)
  const { nsPerCall } = JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as { nsPerCall: number }
  process.stderr.write(`  ${keyOf(variant)}: ${formatNs(nsPerCall)}/call\n`)
  return nsPerCall
}

// ---------------------------------------------------------------------------------------------
// parent: run every variant, print the tables, update RESULTS.md
// ---------------------------------------------------------------------------------------------

const main = (): void => {
  const sections: Array<string> = []
  const print = (title: string, header: Array<string>, rows: Array<Array<string>>, notes: Array<string>) => {
    console.log(`\n${title}\n${textTable(header, rows)}\n${notes.map((n) => `  ${n}`).join("\n")}`)
    sections.push(`### ${title}\n\n${markdownTable(header, rows)}\n\n${notes.map((n) => `- ${n}`).join("\n")}`)
  }
  for (const suite of ["sequential", "concurrent"] as const) {
    const results = variants.filter((v) => v.suite === suite).map((v) => ({ name: v.name, ns: measure(v) }))
    const bare = results[0].ns
    const bulkhead = results[1].ns
    print(
      suite === "sequential"
        ? `Sequential: ${SEQUENTIAL.toLocaleString("en")} calls of Effect.succeed(1), one after another in one fiber`
        : `Concurrent: ${CONCURRENT.toLocaleString("en")} calls of a task that yields once, ${IN_FLIGHT} in flight`,
      ["variant", "per call", "overhead over bare", "vs bulkhead.run"],
      results.map(({ name, ns }) => [
        name,
        formatNs(ns),
        name === "bare effect" ? "-" : formatNs(ns - bare),
        name === "bare effect" ? "-" : formatRatio(ns / bulkhead)
      ]),
      suite === "sequential"
        ? [
          `every provider has a bulkhead of ${IN_FLIGHT} permits; each row adds one feature to the row above: a limiter ` +
          "of 10⁹ per second (never binds), an attempt timeout of 10 s, a total timeout of 30 s, 3 attempts (never " +
          "retried: the call succeeds), a circuit breaker (never opens)",
          "each call runs inside the span Provider.call (Effect's default tracer, no exporter)"
        ]
        : [
          `Effect.forEach with concurrency ${IN_FLIGHT}; the bulkhead has ${IN_FLIGHT} permits, so nobody queues`,
          "all features: limiter, attempt and total timeouts, retries and a circuit breaker, as in the last sequential row"
        ]
    )
  }
  writeSection(
    "Provider",
    `Measured by \`pnpm bench provider\` on ${machineLine()}. Median of ${ROUNDS} rounds after a warm-up, each ` +
      `variant in its own process.\n\n${sections.join("\n\n")}`
  )
}

if (process.argv[2] === "--child") {
  await runChild(process.argv[3])
} else {
  main()
}
