/**
 * `pnpm bench provider`: what `Provider.call` costs on top of the effect it runs.
 *
 * Every variant runs in a child process of its own (fresh heap and JIT state), five rounds each;
 * the table shows the median. Suites:
 * - sequential: `call(Effect.succeed(1))` one after another in one Effect loop (no runtime start
 *   per call), through a bare effect, `bulkhead.run` alone, `bulkhead.run` in a span as
 *   `Effect.useSpan` makes it, then a provider with a bulkhead only, and each feature added in
 *   turn: a limiter (a limit that never binds), an attempt timeout, a total timeout, retries, a
 *   circuit breaker; and the same parts composed naively with `Effect.timeoutFail` and
 *   `Effect.retry`;
 * - concurrent: 64 calls at once of a task that yields once, so that permits are held across a
 *   suspension.
 *
 * With `SLUICE_BENCH_BASELINE=<a checkout of another commit>` (dependencies installed there), the
 * provider rows also run against that checkout's packages, bundled from its sources by the same
 * code, in the same run: the budget of a rebuild is read against them.
 */
import { Bulkhead } from "@sluice/bulkhead"
import { Provider } from "@sluice/provider"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import { Effect, Fiber } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { formatNs, formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

/** `SLUICE_BENCH_ROUNDS` and `SLUICE_BENCH_CALLS` shrink a run on a busy machine. */
const ROUNDS = Number(process.env.SLUICE_BENCH_ROUNDS ?? 5)
const SEQUENTIAL = Number(process.env.SLUICE_BENCH_CALLS ?? 200_000)
const CONCURRENT = SEQUENTIAL
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
/** Shutdown waits for every call: none can need ending from outside, so none needs a fiber of its own. */
const waitingShutdown: Settings = { ...bulkheadOnly, gracePeriod: Infinity }
const withLimiter: Settings = { ...bulkheadOnly, rateLimiter: { limit: 1_000_000_000, window: "1 second" } }
const withAttempt: Settings = { ...withLimiter, attemptTimeout: "10 seconds" }
const withTotal: Settings = { ...withAttempt, totalTimeout: "30 seconds" }
const withRetry: Settings = { ...withTotal, retry: { maxAttempts: 3 } }
const withBreaker: Settings = { ...withRetry, circuitBreaker: {} }
/** Every feature, and the run recorded (1 s buckets): what `recording` adds to a call. */
const withRecording: Settings = { ...withBreaker, recording: true }

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

class Timeout {
  readonly _tag = "Timeout"
}

/**
 * The provider's features composed the way a user would write them without sluice, one more per
 * row as the provider rows add them: the span (`Effect.withSpan`, the parent of the call's spans),
 * per attempt the bulkhead, the limiter and the attempt's `Effect.timeoutFail`, the total's
 * `Effect.timeoutFail` over the retries, `Effect.retry` (no circuit breaker: Effect has none).
 */
type Step = "bulkhead" | "limiter" | "attempt" | "total" | "retry"
const steps: ReadonlyArray<Step> = ["bulkhead", "limiter", "attempt", "total", "retry"]

const naive = (upTo: Step, task: Effect.Effect<unknown>) => {
  const has = (step: Step) => steps.indexOf(step) <= steps.indexOf(upTo)
  return (
    drive: (n: number, effect: Effect.Effect<unknown, unknown>) => Effect.Effect<void, unknown>
  ) =>
  (n: number, count: number) =>
    Effect.gen(function*() {
      const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: IN_FLIGHT })
      const limiter = yield* RateLimiter.make({ name: "bench", limit: 1_000_000_000, window: "1 second" })
      const call = has("attempt")
        ? Effect.timeoutFail(task, { duration: "10 seconds", onTimeout: () => new Timeout() })
        : task
      const limited: Effect.Effect<unknown, unknown> = has("limiter") ? Effect.zipRight(limiter.take(), call) : call
      let attempt: Effect.Effect<unknown, unknown> = bulkhead.run(limited)
      if (has("retry")) attempt = Effect.retry(attempt, { times: 2 })
      if (has("total")) {
        attempt = Effect.timeoutFail(attempt, { duration: "30 seconds", onTimeout: () => new Timeout() })
      }
      const whole = Effect.withSpan(attempt, "call", { captureStackTrace: false })
      return yield* rounds(n, count, (k) => drive(k, whole))
    }).pipe(Effect.scoped, Effect.provide(RateLimiterStore.layerMemory))
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
  {
    suite: "sequential",
    name: "useSpan + bulkhead.run",
    run: (n, count) => {
      const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: IN_FLIGHT })
      const call = Effect.useSpan("call", { captureStackTrace: false }, () => bulkhead.run(succeed))
      return rounds(n, count, (k) => loop(k, call))
    }
  },
  { suite: "sequential", name: "withSpan + bulkhead.run", run: naive("bulkhead", succeed)(loop) },
  { suite: "sequential", name: "naive: + limiter.take", run: naive("limiter", succeed)(loop) },
  { suite: "sequential", name: "naive: + timeoutFail (attempt)", run: naive("attempt", succeed)(loop) },
  { suite: "sequential", name: "naive: + timeoutFail (total)", run: naive("total", succeed)(loop) },
  { suite: "sequential", name: "naive: + Effect.retry", run: naive("retry", succeed)(loop) },
  {
    suite: "sequential",
    name: "withSpan + child fiber + bulkhead.run",
    run: (n, count) => {
      const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: IN_FLIGHT })
      const child = Effect.flatMap(
        Effect.fork(succeed),
        (fiber) => Effect.flatMap(Fiber.await(fiber), (exit) => Effect.as(Fiber.inheritAll(fiber), exit))
      )
      const call = Effect.withSpan(bulkhead.run(child), "call", { captureStackTrace: false })
      return rounds(n, count, (k) => loop(k, call))
    }
  },
  { suite: "sequential", name: "provider: bulkhead", run: throughProvider(bulkheadOnly, loop, succeed) },
  {
    suite: "sequential",
    name: "provider: bulkhead, gracePeriod: Infinity",
    run: throughProvider(waitingShutdown, loop, succeed)
  },
  { suite: "sequential", name: "+ limiter", run: throughProvider(withLimiter, loop, succeed) },
  { suite: "sequential", name: "+ attemptTimeout", run: throughProvider(withAttempt, loop, succeed) },
  { suite: "sequential", name: "+ totalTimeout", run: throughProvider(withTotal, loop, succeed) },
  { suite: "sequential", name: "+ retry", run: throughProvider(withRetry, loop, succeed) },
  { suite: "sequential", name: "+ circuit breaker", run: throughProvider(withBreaker, loop, succeed) },
  { suite: "sequential", name: "+ recording", run: throughProvider(withRecording, loop, succeed) },
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
  {
    suite: "concurrent",
    name: "provider: bulkhead, gracePeriod: Infinity",
    run: throughProvider(waitingShutdown, fanOut, yieldOnce)
  },
  { suite: "concurrent", name: "naive: all features but a breaker", run: naive("retry", yieldOnce)(fanOut) },
  { suite: "concurrent", name: "provider: all features", run: throughProvider(withBreaker, fanOut, yieldOnce) },
  {
    suite: "concurrent",
    name: "provider: all features, recording",
    run: throughProvider(withRecording, fanOut, yieldOnce)
  }
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

