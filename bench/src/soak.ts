/**
 * `pnpm bench soak`: the chaos soak at benchmark size, on the real clock. 10^5 calls
 * (`SLUICE_SOAK_CALLS` changes it) go through one provider with every feature (a bulkhead with a
 * bounded queue and wait, a memory rate limiter, attempt and total timeouts, retries with backoff,
 * a circuit breaker) in waves; a seeded generator picks per call what the call does (succeed, fail
 * with a retryable error, die, hang, run slow), its per-call budgets, and whether its caller is
 * interrupted after a random delay. Budgets are a few milliseconds, so the run takes a minute or two.
 *
 * What it checks when the last wave has ended, and exits non-zero on any failure:
 * - the outcomes the provider counted (`provider.stats`) equal the exits its callers saw;
 * - no permit held or awaited, no call in flight, no fiber left alive (`Supervisor.track`);
 * - no window of the limiter's length holds more starts (instants taken inside the call body)
 *   than `limit + burst`;
 * - the limiter has lost no slot (a take that may not wait starts once a window has passed), and
 *   the breaker closes on a probe;
 * - the heap, after a forced collection, does not grow with the calls made.
 *
 * The CI-sized version of the same soak, on the TestClock, is packages/provider/test/soak.test.ts.
 */
import { Provider } from "@sluice/provider"
import { RateLimiterStore } from "@sluice/rate-limiter"
import { Cause, Duration, Effect, Exit, Fiber, Option, Supervisor } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Flaky, seeded } from "../../packages/provider/test/chaos.js"
import { formatBytes, machineLine, markdownTable, textTable, writeSection } from "./lib/report.js"

const CALLS = Number(process.env.SLUICE_SOAK_CALLS ?? 100_000)
const SEED = 20_261_201
/** Calls per wave, arriving spread over `ARRIVAL_MILLIS`; a wave ends when its last call has. */
const WAVE = 500
const ARRIVAL_MILLIS = 400
const INTERRUPT_SHARE = 0.15
/** The interrupt lands this long after the call began at the earliest: the call is registered by then. */
const INTERRUPT_MIN_MILLIS = 2
const INTERRUPT_MAX_MILLIS = 150
/** The heap is sampled after this share of the calls (the baseline: code warm, pools full), then every tenth. */
const WARM_UP_SHARE = 0.05
/** More growth than this per call after the baseline is a leak. */
const LEAK_BYTES_PER_CALL = 256

const LIMIT = 100
const WINDOW_MILLIS = 100
const BURST = 5
const MAX_ATTEMPTS = 3

const settings = {
  bulkhead: { permits: 32, maxWaiting: 100, maxWait: "40 millis" },
  rateLimiter: { limit: LIMIT, window: Duration.millis(WINDOW_MILLIS), burst: BURST, maxWait: "30 millis" },
  attemptTimeout: "25 millis",
  retry: {
    maxAttempts: MAX_ATTEMPTS,
    backoff: { initial: "5 millis", max: "20 millis", jitter: 0.5 },
    budget: { ratio: 0.3, minRetries: 20, window: "1 second" }
  },
  circuitBreaker: { consecutiveFailures: 8, openFor: "30 millis" }
} as const

const kinds = ["ok", "ok", "ok", "ok", "ok", "fail", "defect", "hang", "slow", "slow"] as const
type Kind = typeof kinds[number]

const budgets: ReadonlyArray<{ readonly label: string; readonly options: Provider.CallOptions }> = [
  { label: "provider's", options: {} },
  { label: "provider's", options: {} },
  { label: "totalTimeout 50 ms", options: { totalTimeout: "50 millis" } },
  { label: "totalTimeout 200 ms", options: { totalTimeout: "200 millis" } },
  { label: "retry: false", options: { retry: false } },
  { label: "attemptTimeout 10 ms", options: { attemptTimeout: "10 millis" } }
]

interface Planned {
  readonly kind: Kind
  readonly slowMillis: number
  readonly budget: number
  readonly arrival: number
  /** After the call began; -1: never interrupted. */
  readonly interruptAfter: number
}

const nowMillis = Effect.clockWith((clock) => Effect.sync(() => Number(clock.unsafeCurrentTimeNanos()) / 1e6))

