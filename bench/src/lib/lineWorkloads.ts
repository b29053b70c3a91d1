/**
 * The workloads of `bench effect4`, written once for both lines: each line's entry passes its own
 * `effect` module and its own sluice bulkhead, so the same code is timed on Effect 3 and Effect 4.
 * The names used here (`succeed`, `flatMap`, `suspend`, `forEach`, `runPromise`) mean the same on
 * both majors.
 */

/** The part of an `effect` module the workloads use, typed loosely enough for either major. */
export interface EffectModule<F> {
  readonly succeed: (value: number) => F
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
}

export const LIMIT = 16
export const workloadNames = [
  "uncontended/sluice",
  "uncontended/effect-semaphore",
  "in-flight-64/sluice",
  "in-flight-64/effect-semaphore",
  "fan-out/sluice",
  "fan-out/effect-semaphore"
] as const
export type WorkloadName = typeof workloadNames[number]

/** Operations per round, per workload group. */
export const sizes: Record<string, number> = { uncontended: 1_000_000, "in-flight-64": 512_000, "fan-out": 4_000 }

/** Times one round of `name` and returns nanoseconds per guarded call. */
export const runWorkload = async <F>(line: Line<F>, name: WorkloadName): Promise<number> => {
  const { Effect } = line
  const [group, guardName] = name.split("/") as [string, string]
  const n = sizes[group]!
  const guard = guardName === "sluice" ? line.bulkhead(LIMIT) : line.semaphore(LIMIT)
  /** `count` guarded runs of `task`, one after another, in one fiber. */
  const loop = (count: number, task: F): F =>
    Effect.suspend(function next(i = 0): F {
      return i === count ? Effect.void : Effect.flatMap(guard(task), () => next(i + 1))
    })
  const range = (count: number) => Array.from({ length: count }, (_, i) => i)
  let program: F
  switch (group) {
    case "uncontended":
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

/** A child's main: `node <bundle> --workload <name> <rounds>` prints the rounds' figures as JSON. */
export const workloadMain = async <F>(line: Line<F>): Promise<void> => {
  const at = process.argv.indexOf("--workload")
  const name = process.argv[at + 1] as WorkloadName
  const rounds = Number(process.argv[at + 2] ?? "5")
  if (!(workloadNames as ReadonlyArray<string>).includes(name)) throw new Error(`unknown workload ${name}`)
  const times: Array<number> = []
  for (let i = 0; i < rounds; i++) times.push(await runWorkload(line, name))
  process.stdout.write(`${JSON.stringify({ name, times })}\n`)
}