const measure = (variant: Variant, bundle = fileURLToPath(import.meta.url)): number => {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, bundle, "--child", keyOf(variant)],
    { encoding: "utf8", maxBuffer: 1 << 20, env: process.env }
  )
  if (child.status !== 0) throw new Error(`${keyOf(variant)} failed:\n${child.stderr}`)
  const { nsPerCall } = JSON.parse(child.stdout.trim().split("\n").pop() ?? "{}") as { nsPerCall: number }
  process.stderr.write(
    `  ${keyOf(variant)}${bundle === fileURLToPath(import.meta.url) ? "" : " (baseline)"}: ${
      formatNs(nsPerCall)
    }/call\n`
  )
  return nsPerCall
}

/** The rows that go through a provider, measured against the baseline too. */
const isProviderRow = (v: Variant): boolean => v.name.startsWith("provider:") || v.name.startsWith("+ ")

/**
 * This suite bundled again with every `@sluice/*` import resolved to the baseline checkout's
 * sources (other packages from this checkout's node_modules, the same versions by the lockfile).
 */
const buildBaseline = async (baseline: string): Promise<string> => {
  const { build } = await import("esbuild")
  const here = dirname(fileURLToPath(import.meta.url))
  const outfile = join(here, "provider-baseline.mjs")
  await build({
    entryPoints: [join(here, "..", "src", "provider.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    plugins: [{
      name: "baseline",
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          const sluice = /^@sluice\/([^/]+)$/.exec(args.path)
          if (sluice === null) return { external: true }
          const path = join(baseline, "packages", sluice[1], "src", "index.ts")
          if (!existsSync(path)) throw new Error(`baseline has no ${path}`)
          return { path }
        })
      }
    }]
  })
  return outfile
}