/** How a caller saw its call end, by the provider's outcome names (a defect is a `call_error`). */
const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Provider.Outcome => {
  if (Exit.isSuccess(exit)) return "success"
  if (Cause.isInterruptedOnly(exit.cause)) return "interrupted"
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) return "call_error"
  const error = failure.value
  if (error instanceof Provider.CallTimeout) return "call_timeout"
  if (error instanceof Provider.TotalTimeout) return "total_timeout"
  if (error instanceof Provider.PermitWaitTimeout) return "permit_wait_timeout"
  if (error instanceof Provider.BulkheadFull) return "bulkhead_full"
  if (error instanceof Provider.RateLimitExceeded) return "rate_limited"
  if (error instanceof Provider.CircuitOpen) return "circuit_open"
  if (error instanceof Provider.RetryBudgetExhausted) return "retry_budget_exhausted"
  if (error instanceof Provider.RateLimiterStoreError) return "store_error"
  if (error instanceof Provider.ProviderClosed) return "closed"
  return "call_error"
}

const heapUsed = (): number => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc) {
    gc()
    gc()
  }
  return process.memoryUsage().heapUsed
}
const gcAvailable = typeof (globalThis as { gc?: unknown }).gc === "function"

/** The most starts in any window [t, t + length) and the first instant it begins at. */
const busiestWindow = (starts: Float64Array, length: number): { readonly count: number; readonly at: number } => {
  let best = 0
  let at = 0
  let from = 0
  for (let to = 0; to < starts.length; to++) {
    while (starts[to] - starts[from] >= length) from++
    if (to - from + 1 > best) {
      best = to - from + 1
      at = starts[from]
    }
  }
  return { count: best, at }
}

const makeProvider = Provider.make({ name: "soak", ...settings })

