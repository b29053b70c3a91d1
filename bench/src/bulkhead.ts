/**
 * `pnpm bench bulkhead`: the bulkhead against Effect's Semaphore and the Node peers.
 *
 * Every variant runs in a child process of its own (fresh heap, honest peak RSS), five rounds
 * each; the table shows the median. Suites:
 * - fan-out: 200,000 tiny tasks submitted at once through a limit of 16;
 * - batch: the same work through a batch helper (fixed workers) instead of a fan-out;
 * - scaling: cost per task with 1,000 to 100,000 callers queued, and wake-ups per release;
 * - uncontended: calls one after another through a free permit, in one Effect loop.
 *
 * A "tiny task" yields to the scheduler once (Effect.yieldNow, or an awaited resolved promise),
 * so that permits are really held across a suspension and really contended.
 */
import { Bulkhead } from "@sluice/bulkhead"
import { Sema } from "async-sema"
import { bulkhead as cockatielBulkhead } from "cockatiel"
import { Chunk, Deferred, Effect, Exit, FiberId, Option, Queue, Stream, Supervisor, Take } from "effect"
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import pLimit from "p-limit"
import PQueue from "p-queue"
import {
  formatBytes,
  formatNs,
  formatRatio,
  machineLine,
  markdownTable,
  median,
  textTable,
  withPeakRss,
  writeSection
} from "./lib/report.js"

const LIMIT = 16
const FAN_OUT = 200_000
const ROUNDS = 5
const UNCONTENDED = 1_000_000

const effectTask = Effect.yieldNow()
const promiseTask = async (): Promise<number> => {
  await Promise.resolve()
  return 1
}
const range = (n: number): Array<number> => Array.from({ length: n }, (_, i) => i)

interface Measurement {
  readonly nsPerTask: number
  readonly peakRss: number
  readonly extra?: Record<string, number>
}

/** One round of a variant: returns the elapsed nanoseconds for `tasks` tasks. */
type Round = () => Promise<number>

const timeEffect = (tasks: number, effect: Effect.Effect<unknown, unknown>): Round => async () => {
  const start = process.hrtime.bigint()
  await Effect.runPromise(effect)
  return Number(process.hrtime.bigint() - start) / tasks
}

const timePromise = (tasks: number, run: () => Promise<unknown>): Round => async () => {
  const start = process.hrtime.bigint()
  await run()
  return Number(process.hrtime.bigint() - start) / tasks
}

// ---------------------------------------------------------------------------------------------
// the variants (each builds fresh state per round)
// ---------------------------------------------------------------------------------------------

const effectTasks = { sync: Effect.succeed(1), yield: effectTask }
const promiseTasks = { sync: async (): Promise<number> => 1, yield: promiseTask }
type TaskKind = keyof typeof effectTasks

const fanOutEffect = (
  n: number,
  task: Effect.Effect<unknown>,
  guard: (e: Effect.Effect<unknown>) => Effect.Effect<unknown, unknown>
) =>
  timeEffect(
    n,
    Effect.forEach(range(n), () => guard(task), { concurrency: "unbounded", discard: true }) as Effect.Effect<unknown>
  )

const fanOutVariants = (kind: TaskKind): Record<string, (n: number) => Round> => ({
  [`fan-out-${kind}/sluice`]: (n) => () => {
    const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: LIMIT })
    return fanOutEffect(n, effectTasks[kind], (e) => bulkhead.run(e))()
  },
  [`fan-out-${kind}/effect-semaphore`]: (n) => () => {
    const semaphore = Effect.unsafeMakeSemaphore(LIMIT)
    return fanOutEffect(n, effectTasks[kind], semaphore.withPermits(1))()
  },
  [`fan-out-${kind}/effect-no-limit`]: (n) => () => fanOutEffect(n, effectTasks[kind], (e) => e)(),
  [`fan-out-${kind}/p-limit`]: (n) => () => {
    const limit = pLimit(LIMIT)
    return timePromise(n, () => Promise.all(range(n).map(() => limit(promiseTasks[kind]))))()
  },
  [`fan-out-${kind}/async-sema`]: (n) => () => {
    const sema = new Sema(LIMIT)
    return timePromise(n, () =>
      Promise.all(
        range(n).map(async () => {
          await sema.acquire()
          try {
            return await promiseTasks[kind]()
          } finally {
            sema.release()
          }
        })
      ))()
  },
  [`fan-out-${kind}/p-queue`]: (n) => () => {
    const queue = new PQueue({ concurrency: LIMIT })
    return timePromise(n, () => Promise.all(range(n).map(() => queue.add(promiseTasks[kind]))))()
  },
  [`fan-out-${kind}/cockatiel`]: (n) => () => {
    const policy = cockatielBulkhead(LIMIT, Infinity)
    return timePromise(n, () => Promise.all(range(n).map(() => policy.execute(promiseTasks[kind]))))()
  }
})