/**
 * The rebuild's budgets (issue 32), read off the rows: a bulkhead only against its span, each
 * feature's increment against the increment of Effect's own combinator for it, every feature
 * against the naive composition; and each against today's code, when it is the baseline.
 */
const budgets = (
  results: ReadonlyArray<{ readonly name: string; readonly ns: number; readonly baseline: number | undefined }>
): Array<string> => {
  const ns = (name: string) => results.find((r) => r.name === name)?.ns
  const lines: Array<string> = []
  const bulkhead = ns("provider: bulkhead")
  const span = ns("useSpan + bulkhead.run")
  const waiting = ns("provider: bulkhead, gracePeriod: Infinity")
  if (bulkhead !== undefined && span !== undefined) {
    lines.push(
      `budget: a bulkhead only costs ${formatRatio(bulkhead / span)} useSpan + bulkhead.run (target at most 1.5x)${
        waiting === undefined ? "" : `; with gracePeriod: Infinity (no fiber per call) ${formatRatio(waiting / span)}`
      }`
    )
  }
  const ladder: ReadonlyArray<readonly [string, string, string, string]> = [
    ["the limiter", "+ limiter", "provider: bulkhead", "naive: + limiter.take"],
    ["the attempt budget", "+ attemptTimeout", "+ limiter", "naive: + timeoutFail (attempt)"],
    ["the total budget", "+ totalTimeout", "+ attemptTimeout", "naive: + timeoutFail (total)"],
    ["retries", "+ retry", "+ totalTimeout", "naive: + Effect.retry"]
  ]
  const naiveBefore: Record<string, string> = {
    "naive: + limiter.take": "withSpan + bulkhead.run",
    "naive: + timeoutFail (attempt)": "naive: + limiter.take",
    "naive: + timeoutFail (total)": "naive: + timeoutFail (attempt)",
    "naive: + Effect.retry": "naive: + timeoutFail (total)"
  }
  for (const [feature, row, before, naiveRow] of ladder) {
    const [a, b, c, d] = [ns(row), ns(before), ns(naiveRow), ns(naiveBefore[naiveRow])]
    if (a === undefined || b === undefined || c === undefined || d === undefined) continue
    lines.push(
      `budget: ${feature} adds ${formatNs(a - b)} per call to a provider; Effect's own combinator for it adds ${
        formatNs(c - d)
      } to the naive composition (target: at most as much)`
    )
  }
  const breaker = ns("+ circuit breaker")
  const retry = ns("+ retry")
  if (breaker !== undefined && retry !== undefined) {
    lines.push(`the circuit breaker adds ${formatNs(breaker - retry)} per call (Effect has no combinator for it)`)
  }
  const recording = ns("+ recording")
  if (recording !== undefined && breaker !== undefined) {
    lines.push(
      `recording adds ${formatNs(recording - breaker)} per call (${
        formatRatio(recording / breaker)
      } every feature without it); off by default, it costs nothing when off`
    )
  }
  const all = ns("+ circuit breaker")
  const naiveAll = ns("naive: + Effect.retry")
  if (all !== undefined && naiveAll !== undefined) {
    lines.push(
      `budget: every feature costs ${
        formatRatio(all / naiveAll)
      } the naive composition of all but the breaker (target at most 1.0x)`
    )
  }
  return lines
}

/** What recording adds to 64 calls in flight, where the permits held are counted as they change. */
const concurrentRecording = (
  results: ReadonlyArray<{ readonly name: string; readonly ns: number }>
): Array<string> => {
  const off = results.find((r) => r.name === "provider: all features")?.ns
  const on = results.find((r) => r.name === "provider: all features, recording")?.ns
  if (off === undefined || on === undefined) return []
  return [`recording adds ${formatNs(on - off)} per call with ${IN_FLIGHT} in flight (${formatRatio(on / off)})`]
}

// ---------------------------------------------------------------------------------------------
// parent: run every variant, print the tables, update RESULTS.md
// ---------------------------------------------------------------------------------------------

