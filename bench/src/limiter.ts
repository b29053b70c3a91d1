/**
 * Rate limiter precision and cost, real clock: 5,000 takers submitted at once against a quota of
 * 1,000 starts per second, for sluice and its peers, one after another in this process.
 *
 * Per limiter: the achieved rate (first start to last), the most starts in any sliding 1 s window
 * and in any 10 ms window (an upstream counting per second sees the first; a burst inside the
 * second shows in the second), and process CPU per take. Writes the "Rate limiter" section of
 * bench/RESULTS.md.
 */
import * as ExperimentalRateLimiter from "@effect/experimental/RateLimiter"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import Bottleneck from "bottleneck"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as EffectRateLimiter from "effect/RateLimiter"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import { RateLimiter as TokenLimiter } from "limiter"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import PQueue from "p-queue"
import { RateLimiterMemory, RateLimiterQueue } from "rate-limiter-flexible"
import type { LimiterRun, Submit } from "./lib/limiterRuns.js"
import { runLimiter } from "./lib/limiterRuns.js"
import { machineLine, markdownTable, textTable, writeSection } from "./lib/report.js"

const TAKERS = 5_000
const LIMIT = 1_000
const BURST = 10
/** Any 1 s window: the quota plus the burst. */
const TARGET_1S = LIMIT + BURST
/** Any 10 ms window: its even share of the quota (10) plus the burst. */
const TARGET_10MS = (LIMIT * 10) / 1000 + BURST
const TARGET_ACHIEVED = 0.995 * LIMIT

/**
 * Forks one root fiber per task on `runtime` and resolves when every one has ended: 5,000 takers
 * submitted at once, at about 1 µs per fork. `Effect.forEach` with unbounded concurrency does the
 * same at about 35 µs per fiber on this kind of machine and keeps the event loop busy for ~200 ms
 * at 5,000 (the fan-out baseline rows show both); the Effect contenders all use this helper.
 */
const forkAll = <R>(runtime: Runtime.Runtime<R>, n: number, task: (i: number) => Effect.Effect<unknown, unknown, R>) =>
  new Promise<void>((resolve, reject) => {
    const fork = Runtime.runFork(runtime)
    let ended = 0
    const onExit = (exit: Exit.Exit<unknown, unknown>) => {
      if (Exit.isFailure(exit)) reject(Cause.squash(exit.cause))
      else if (++ended === n) resolve()
    }
    for (let i = 0; i < n; i++) fork(task(i)).addObserver(onExit)
  })

const sluice: Submit = async (limit, n, started) => {
  const limiter = await Effect.runPromise(
    RateLimiter.make({ name: "bench", limit, window: "1 second", burst: BURST }).pipe(
      Effect.provide(RateLimiterStore.layerMemory)
    )
  )
  const task = Effect.zipRight(limiter.take(), Effect.sync(started))
  await forkAll(Runtime.defaultRuntime, n, () => task)
}

