/**
 * The workloads of `bench effect4`, written once for both lines: each line's entry passes its own
 * `effect` module and its own sluice bulkhead, so the same code is timed on Effect 3 and Effect 4.
 * The names used here (`succeed`, `flatMap`, `suspend`, `forEach`, `runPromise`) mean the same on
 * both majors.
 */

/** The part of an `effect` module the workloads use, typed loosely enough for either major. */
import { type LimiterRun, runLimiter } from "./limiterRuns.js"

export interface EffectModule<F> {
  readonly succeed: (value: number) => F
  readonly sync: (f: () => void) => F
  readonly void: F
  readonly suspend: (f: () => F) => F
  readonly flatMap: (self: F, f: () => F) => F
  readonly forEach: (
    items: Iterable<number>,
    f: () => F,
    options: { readonly concurrency: "unbounded" | number; readonly discard: true }
  ) => F
  readonly runPromise: (effect: F) => Promise<unknown>
}

/** One line under test: its `effect`, a task that yields once, and two ways to guard a task. */
export interface Line<F> {
  readonly Effect: EffectModule<F>
  readonly yieldNow: F
  /** A fresh sluice bulkhead of `permits`, as a guard. */
  readonly bulkhead: (permits: number) => (task: F) => F
  /** A fresh `Semaphore` of the same `effect`, as a guard. */
  readonly semaphore: (permits: number) => (task: F) => F
  /** A fresh provider of `settings` (its scope left open, its store provided), as a guard. */
  readonly provider: (settings: ProviderSettings) => Promise<(task: F) => F>
  /** Rate limiters by label: each makes a fresh one and returns one start's take, store provided. */
  readonly limiters: Record<string, (limit: number, burst: number) => Promise<F>>
}

export const LIMIT = 16

/** The provider's options as both lines take them (durations as strings). */
export type ProviderSettings = Record<string, unknown>
const bulkheadOnly: ProviderSettings = { bulkhead: { permits: LIMIT } }
/** Every feature on, none binding: a limiter far above the load, budgets far above the calls. */
const allFeatures: ProviderSettings = {
  ...bulkheadOnly,
  rateLimiter: { limit: 1_000_000_000, window: "1 second" },
  attemptTimeout: "10 seconds",
  totalTimeout: "30 seconds",
  retry: { maxAttempts: 3 },
  circuitBreaker: {}
}
export const providerSettings: Record<string, ProviderSettings> = {
  "provider-bulkhead": bulkheadOnly,
  "provider-all": allFeatures
}

export const workloadNames = [
  "uncontended/sluice",
  "uncontended/effect-semaphore",
  "in-flight-64/sluice",
  "in-flight-64/effect-semaphore",
  "fan-out/sluice",
  "fan-out/effect-semaphore",
  "provider/provider-bulkhead",
  "provider/provider-all"
] as const
export type WorkloadName = typeof workloadNames[number]

/** Operations per round, per workload group. */
export const sizes: Record<string, number> = {
  uncontended: 1_000_000,
  "in-flight-64": 512_000,
  "fan-out": 4_000,
  // a provider call costs tens of microseconds on Effect 3 (a fiber and a span per call)
  provider: 20_000
}

/** Times one round of `name` and returns nanoseconds per guarded call. */
export const runWorkload = async <F>(line: Line<F>, name: WorkloadName): Promise<number> => {
  const { Effect } = line
  const [group, guardName] = name.split("/") as [string, string]
  const n = sizes[group]!
  const settings = providerSettings[guardName]
  const guard = settings !== undefined
    ? await line.provider(settings)
    : guardName === "sluice"
    ? line.bulkhead(LIMIT)
    : line.semaphore(LIMIT)
  /** `count` guarded runs of `task`, one after another, in one fiber. */
  const loop = (count: number, task: F): F =>
    Effect.suspend(function next(i = 0): F {
      return i === count ? Effect.void : Effect.flatMap(guard(task), () => next(i + 1))
    })
  const range = (count: number) => Array.from({ length: count }, (_, i) => i)
  let program: F
  switch (group) {
    case "uncontended":
    case "provider":
      // one caller: every call finds a free permit
      program = loop(n, Effect.succeed(1))
      break
    case "in-flight-64":
      // 64 callers on 16 permits, each yielding while it holds one: a steady queue of 48
      program = Effect.forEach(range(64), () => loop(Math.floor(n / 64), line.yieldNow), {
        concurrency: "unbounded",
        discard: true
      })
      break
    default:
      // everything submitted at once: n fibers queue, 16 at a time run
      program = Effect.forEach(range(n), () => guard(line.yieldNow), { concurrency: "unbounded", discard: true })
  }
  const start = process.hrtime.bigint()
  await Effect.runPromise(program)
  return Number(process.hrtime.bigint() - start) / n
}

/** The limiter's precision run: 5,000 takers at once on 1,000 starts a second, burst 10. */
export const PRECISION = { takers: 5_000, limit: 1_000, burst: 10 } as const

/** Worst sliding 1 s and 10 ms windows of the real-clock starts through one of `line.limiters`. */
export const runPrecision = async <F>(line: Line<F>, label: string): Promise<LimiterRun> => {
  const make = line.limiters[label]
  if (make === undefined) throw new Error(`unknown limiter ${label}`)
  const take = await make(PRECISION.limit, PRECISION.burst)
  const { Effect } = line
  return runLimiter(label, "", PRECISION.limit, PRECISION.takers, (_limit, n, started) =>
    Effect.runPromise(
      Effect.forEach(Array.from({ length: n }, (_, i) => i), () => Effect.flatMap(take, () => Effect.sync(started)), {
        concurrency: "unbounded",
        discard: true
      })
    ).then(() => undefined))
}

/**
 * A child's main: `node <bundle> --workload <name> <rounds>` prints the rounds' figures as JSON;
 * `--precision <limiter>` prints one precision run's windows.
 */
export const workloadMain = async <F>(line: Line<F>): Promise<void> => {
  const precision = process.argv.indexOf("--precision")
  if (precision !== -1) {
    const run = await runPrecision(line, process.argv[precision + 1] ?? "")
    const { achievedPerSecond, completed, worst10ms, worst1s } = run
    process.stdout.write(`${JSON.stringify({ worst1s, worst10ms, achievedPerSecond, completed })}\n`)
    return
  }
  const at = process.argv.indexOf("--workload")
  const name = process.argv[at + 1] as WorkloadName
  const rounds = Number(process.argv[at + 2] ?? "5")
  if (!(workloadNames as ReadonlyArray<string>).includes(name)) throw new Error(`unknown workload ${name}`)
  const times: Array<number> = []
  for (let i = 0; i < rounds; i++) times.push(await runWorkload(line, name))
  process.stdout.write(`${JSON.stringify({ name, times })}\n`)
}