const soak = Effect.gen(function*() {
  const random = seeded(SEED)
  const pick = <A>(choices: ReadonlyArray<A>): A => choices[Math.floor(random() * choices.length)]
  const everything = yield* Supervisor.track
  const calls = yield* Supervisor.track

  const wallStart = performance.now()
  // the calls' own fibers are tracked apart from the provider's (its watchdog timer lives as long as it)
  const run = (provider: Effect.Effect.Success<typeof makeProvider>) =>
    Effect.gen(function*() {
      const startsBuffer = new Float64Array(CALLS * MAX_ATTEMPTS)
      let startCount = 0
      const bodies: Record<Kind, number> = { ok: 0, fail: 0, defect: 0, hang: 0, slow: 0 }
      const seen = Object.fromEntries(Object.keys((yield* provider.stats).outcomes).map((k) => [k, 0])) as Record<
        Provider.Outcome,
        number
      >
      let defects = 0
      let interruptsPlanned = 0
      const budgetMix = new Map<string, number>()

      const body = (plan: Planned): Effect.Effect<number, Flaky> =>
        Effect.flatMap(nowMillis, (now) => {
          startsBuffer[startCount++] = now
          bodies[plan.kind]++
          switch (plan.kind) {
            case "fail":
              return Effect.fail(new Flaky())
            case "defect":
              return Effect.die("boom")
            case "hang":
              return Effect.never
            case "slow":
              return Effect.as(Effect.sleep(plan.slowMillis), 1)
            default:
              return Effect.succeed(1)
          }
        })

      const heap: Array<{ readonly calls: number; readonly bytes: number }> = []
      const waves = Math.ceil(CALLS / WAVE)
      const warmUpWaves = Math.max(1, Math.round(waves * WARM_UP_SHARE))
      const sampleEvery = Math.max(1, Math.round(waves / 10))
      let done = 0
      heap.push({ calls: 0, bytes: heapUsed() })

      for (let wave = 0; wave < waves; wave++) {
        const size = Math.min(WAVE, CALLS - done)
        const plans: Array<Planned> = []
        for (let i = 0; i < size; i++) {
          const kind = pick(kinds)
          const slowMillis = Math.floor(random() * 40)
          const budget = Math.floor(random() * budgets.length)
          const arrival = Math.floor(random() * ARRIVAL_MILLIS)
          const interruptAfter = random() < INTERRUPT_SHARE
            ? INTERRUPT_MIN_MILLIS + Math.floor(random() * (INTERRUPT_MAX_MILLIS - INTERRUPT_MIN_MILLIS))
            : -1
          plans.push({ kind, slowMillis, budget, arrival, interruptAfter })
        }
        plans.sort((a, b) => a.arrival - b.arrival)
        const fibers: Array<Fiber.RuntimeFiber<number, unknown>> = []
        const interrupters: Array<Fiber.RuntimeFiber<unknown>> = []
        const waveStart = yield* nowMillis
        for (const plan of plans) {
          const wait = waveStart + plan.arrival - (yield* nowMillis)
          if (wait >= 1) yield* Effect.sleep(Duration.millis(wait))
          const { label, options } = budgets[plan.budget]
          budgetMix.set(label, (budgetMix.get(label) ?? 0) + 1)
          const fiber = yield* Effect.fork(provider.call(body(plan), options))
          fibers.push(fiber)
          if (plan.interruptAfter >= 0) {
            interruptsPlanned++
            interrupters.push(
              yield* Effect.fork(Effect.zipRight(Effect.sleep(plan.interruptAfter), Fiber.interrupt(fiber)))
            )
          }
        }
        for (const fiber of fibers) {
          const exit = yield* Fiber.await(fiber)
          const outcome = outcomeOf(exit)
          seen[outcome]++
          if (Exit.isFailure(exit) && Cause.isDie(exit.cause) && Option.isNone(Cause.failureOption(exit.cause))) {
            defects++
          }
        }
        // an interrupter whose call ended first has nothing left to do
        yield* Fiber.interruptAll(interrupters)
        done += size
        if (wave + 1 === warmUpWaves || ((wave + 1) % sampleEvery === 0 && wave + 1 > warmUpWaves)) {
          heap.push({ calls: done, bytes: heapUsed() })
        }
      }
      if (heap[heap.length - 1].calls !== done) heap.push({ calls: done, bytes: heapUsed() })
      const runMillis = performance.now() - wallStart

      // the run is over: nothing may be left
      yield* Effect.sleep(Duration.millis(5))
      const stats = yield* provider.stats
      const alive = (yield* calls.value).filter((fiber) => fiber.unsafePoll() === null).length

      // the limiter lost no slot: one window after the last start, a take that may not wait starts
      yield* Effect.sleep(Duration.millis(WINDOW_MILLIS + 10))
      const limiterFree = provider.rateLimiter === undefined
        ? false
        : Exit.isSuccess(yield* Effect.exit(provider.rateLimiter.take({ maxWait: 0 })))
      // the breaker, after its open time, lets a probe through and closes on its success
      yield* Effect.sleep(Duration.millis(40))
      const circuitBefore = (yield* provider.stats).circuit
      const probe = yield* Effect.exit(provider.call(Effect.succeed(1), { retry: false }))
      const circuitAfter = (yield* provider.stats).circuit

      const starts = startsBuffer.subarray(0, startCount).sort()
      return {
        stats,
        seen,
        defects,
        alive,
        bodies,
        budgetMix,
        interruptsPlanned,
        startCount,
        busiest: busiestWindow(starts, WINDOW_MILLIS),
        firstStart: starts[0] ?? 0,
        lastStart: starts[starts.length - 1] ?? 0,
        limiterFree,
        circuitBefore,
        circuitAfter,
        probe: Exit.isSuccess(probe) ? "succeeded" : `failed: ${Cause.pretty(probe.cause).split("\n")[0]}`,
        heap,
        runMillis,
        done
      }
    })
  const result = yield* Effect.scoped(
    Effect.flatMap(makeProvider, (provider) => Effect.supervised(run(provider), calls))
  ).pipe(
    Effect.provide(RateLimiterStore.layerMemory),
    Effect.supervised(everything)
  )
  // the provider's scope is closed: nothing of it, nor of its calls, may be alive
  yield* Effect.sleep(Duration.millis(5))
  const aliveAfterClose = (yield* everything.value).filter((fiber) => fiber.unsafePoll() === null).length
  const heapAfterClose = heapUsed()
  return { ...result, aliveAfterClose, heapAfterClose, wallMillis: performance.now() - wallStart }
})

/** The event-loop delay is sampled by a timer of this period; a sample's excess over it is the delay. */
const LAG_RESOLUTION_MILLIS = 5