const effectCore = (algorithm: "token-bucket" | "fixed-window"): Submit => async (limit, n, started) => {
  const scope = Effect.runSync(Scope.make())
  const limiter = await Effect.runPromise(
    EffectRateLimiter.make({ limit, interval: "1 second", algorithm }).pipe(Scope.extend(scope))
  )
  const task = limiter(Effect.sync(started))
  try {
    await forkAll(Runtime.defaultRuntime, n, () => task)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const effectExperimental = (algorithm: "token-bucket" | "fixed-window"): Submit => async (limit, n, started) => {
  const managed = ManagedRuntime.make(
    ExperimentalRateLimiter.layer.pipe(Layer.provide(ExperimentalRateLimiter.layerStoreMemory))
  )
  const runtime = await managed.runtime()
  const withLimiter = await managed.runPromise(ExperimentalRateLimiter.makeWithRateLimiter)
  const limited = withLimiter({ key: `bench-${limit}`, limit, window: "1 second", algorithm, onExceeded: "delay" })
  const task = limited(Effect.sync(started))
  try {
    await forkAll(runtime, n, () => task)
  } finally {
    await managed.dispose()
  }
}

const bottleneck: Submit = async (limit, n, started) => {
  // The documented way to get N per second evenly: one start every 1000/N ms.
  const limiter = new Bottleneck({ minTime: 1000 / limit })
  await Promise.all(Array.from({ length: n }, () => limiter.schedule(async () => started())))
  await limiter.stop({ dropWaitingJobs: false })
}

const pQueue = (strict: boolean): Submit => async (limit, n, started) => {
  const queue = new PQueue({ interval: 1000, intervalCap: limit, strict })
  await Promise.all(Array.from({ length: n }, () => queue.add(() => started())))
}

const flexibleQueue: Submit = async (limit, n, started) => {
  const queue = new RateLimiterQueue(new RateLimiterMemory({ points: limit, duration: 1 }), { maxQueueSize: n })
  await Promise.all(Array.from({ length: n }, () => queue.removeTokens(1).then(() => started())))
}

const tokenLimiter: Submit = async (limit, n, started) => {
  const limiter = new TokenLimiter({ tokensPerInterval: limit, interval: "second" })
  await Promise.all(Array.from({ length: n }, () => limiter.removeTokens(1).then(() => started())))
}

/**
 * The harness alone: the same 5,000 fibers, no limiter. What every Effect contender pays before its
 * limiter does anything.
 */
const effectFanOut: Submit = (_limit, n, started) => forkAll(Runtime.defaultRuntime, n, () => Effect.sync(started))

/** The same fan-out through `Effect.forEach` with unbounded concurrency, for scale (see `forkAll`). */
const effectForEach: Submit = (_limit, n, started) =>
  Effect.runPromise(
    Effect.forEach(Array.from({ length: n }), () => Effect.sync(started), { concurrency: "unbounded", discard: true })
  )

/**
 * Evenly spaced starts cost one event-loop wake-up each: one timer per start, `1000 / limit` ms
 * apart, with nothing else. The CPU floor of any limiter that spaces starts evenly.
 */
const timerFloor: Submit = (limit, n, started) =>
  new Promise((resolve) => {
    let done = 0
    for (let i = 0; i < n; i++) {
      setTimeout(() => {
        started()
        if (++done === n) resolve()
      }, (i * 1000) / limit)
    }
  })

/**
 * The same fan-out where each fiber sleeps (Effect's Clock) until its evenly spaced start: what an
 * Effect limiter that puts every caller to sleep on its own timer pays before any bookkeeping.
 */
const effectSleepers: Submit = (limit, n, started) =>
  forkAll(
    Runtime.defaultRuntime,
    n,
    (i) => Effect.zipRight(Effect.sleep((i * 1000) / limit), Effect.sync(started))
  )

const contenders: ReadonlyArray<readonly [string, string, Submit]> = [
  ["sluice", `gcra, burst ${BURST}`, sluice],
  ["effect RateLimiter", "token-bucket", effectCore("token-bucket")],
  ["effect RateLimiter", "fixed-window", effectCore("fixed-window")],
  ["@effect/experimental", "token-bucket, delay", effectExperimental("token-bucket")],
  ["@effect/experimental", "fixed-window, delay", effectExperimental("fixed-window")],
  ["bottleneck", "minTime 1 ms", bottleneck],
  ["p-queue", "interval", pQueue(false)],
  ["p-queue", "interval, strict", pQueue(true)],
  ["rate-limiter-flexible", "RateLimiterQueue", flexibleQueue],
  ["limiter", "token bucket", tokenLimiter],
  ["baseline: Effect fan-out", "5,000 fibers, no limiter", effectFanOut],
  ["baseline: Effect.forEach fan-out", "the same through Effect.forEach, unbounded", effectForEach],
  ["baseline: timers", "one setTimeout per start, 1 ms apart", timerFloor],
  ["baseline: Effect sleepers", "the fan-out, each fiber asleep until its start", effectSleepers]
]

/** A run that has not finished after this long is cut off and reported over the starts so far. */
const CAP_MILLIS = 25_000
/**
 * Before measuring, each limiter runs once at a high rate with as many takers, so that its code is
 * compiled and the heap has grown to hold 5,000 waiting callers, as in a process that has run a while.
 */
const WARMUP = { limit: 100_000, n: TAKERS }

type Summary = Omit<LimiterRun, "starts">

/** In a child process: one contender, warmed up, measured, printed as one JSON line. */
const child = async (index: number) => {
  const [label, config, submit] = contenders[index]
  await runLimiter(label, config, WARMUP.limit, WARMUP.n, submit, 5_000)
  const { starts: _starts, ...summary } = await runLimiter(label, config, LIMIT, TAKERS, submit, CAP_MILLIS)
  console.log(`RESULT ${JSON.stringify(summary satisfies Summary)}`)
  // a limiter cut off at the cap may still hold timers
  process.exit(0)
}

/** Each contender in a fresh process, so that no limiter's heap or timers colour another's figures. */
const runInChild = (index: number): Summary | undefined => {
  const result = spawnSync(process.execPath, [
    ...process.execArgv,
    fileURLToPath(import.meta.url),
    `--contender=${index}`
  ], {
    encoding: "utf8",
    timeout: CAP_MILLIS + 30_000,
    maxBuffer: 16 * 1024 * 1024
  })
  const line = result.stdout.split("\n").find((l) => l.startsWith("RESULT "))
  if (line === undefined) {
    console.error(result.stderr.slice(-2000))
    return undefined
  }
  return JSON.parse(line.slice("RESULT ".length)) as Summary
}

const fmt = (x: number, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : "–")

const parent = () => {
  const runs: Array<readonly [string, string, Summary | undefined]> = []
  for (const [index, [label, config]] of contenders.entries()) {
    process.stdout.write(`${label} (${config}) ... `)
    const run = runInChild(index)
    console.log(
      run === undefined
        ? "no result (killed)"
        : `${(run.spanMillis / 1000).toFixed(1)} s${run.completed < run.n ? `, cut off at ${CAP_MILLIS / 1000} s` : ""}`
    )
    runs.push([label, config, run])
  }
  const reference = runs.find(([label]) => label === "rate-limiter-flexible")?.[2]
  const referenceCpu = reference?.cpuPerTakeMicros ?? Number.NaN
  const header = [
    "limiter",
    "config",
    "started",
    "achieved /s",
    "sustained /s",
    "worst 1 s",
    "worst 10 ms",
    "longest gap",
    "CPU / take",
    "CPU vs RLF queue"
  ]
  const rows = runs.map(([label, config, r]) =>
    r === undefined
      ? [label, config, "killed", "–", "–", "–", "–", "–", "–", "–"]
      : [
        label,
        config,
        r.completed === r.n ? String(r.n) : `${r.completed} (cut off at ${CAP_MILLIS / 1000} s)`,
        fmt(r.achievedPerSecond),
        fmt(r.sustainedPerSecond),
        String(r.worst1s),
        String(r.worst10ms),
        `${fmt(r.longestGapMillis, 1)} ms`,
        `${fmt(r.cpuPerTakeMicros, 1)} µs`,
        `${fmt(r.cpuPerTakeMicros / referenceCpu, 2)}x`
      ]
  )
  console.log()
  console.log(textTable(header, rows))

  const own = runs[0][2]
  const verdict = (ok: boolean) => (ok ? "met" : "**missed**")
  const targets = own === undefined ? ["- sluice produced no result"] : [
    `- worst 1 s window ≤ ${TARGET_1S}: ${own.worst1s} — ${verdict(own.worst1s <= TARGET_1S)}`,
    `- worst 10 ms window ≤ ${TARGET_10MS}: ${own.worst10ms} — ${verdict(own.worst10ms <= TARGET_10MS)}`,
    `- achieved ≥ ${TARGET_ACHIEVED.toFixed(0)}/s (99.5 % of the quota): ${fmt(own.achievedPerSecond, 1)}/s — ${
      verdict(own.achievedPerSecond >= TARGET_ACHIEVED)
    } (sustained after the first second: ${fmt(own.sustainedPerSecond, 1)}/s)`,
    `- CPU per take ≤ 1.0x rate-limiter-flexible's RateLimiterQueue: ${fmt(own.cpuPerTakeMicros / referenceCpu, 2)}x (${
      fmt(own.cpuPerTakeMicros, 1)
    } µs vs ${fmt(referenceCpu, 1)} µs) — ${verdict(own.cpuPerTakeMicros <= referenceCpu)}`
  ]
  const baseline = (label: string) => runs.find(([l]) => l === label)?.[2]
  const fanOut = baseline("baseline: Effect fan-out")
  const forEachFanOut = baseline("baseline: Effect.forEach fan-out")
  const timers = baseline("baseline: timers")
  const sleepers = baseline("baseline: Effect sleepers")
  if (own !== undefined && fanOut !== undefined && timers !== undefined && sleepers !== undefined) {
    const vsReference = (r: Summary) => `${fmt(r.cpuPerTakeMicros / referenceCpu, 1)}x`
    targets.push(
      "",
      `Where sluice's CPU goes (the baseline rows, same run): ${
        TAKERS.toLocaleString("en")
      } Effect fibers forked with \`Runtime.runFork\` (as every Effect contender's takers are) cost ${
        fmt(fanOut.cpuPerTakeMicros, 1)
      } µs per take with no limiter at all${
        forEachFanOut === undefined
          ? ""
          : ` (through \`Effect.forEach\` with unbounded concurrency, ${fmt(forEachFanOut.cpuPerTakeMicros, 1)} µs)`
      }; one event-loop wake-up per evenly spaced start costs ${fmt(timers.cpuPerTakeMicros, 1)} µs with bare timers (${
        vsReference(timers)
      } rate-limiter-flexible's queue); the same fibers each ` +
        `asleep on Effect's Clock until its start cost ${fmt(sleepers.cpuPerTakeMicros, 1)} µs (${
          vsReference(sleepers)
        }). These are process CPU, V8's garbage-collector threads included. sluice's own share, over the ` +
        `sleepers' row, is ${fmt(own.cpuPerTakeMicros - sleepers.cpuPerTakeMicros, 1)} µs per take. A ` +
        `limiter that spaces starts 1 ms apart cannot spend less than the timer floor, and an Effect ` +
        `limiter whose callers are fibers not less than the sleepers' row: the CPU target is out of reach ` +
        `of any limiter that paces its starts with Effect fibers as callers. rate-limiter-flexible's queue ` +
        `and p-queue spend less because their callers are promises and they release a whole window at ` +
        `once (their worst 10 ms window is the full quota).`,
      "",
      `The longest pause between two of sluice's starts was ${fmt(own.longestGapMillis, 1)} ms. ` +
        `5,000 takers reserve in the event loop's first turn and no timer fires until they all have; ` +
        `after such a stall (or any late timer), sluice's pacer lets \`burst\` start at once and ` +
        `spaces the rest, never catching up faster than the limits allow (an upstream enforcing the ` +
        `same GCRA would refuse the catch-up), so the stall's length is lost once from "achieved"; ` +
        `"sustained" is the rate after it.`
    )
  }
  console.log()
  console.log(targets.join("\n").replace(/\*\*/g, ""))

  writeSection(
    "Rate limiter",
    [
      machineLine(),
      "",
      `\`pnpm bench limiter\`: ${TAKERS.toLocaleString("en")} takers submitted at once, quota ${
        LIMIT.toLocaleString("en")
      } starts per second, real clock; the Effect contenders' takers are forked one by one with \`Runtime.runFork\`, the ` +
      `others' called in a loop. Each limiter runs in a fresh process, once with as many takers at ${
        WARMUP.limit.toLocaleString("en")
      }/s to warm up, then measured. Start instants are recorded by each task as it starts (\`performance.now()\`). ` +
      `"Achieved" is starts per second from the first start to the last; "sustained" from one second after the ` +
      `first start to the last (the rate once any initial burst is spent); "worst" windows are sliding; the longest gap is the longest time between two consecutive starts; CPU is ` +
      `process user + system time over the measured run, per take. A run not finished after ${
        CAP_MILLIS / 1000
      } s is cut off and summarised over the starts so far.`,
      "",
      markdownTable(header, rows),
      "",
      `Targets for sluice (GCRA, limit ${LIMIT}/s, burst ${BURST}):`,
      "",
      ...targets
    ].join("\n")
  )
}

const contenderArg = process.argv.find((arg) => arg.startsWith("--contender="))
if (contenderArg === undefined) {
  parent()
} else {
  child(Number(contenderArg.slice("--contender=".length))).catch((error) => {
    console.error(error)
    process.exit(1)
  })
}