/**
 * `Bulkhead.mapStream` with Effect's `Queue` as the hand-off from the workers to the consumer in
 * place of its own: the same pool of workers pulling the same shared input, each result offered to
 * a bounded `Queue` of `Take`s that the stream reads. What the hand-off is measured against.
 */
const mapStreamQueue = <A, B>(
  self: Stream.Stream<A>,
  bulkhead: Bulkhead.Bulkhead,
  f: (a: A) => Effect.Effect<B>
): Stream.Stream<B, Bulkhead.BulkheadError> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const workers = bulkhead.maxPermits
    const buffer = workers
    const pull = yield* Stream.toPull(Stream.rechunk(self, buffer))
    let chunk: Chunk.Chunk<A> = Chunk.empty()
    let index = 0
    let exhausted = false
    let pulling: Deferred.Deferred<void> | undefined
    const next: Effect.Effect<Option.Option<A>> = Effect.suspend(function take(): Effect.Effect<Option.Option<A>> {
      if (index < chunk.length) return Effect.succeed(Option.some(Chunk.unsafeGet(chunk, index++)))
      if (exhausted) return Effect.succeed(Option.none())
      if (pulling !== undefined) return Effect.zipRight(Deferred.await(pulling), Effect.suspend(take))
      const done = Deferred.unsafeMake<void>(FiberId.none)
      pulling = done
      return pull.pipe(
        Effect.match({
          onFailure: () => {
            exhausted = true
          },
          onSuccess: (pulled) => {
            chunk = pulled
            index = 0
          }
        }),
        Effect.ensuring(Effect.suspend(() => {
          pulling = undefined
          return Deferred.done(done, Exit.void)
        })),
        Effect.zipRight(Effect.suspend(take))
      )
    })
    const out = yield* Queue.bounded<Take.Take<B, Bulkhead.BulkheadError>>(buffer)
    let running = workers
    const worker: Effect.Effect<void> = Effect.gen(function*() {
      for (;;) {
        const item = yield* next
        if (Option.isNone(item)) {
          if (--running === 0) yield* Queue.offer(out, Take.end)
          return
        }
        const exit = yield* Effect.exit(bulkhead.run(f(item.value)))
        if (Exit.isFailure(exit)) return yield* Queue.offer(out, Take.failCause(exit.cause))
        yield* Queue.offer(out, Take.of(exit.value))
      }
    })
    for (let i = 0; i < workers; i++) yield* Effect.forkScoped(worker)
    return Stream.flattenTake(Stream.fromQueue(out))
  }))

const variants: Record<string, (n: number) => Round> = {
  ...fanOutVariants("sync"),
  ...fanOutVariants("yield"),
  "batch/sluice-forEach": (n) => () => {
    const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: LIMIT })
    return timeEffect(n, Bulkhead.forEach(range(n), bulkhead, () => effectTask))()
  },
  "batch/sluice-mapStream": (n) => () => {
    const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: LIMIT })
    return timeEffect(n, Stream.range(1, n).pipe(Bulkhead.mapStream(bulkhead, () => effectTask), Stream.runDrain))()
  },
  "batch/sluice-mapStream-queue": (n) => () => {
    const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: LIMIT })
    return timeEffect(
      n,
      Stream.range(1, n).pipe((s) => mapStreamQueue(s, bulkhead, () => effectTask), Stream.runDrain)
    )()
  },
  "batch/effect-forEach": (n) => () =>
    timeEffect(n, Effect.forEach(range(n), () => effectTask, { concurrency: LIMIT, discard: true }))(),
  "batch/p-limit": (n) => () => {
    const limit = pLimit(LIMIT)
    return timePromise(n, () => Promise.all(range(n).map(() => limit(promiseTask))))()
  },
  "scaling/sluice": (n) => fanOutVariants("yield")["fan-out-yield/sluice"](n),
  "scaling/effect-semaphore": (n) => fanOutVariants("yield")["fan-out-yield/effect-semaphore"](n),
  "scaling/effect-no-limit": (n) => fanOutVariants("yield")["fan-out-yield/effect-no-limit"](n),
  "uncontended/bare": (n) => () => timeEffect(n, loop(n, Effect.succeed(1)))(),
  "uncontended/sluice": (n) => () => {
    const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: LIMIT })
    return timeEffect(n, loop(n, bulkhead.run(Effect.succeed(1))))()
  },
  "uncontended/effect-semaphore": (n) => () => {
    const semaphore = Effect.unsafeMakeSemaphore(LIMIT)
    return timeEffect(n, loop(n, semaphore.withPermits(1)(Effect.succeed(1))))()
  },
  "uncontended/p-limit": (n) => async () => {
    const limit = pLimit(LIMIT)
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) await limit(() => 1)
    return Number(process.hrtime.bigint() - start) / n
  },
  "uncontended/async-sema": (n) => async () => {
    const sema = new Sema(LIMIT)
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) {
      await sema.acquire()
      sema.release()
    }
    return Number(process.hrtime.bigint() - start) / n
  }
}