const main = async () => {
  const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MILLIS })
  lag.enable()
  const r = await Effect.runPromise(soak)
  lag.disable()
  const failures: Array<string> = []
  const check = (ok: boolean, what: string) => {
    if (!ok) failures.push(what)
    return ok ? "yes" : "NO"
  }
  const n = (x: number) => x.toLocaleString("en")
  const lagMs = (nanos: number) => `${Math.max(0, nanos / 1e6 - LAG_RESOLUTION_MILLIS).toFixed(0)} ms`
  const phase = (p: Provider.PhaseSummary) => `${p.p50Millis.toFixed(0)} / ${p.p95Millis.toFixed(0)} ms`

  // outcomes: the provider's counters against what the callers saw
  const outcomeRows = (Object.keys(r.stats.outcomes) as Array<Provider.Outcome>).map((outcome) => {
    const counted = r.stats.outcomes[outcome]
    const seen = r.seen[outcome]
    return [
      outcome,
      n(counted),
      n(seen),
      check(counted === seen, `outcome ${outcome}: provider ${counted}, callers ${seen}`)
    ]
  })
  const countedTotal = Object.values(r.stats.outcomes).reduce((a, b) => a + b, 0)
  const seenTotal = Object.values(r.seen).reduce((a, b) => a + b, 0)
  outcomeRows.push([
    "all calls",
    n(countedTotal),
    n(seenTotal),
    check(
      countedTotal === seenTotal && seenTotal === r.done && r.stats.calls === r.done,
      `calls: ${r.stats.calls} counted, ${seenTotal} seen, ${r.done} made`
    )
  ])

  // leaks and bounds
  const bulkhead = r.stats.bulkhead
  const bound = LIMIT + BURST
  const baseline = r.heap.find((h) => h.calls > 0 && h.calls >= Math.round(CALLS * WARM_UP_SHARE)) ?? r.heap[0]
  const end = r.heap[r.heap.length - 1]
  const growthPerCall = end.calls > baseline.calls ? (end.bytes - baseline.bytes) / (end.calls - baseline.calls) : 0
  const spanSeconds = (r.lastStart - r.firstStart) / 1000
  const checkRows = [
    [
      "permits in flight / holders after the run",
      `${bulkhead.inFlight} / ${bulkhead.holders}`,
      "0 / 0",
      check(
        bulkhead.inFlight === 0 && bulkhead.holders === 0,
        `bulkhead holds ${bulkhead.inFlight} permits (${bulkhead.holders} holders)`
      )
    ],
    [
      "callers waiting for a permit after the run",
      n(bulkhead.waiting),
      "0",
      check(bulkhead.waiting === 0, `${bulkhead.waiting} callers still wait for a permit`)
    ],
    [
      "provider calls in flight after the run",
      n(r.stats.inFlight),
      "0",
      check(r.stats.inFlight === 0, `${r.stats.inFlight} calls in flight`)
    ],
    [
      "fibers alive after the run (calls, attempts, interrupters)",
      n(r.alive),
      "0",
      check(r.alive === 0, `${r.alive} fibers alive after the run`)
    ],
    [
      "fibers alive after the provider's scope closed",
      n(r.aliveAfterClose),
      "0",
      check(r.aliveAfterClose === 0, `${r.aliveAfterClose} fibers alive after close`)
    ],
    [
      `busiest ${WINDOW_MILLIS} ms window (starts in the call body)`,
      `${r.busiest.count} at +${((r.busiest.at - r.firstStart) / 1000).toFixed(2)} s`,
      `≤ limit + burst = ${bound}`,
      check(r.busiest.count <= bound, `${r.busiest.count} starts in one ${WINDOW_MILLIS} ms window, over ${bound}`)
    ],
    [
      "limiter lost no slot: a take with maxWait 0, one window after the run",
      r.limiterFree ? "started" : "refused",
      "started",
      check(r.limiterFree, "the limiter refused a take one window after the run")
    ],
    [
      "breaker at the end, after its open time / after a probe",
      `${r.circuitBefore} / ${r.circuitAfter} (probe ${r.probe})`,
      "closed after the probe",
      check(
        r.circuitAfter === "closed" && r.probe === "succeeded",
        `the breaker is ${r.circuitAfter} after a probe that ${r.probe}`
      )
    ],
    [
      `heap used, after a forced GC${gcAvailable ? "" : " (unavailable: no --expose-gc)"}: at ${
        n(baseline.calls)
      } calls / at ${n(end.calls)} / provider closed`,
      `${formatBytes(baseline.bytes)} / ${formatBytes(end.bytes)} / ${formatBytes(r.heapAfterClose)}`,
      `growth ≤ ${LEAK_BYTES_PER_CALL} B per call`,
      gcAvailable
        ? check(growthPerCall <= LEAK_BYTES_PER_CALL, `heap grew ${growthPerCall.toFixed(0)} B per call`)
        : "not checked"
    ]
  ]

  const attempts = r.stats.attempts
  const notes = [
    `${n(r.done)} calls in ${
      Math.ceil(r.done / WAVE)
    } waves of ${WAVE} (arriving over ${ARRIVAL_MILLIS} ms, each wave awaited), seed ${SEED}; ` +
    `run ${(r.runMillis / 1000).toFixed(1)} s, wall time in all ${(r.wallMillis / 1000).toFixed(1)} s`,
    `provider: bulkhead ${settings.bulkhead.permits} permits, maxWaiting ${settings.bulkhead.maxWaiting}, maxWait ` +
    `${settings.bulkhead.maxWait}; GCRA limiter ${LIMIT} per ${WINDOW_MILLIS} ms, burst ${BURST}, maxWait ` +
    `${settings.rateLimiter.maxWait} (memory store); attemptTimeout ${settings.attemptTimeout}; ${MAX_ATTEMPTS} attempts, ` +
    `backoff ${settings.retry.backoff.initial} to ${settings.retry.backoff.max} (jitter ${settings.retry.backoff.jitter}), ` +
    `retry budget ${settings.retry.budget.ratio} per first attempt (at least ${settings.retry.budget.minRetries} per ` +
    `${settings.retry.budget.window}); the breaker opens after ${settings.circuitBreaker.consecutiveFailures} failures ` +
    `in a row, for ${settings.circuitBreaker.openFor}`,
    `call bodies started: ${n(r.startCount)} (${n(attempts)} attempts counted by the provider): ` +
    (Object.entries(r.bodies) as Array<[Kind, number]>).map(([k, v]) => `${k} ${n(v)}`).join(", ") +
    `; "hang" is Effect.never, ended by its budget; "slow" sleeps 0-39 ms`,
    `the limiter binds within a wave (the busiest window above): ${n(WAVE * 1000 / ARRIVAL_MILLIS)} arrivals per s ` +
    `plus retries against its ${n(LIMIT * 1000 / WINDOW_MILLIS)} per s, refused past its maxWait (rate_limited); the ` +
    `mean rate below is lower because each wave waits for its slowest call and an open breaker refuses at once`,
    `starts: ${n(r.startCount)} over ${spanSeconds.toFixed(1)} s, ${
      (r.startCount / Math.max(spanSeconds, 1e-9)).toFixed(0)
    } per s ` +
    `against the limiter's ${(LIMIT * 1000 / WINDOW_MILLIS).toFixed(0)} per s`,
    `per-call budgets: ${[...r.budgetMix].map(([k, v]) => `${k} ${n(v)}`).join(", ")}; ` +
    `${
      n(r.interruptsPlanned)
    } callers interrupted ${INTERRUPT_MIN_MILLIS}-${INTERRUPT_MAX_MILLIS} ms after their call began ` +
    `(those whose call had ended first count by their call's exit)`,
    `phases over the provider's last ${r.stats.permitWait.count} attempts (p50 / p95): permit wait ` +
    `${phase(r.stats.permitWait)}, limiter wait ${phase(r.stats.limiterWait)}, call ${phase(r.stats.callTime)}; ` +
    `event-loop delay p50 / p99 / max ${lagMs(lag.percentile(50))} / ${lagMs(lag.percentile(99))} / ${
      lagMs(lag.max)
    } ` +
    `(the machine is shared: a budget ends when its timer fires, late by that much)`,
    `call_error includes ${n(r.defects)} defects (Effect.die in the body)`,
    `heap after a forced GC by calls made: ${
      r.heap.map((h) => `${n(h.calls)}: ${formatBytes(h.bytes)}`).join(", ")
    }; ` +
    `growth after the warm-up ${growthPerCall.toFixed(0)} B per call`
  ]

  const outcomeHeader = ["outcome", "provider.stats", "callers' exits", "agree"]
  const checkHeader = ["check", "measured", "bound", "ok"]
  console.log(`\nOutcomes of ${n(r.done)} calls\n`)
  console.log(textTable(outcomeHeader, outcomeRows))
  console.log(`\nLeaks and bounds\n`)
  console.log(textTable(checkHeader, checkRows))
  console.log(`\n${notes.map((x) => `- ${x}`).join("\n")}`)

  writeSection(
    "Soak",
    `Measured by \`pnpm bench soak\` on ${machineLine()}, on the real clock. The script exits non-zero when a ` +
      `check fails.\n\n### Outcomes of ${n(r.done)} calls\n\n${markdownTable(outcomeHeader, outcomeRows)}\n\n` +
      `### Leaks and bounds\n\n${markdownTable(checkHeader, checkRows)}\n\n${notes.map((x) => `- ${x}`).join("\n")}` +
      (failures.length > 0 ? `\n\nFailed:\n\n${failures.map((x) => `- ${x}`).join("\n")}` : "")
  )

  if (failures.length > 0) {
    console.error(`\nsoak FAILED:\n${failures.map((x) => `- ${x}`).join("\n")}`)
  } else {
    console.log("\nsoak: every check passed")
  }
  // exits even with a fiber left alive: a leaked Effect.never keeps Node's event loop running for ever
  process.exit(failures.length > 0 ? 1 : 0)
}

main()