const main = async (): Promise<void> => {
  const baselineDir = process.env.SLUICE_BENCH_BASELINE
  const baseline = baselineDir === undefined ? undefined : await buildBaseline(baselineDir)
  const only = process.env.SLUICE_BENCH_ONLY === undefined ? undefined : new RegExp(process.env.SLUICE_BENCH_ONLY)
  const sections: Array<string> = []
  const print = (title: string, header: Array<string>, rows: Array<Array<string>>, notes: Array<string>) => {
    console.log(`\n${title}\n${textTable(header, rows)}\n${notes.map((n) => `  ${n}`).join("\n")}`)
    sections.push(`### ${title}\n\n${markdownTable(header, rows)}\n\n${notes.map((n) => `- ${n}`).join("\n")}`)
  }
  for (const suite of ["sequential", "concurrent"] as const) {
    const results = variants.filter((v) => v.suite === suite && (only === undefined || only.test(keyOf(v)))).map((
      v
    ) => ({
      name: v.name,
      ns: measure(v),
      // measured right after, so that both see the same machine
      baseline: baseline !== undefined && isProviderRow(v) ? measure(v, baseline) : undefined
    }))
    if (results.length === 0) continue
    const byName = (name: string) => results.find((r) => r.name === name)?.ns
    const bare = byName("bare effect") ?? Number.NaN
    const bulkhead = byName("bulkhead.run") ?? Number.NaN
    const header = ["variant", "per call", "overhead over bare", "vs bulkhead.run"]
    if (baseline !== undefined) header.push("baseline per call", "vs baseline")
    print(
      suite === "sequential"
        ? `Sequential: ${SEQUENTIAL.toLocaleString("en")} calls of Effect.succeed(1), one after another in one fiber`
        : `Concurrent: ${CONCURRENT.toLocaleString("en")} calls of a task that yields once, ${IN_FLIGHT} in flight`,
      header,
      results.map(({ baseline: base, name, ns }) => {
        const row = [
          name,
          formatNs(ns),
          name === "bare effect" ? "-" : formatNs(ns - bare),
          name === "bare effect" ? "-" : formatRatio(ns / bulkhead)
        ]
        if (baseline !== undefined) {
          row.push(base === undefined ? "-" : formatNs(base), base === undefined ? "-" : formatRatio(ns / base))
        }
        return row
      }),
      [
        ...(suite === "sequential"
          ? [
            `every provider has a bulkhead of ${IN_FLIGHT} permits; each row adds one feature to the row above: a ` +
            "limiter of 10⁹ per second (never binds), an attempt timeout of 10 s, a total timeout of 30 s, 3 attempts " +
            "(never retried: the call succeeds), a circuit breaker (never opens), then the run recorded (`recording: " +
            "true`: 1 s buckets, at most 512)",
            "each provider call runs inside the span Provider.call (Effect's default tracer, no exporter), the " +
            "parent of the call's spans; \"useSpan + bulkhead.run\" is Effect.useSpan(name, { captureStackTrace: " +
            "false }, () => bulkhead.run(e)), which sets no parent; the \"naive\" rows add, one per row as the " +
            "provider rows do, Effect's own combinators to Effect.withSpan + bulkhead.run: limiter.take, " +
            "Effect.timeoutFail on the call, Effect.timeoutFail over the retries, Effect.retry({ times: 2 })"
          ]
          : [
            `Effect.forEach with concurrency ${IN_FLIGHT}; the bulkhead has ${IN_FLIGHT} permits, so nobody queues`,
            "all features: limiter, attempt and total timeouts, retries and a circuit breaker, as in the sequential " +
            "\"+ circuit breaker\" row; \"recording\" adds the run's recording, as \"+ recording\" does",
            ...concurrentRecording(results)
          ]),
        ...(baseline === undefined ? [] : [`baseline: the packages of ${baselineDir}, bundled by the same code`]),
        ...(suite === "sequential" ? budgets(results) : [])
      ]
    )
  }
  // a partial run (SLUICE_BENCH_ONLY) prints its rows and leaves RESULTS.md alone
  if (only !== undefined) return
  writeSection(
    "Provider",
    `Measured by \`pnpm bench provider\` on ${machineLine()}. Median of ${ROUNDS} rounds after a warm-up, each ` +
      `variant in its own process.\n\n${sections.join("\n\n")}`
  )
}

if (process.argv[2] === "--child") {
  await runChild(process.argv[3])
} else {
  await main()
}