/** n runs of `effect`, one after another, in one fiber. */
const loop = (n: number, effect: Effect.Effect<unknown, unknown>): Effect.Effect<void, unknown> =>
  Effect.suspend(function next(i = 0): Effect.Effect<void, unknown> {
    return i === n ? Effect.void : Effect.flatMap(effect, () => next(i + 1))
  })

/** Fibers resumed per task: a semaphore that wakes every waiter on each release shows it here. */
class ResumeCounter extends Supervisor.AbstractSupervisor<number> {
  resumes = 0
  value = Effect.sync(() => this.resumes)
  override onResume(): void {
    this.resumes++
  }
}

const scalingVariants = ["scaling/sluice", "scaling/effect-semaphore", "scaling/effect-no-limit"] as const
type ScalingVariant = typeof scalingVariants[number]

const wakeUps = async (variant: ScalingVariant, n: number): Promise<number> => {
  const counter = new ResumeCounter()
  const guard = (): (e: Effect.Effect<void>) => Effect.Effect<void, unknown> => {
    switch (variant) {
      case "scaling/sluice": {
        const bulkhead = Bulkhead.unsafeMake({ name: "bench", permits: LIMIT })
        return (e) => bulkhead.run(e)
      }
      case "scaling/effect-semaphore":
        return Effect.unsafeMakeSemaphore(LIMIT).withPermits(1)
      case "scaling/effect-no-limit":
        return (e) => e
    }
  }
  const effect = Effect.suspend(() => {
    const run = guard()
    return Effect.forEach(range(n), () => run(effectTask), { concurrency: "unbounded", discard: true })
  })
  await Effect.runPromise(Effect.supervised(effect, counter))
  return counter.resumes / n
}

// ---------------------------------------------------------------------------------------------
// child: run one variant, print one JSON line
// ---------------------------------------------------------------------------------------------

const runChild = async (variant: string, n: number, rounds: number): Promise<void> => {
  const make = variants[variant]
  if (make === undefined) throw new Error(`unknown variant ${variant}`)
  const { peakRss, value: times } = await withPeakRss(async () => {
    const times: Array<number> = []
    for (let i = 0; i < rounds; i++) times.push(await make(n)())
    return times
  })
  const extra: Record<string, number> = {}
  if ((scalingVariants as ReadonlyArray<string>).includes(variant)) {
    extra.wakeUpsPerTask = await wakeUps(variant as ScalingVariant, n)
  }
  const result: Measurement = { nsPerTask: median(times), peakRss, extra }
  process.stdout.write(`${JSON.stringify(result)}\n`)
}

const measure = (variant: string, n: number, rounds = ROUNDS): Measurement => {
  const child = spawnSync(
    process.execPath,
    [
      ...process.execArgv,
      // Effect's Semaphore with 200,000 fibers forked at once needs more than the default 4 GB heap
      "--max-old-space-size=16384",
      fileURLToPath(import.meta.url),
      "--child",
      variant,
      String(n),
      String(rounds)
    ],
    { encoding: "utf8", maxBuffer: 1 << 20, env: process.env }
  )
  if (child.status !== 0) throw new Error(`${variant} (n=${n}) failed:\n${child.stderr}`)
  const line = child.stdout.trim().split("\n").pop() ?? ""
  const result = JSON.parse(line) as Measurement
  process.stderr.write(`  ${variant} n=${n}: ${formatNs(result.nsPerTask)}/task, ${formatBytes(result.peakRss)}\n`)
  return result
}

// ---------------------------------------------------------------------------------------------
// parent: run every variant, print the tables, update RESULTS.md
// ---------------------------------------------------------------------------------------------

/**
 * `SLUICE_BENCH_ONLY=batch` (or fan-out, scaling, uncontended): run that group alone and replace
 * only its tables in RESULTS.md, the other groups' figures kept as they were.
 */
const only = process.env.SLUICE_BENCH_ONLY
const runs = (group: string) => only === undefined || only === group

/** Replaces the `### ` tables of the Bulkhead section whose titles `fresh` holds, keeping the rest. */
const replaceTables = (fresh: ReadonlyArray<string>): string => {
  const current = readFileSync(process.env.SLUICE_BENCH_RESULTS ?? "", "utf8")
  const start = current.indexOf("## Bulkhead\n")
  const end = current.indexOf("\n## ", start + 1)
  const body = current.slice(start, end === -1 ? undefined : end).split("\n### ")
  const titleOf = (table: string) => table.slice(0, table.indexOf(":"))
  const tables = body.slice(1).map((old) => {
    const table = fresh.find((t) => titleOf(t.slice(4)) === titleOf(old))
    return table === undefined ? old : `${table.slice(4).trimEnd()}\n`
  })
  return [body[0].replace(/^## Bulkhead\n\n/, "").trimEnd() + "\n", ...tables].join("\n### ")
}

const main = (): void => {
  const sections: Array<string> = []
  const print = (title: string, header: Array<string>, rows: Array<Array<string>>, notes: Array<string>) => {
    console.log(`\n${title}\n${textTable(header, rows)}\n${notes.map((n) => `  ${n}`).join("\n")}`)
    const measured = only === undefined ? [] : [
      `measured alone by \`SLUICE_BENCH_ONLY=${only} pnpm bench bulkhead\` on ${machineLine()}, median of ${ROUNDS} rounds`
    ]
    sections.push(
      `### ${title}\n\n${markdownTable(header, rows)}\n\n${[...measured, ...notes].map((n) => `- ${n}`).join("\n")}`
    )
  }

  // fan-out, with a task that completes at once and with one that yields once
  for (const kind of runs("fan-out") ? ["sync", "yield"] as const : []) {
    const peers = ["sluice", "effect-semaphore", "effect-no-limit", "p-limit", "async-sema", "p-queue", "cockatiel"]
    const fanOut = peers.map((name) => {
      // Effect's Semaphore wakes every waiter on each release: with a yielding task and 200,000
      // waiters it would run for hours, so it is measured at 4,000 (see Scaling)
      const n = kind === "yield" && name === "effect-semaphore" ? 4_000 : FAN_OUT
      return { name, n, m: measure(`fan-out-${kind}/${name}`, n, n === FAN_OUT ? ROUNDS : 3) }
    })
    const byName = (name: string) => fanOut.find((r) => r.name === name)?.m.nsPerTask ?? NaN
    const sluice = byName("sluice")
    print(
      `Fan-out (${kind === "sync" ? "task completes at once" : "task yields once"}): ${
        FAN_OUT.toLocaleString("en")
      } tasks submitted at once, limit ${LIMIT}`,
      ["variant", "tasks", "per task", "vs sluice", "peak RSS"],
      fanOut.map(({ m, n, name }) => [
        name,
        n.toLocaleString("en"),
        formatNs(m.nsPerTask),
        formatRatio(m.nsPerTask / sluice),
        formatBytes(m.peakRss)
      ]),
      [
        `target: sluice ≤ 1.0x Effect's Semaphore — measured ${formatRatio(sluice / byName("effect-semaphore"))}${
          kind === "yield" ? " (Effect's Semaphore at 4,000 tasks, sluice at 200,000)" : ""
        }`,
        `effect-no-limit is Effect.forEach({ concurrency: "unbounded" }) with no bound at all: the cost of ${
          FAN_OUT.toLocaleString("en")
        } fibers alive at once, which any fan-out in Effect pays before a bulkhead adds anything`,
        kind === "sync"
          ? "a task that completes at once never contends in Effect (each forked fiber runs to its end in turn); " +
            "the promise peers still queue, since every promise resolves on a later microtask"
          : "every variant holds its permit across one suspension, so the limit really binds"
      ]
    )
  }

  if (runs("batch")) {
    // batch
    const batch = [
      "sluice-forEach",
      "sluice-mapStream",
      "sluice-mapStream-queue",
      "effect-forEach",
      "p-limit"
    ].map((name) => ({
      name,
      m: measure(`batch/${name}`, FAN_OUT)
    }))
    const forEachNs = batch.find((r) => r.name === "effect-forEach")?.m.nsPerTask ?? NaN
    print(
      `Batch: ${FAN_OUT.toLocaleString("en")} tasks through fixed workers, limit ${LIMIT}`,
      ["variant", "per task", "vs Effect.forEach", "peak RSS"],
      batch.map((
        { m, name }
      ) => [name, formatNs(m.nsPerTask), formatRatio(m.nsPerTask / forEachNs), formatBytes(m.peakRss)]),
      [
        `target: the batch helper ≤ 1.3x Effect.forEach({ concurrency: ${LIMIT} }) — forEach measured ${
          formatRatio(batch[0].m.nsPerTask / forEachNs)
        }, mapStream ${formatRatio(batch[1].m.nsPerTask / forEachNs)}`,
        "sluice-mapStream-queue is mapStream with Effect's Queue (of Takes) in place of its hand-off from the workers " +
        `to the consumer: the hand-off's cost ${
          formatRatio(batch[1].m.nsPerTask / batch[2].m.nsPerTask)
        } of the Queue's`
      ]
    )
  }

  if (runs("scaling")) {
    // scaling: Effect's Semaphore is quadratic, so it is measured at smaller queues and fewer rounds
    const scaling = [
      ...[1_000, 10_000, 100_000].map((n) => ({ name: "sluice", n, m: measure("scaling/sluice", n) })),
      ...[1_000, 2_000, 4_000].map((n) => ({
        name: "effect-semaphore",
        n,
        m: measure("scaling/effect-semaphore", n, 3)
      })),
      ...[1_000, 100_000].map((n) => ({ name: "effect-no-limit", n, m: measure("scaling/effect-no-limit", n) }))
    ]
    const sluiceScaling = scaling.filter((r) => r.name === "sluice").map((r) => r.m.nsPerTask)
    print(
      `Scaling: cost per task with n callers queued at once, limit ${LIMIT}`,
      ["variant", "queued", "per task", "wake-ups per task", "peak RSS"],
      scaling.map(({ m, n, name }) => [
        name,
        n.toLocaleString("en"),
        formatNs(m.nsPerTask),
        (m.extra?.wakeUpsPerTask ?? NaN).toFixed(2),
        formatBytes(m.peakRss)
      ]),
      [
        `target: flat cost as the queue grows — sluice 100,000 vs 1,000: ${
          formatRatio(sluiceScaling[2] / sluiceScaling[0])
        }`,
        "wake-ups per task: fiber resumptions counted by a Supervisor, divided by tasks. effect-no-limit is the same " +
        "fan-out with no bound: what the fibers and the task's own yield cost. sluice's excess over it is the wake-ups " +
        "per release (one grant, one resume); Effect's Semaphore's grows with the queue",
        "Effect's Semaphore is measured at 1,000-4,000 (3 rounds): every release wakes every waiter, so larger queues take minutes"
      ]
    )
  }

  if (runs("uncontended")) {
    // uncontended
    const uncontended = ["bare", "sluice", "effect-semaphore", "p-limit", "async-sema"].map((name) => ({
      name,
      m: measure(`uncontended/${name}`, UNCONTENDED)
    }))
    const bare = uncontended[0].m.nsPerTask
    const semaphoreUncontended = uncontended[2].m.nsPerTask
    print(
      `Uncontended: ${UNCONTENDED.toLocaleString("en")} calls one after another through a free permit`,
      ["variant", "per call", "overhead over bare", "vs Effect's Semaphore"],
      uncontended.map(({ m, name }) => [
        name,
        formatNs(m.nsPerTask),
        name === "bare" ? "-" : formatNs(m.nsPerTask - bare),
        formatRatio(m.nsPerTask / semaphoreUncontended)
      ]),
      [
        `target: sluice ≤ 0.25x Effect's Semaphore — measured ${
          formatRatio(uncontended[1].m.nsPerTask / semaphoreUncontended)
        }`,
        "p-limit and async-sema are awaited promise loops: each call pays a microtask turn that an Effect loop does not"
      ]
    )
  }

  writeSection(
    "Bulkhead",
    only === undefined
      ? `Measured by \`pnpm bench bulkhead\` on ${machineLine()}. Median of ${ROUNDS} rounds, each variant in its ` +
        `own process.\n\n${sections.join("\n\n")}`
      : replaceTables(sections)
  )
}

if (process.argv[2] === "--child") {
  await runChild(process.argv[3], Number(process.argv[4]), Number(process.argv[5]))
} else {
  main()
}
