/** @internal */
import type { Bulkhead } from "@sluice/bulkhead"
import type { RateLimiter } from "@sluice/rate-limiter"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Tracer from "effect/Tracer"
import * as ProviderError from "../ProviderError.js"
import type { Settlement } from "../ProviderOptions.js"
import type * as Api from "../ProviderStats.js"
import { CircuitBreaker } from "./circuitBreaker.js"
import {
  circuitGauge,
  circuitValue,
  interruptedTotal,
  Labels,
  outcomeNames,
  outcomesTotal,
  recordOf
} from "./metrics.js"
import { defaultsOf, type PerCall, type Resolved } from "./options.js"
import { RetryBudget } from "./retryBudget.js"
import { DimensionUsage, Samples, StartTimes } from "./samples.js"
import { shortestWindowRate, verdict } from "./verdict.js"
import { Watchdog } from "./watchdog.js"

/**
 * One call in flight: where it is (read by its total budget's timer and by shutdown), and how the
 * provider ended it from outside, if it did.
 *
 * @internal
 */
export class Call {
  // its place in the provider's watchdog (see `TimerHeap`)
  at = Infinity
  seq = 0
  index = -1

  phase: ProviderError.Phase = "circuit"
  attempt = 0
  /** When the own budget of the current phase ends (permit wait or attempt); `Infinity` without one. */
  phaseDeadline = Infinity
  /** The fiber of the current attempt (or backoff): a child of the caller's, ended from outside when due. */
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined
  /** Set when the provider ends the call from outside (total budget, shutdown): what the caller sees. */
  ending: Exit.Exit<never, unknown> | undefined = undefined
  /** Set when the attempt's budget ends it from outside: what the attempt ends with. */
  attemptEnding: Exit.Exit<never, unknown> | undefined = undefined
  done = false

  constructor(
    readonly startedAt: number,
    /** When the total budget ends; `Infinity` without one. */
    readonly deadline: number,
    readonly perCall: PerCall,
    /** The span `Provider.call`; none with tracing off. */
    readonly span: Tracer.Span | undefined
  ) {}
}

/**
 * What a provider holds: its parts, its counters, and its calls in flight.
 *
 * @internal
 */
export class ProviderState {
  readonly name: string
  readonly labels: Labels
  readonly breaker: CircuitBreaker | undefined
  readonly budget: RetryBudget | undefined
  readonly defaults: PerCall
  readonly limiterMaxWaitMillis: number
  /** The rate of the limiter's shortest-window limit, per second. */
  readonly limiterRate: number | undefined
  readonly gracePeriod: Duration.Duration
  readonly spanOptions: Tracer.SpanOptions
  /** The `code.stacktrace` of a failed call's span: where the provider's first call was made. */
  spanTrace: () => string | undefined = () => undefined

  // counters for `stats`
  calls = 0
  attempts = 0
  inFlight = 0
  upstreamErrors = 0
  storeErrors = 0
  readonly outcomes: Record<Api.Outcome, number>
  readonly permitWait: Samples
  readonly limiterWait: Samples
  readonly callTime: Samples
  /** When recent calls started, for the rate the verdict compares with the limiter's. */
  readonly starts: StartTimes
  /** Units per dimension of recent starts, when the limiter names dimensions of its own. */
  readonly dimensions: DimensionUsage | undefined

  // shutdown
  closing = false
  readonly drained = Deferred.unsafeMake<void>(FiberId.none)
  readonly active = new Set<Call>()
  /** Every call's budgets, watched by one timer fiber the provider's scope owns. */
  readonly watchdog: Watchdog = new Watchdog(this)

  constructor(
    readonly resolved: Resolved,
    readonly bulkhead: Bulkhead.Bulkhead<unknown>,
    /** The bulkhead's own permit wait, when the provider knows it (built from settings). */
    readonly permitWaitMillis: number,
    readonly limiter: RateLimiter.RateLimiter | undefined
  ) {
    this.name = resolved.name
    this.labels = new Labels(resolved.name)
    this.outcomes = recordOf(outcomeNames, () => 0)
    this.permitWait = new Samples(resolved.sampleSize)
    this.limiterWait = new Samples(resolved.sampleSize)
    this.callTime = new Samples(resolved.sampleSize)
    this.starts = new StartTimes(resolved.sampleSize)
    const named = limiter !== undefined && (limiter.dimensions.length > 1 || limiter.dimensions[0] !== "default")
    this.dimensions = named ? new DimensionUsage(limiter.dimensions, resolved.sampleSize) : undefined
    this.limiterRate = limiter === undefined ? undefined : shortestWindowRate(limiter)
    this.limiterMaxWaitMillis = limiter === undefined ? Infinity : Duration.toMillis(limiter.maxWait)
    this.breaker = resolved.breaker === undefined ? undefined : new CircuitBreaker(
      resolved.breaker,
      (state) => circuitGauge.unsafeUpdate(circuitValue[state], this.labels.name)
    )
    if (this.breaker !== undefined) circuitGauge.unsafeUpdate(0, this.labels.name)
    this.budget = resolved.budget === undefined ? undefined : new RetryBudget(resolved.budget)
    this.defaults = defaultsOf(resolved)
    this.gracePeriod = Duration.millis(resolved.gracePeriodMillis)
    this.spanOptions = { attributes: { "sluice.provider": resolved.name }, captureStackTrace: false }
  }

  /** A reservation settled (or released): its correction, per dimension, for the verdict. */
  settled(reservation: RateLimiter.Reservation, settlement: Settlement, now: number): void {
    const usage = this.dimensions
    if (usage === undefined || settlement === undefined) return
    for (const [dimension, estimate] of Object.entries(reservation.cost)) {
      const actual = settlement === "release"
        ? 0
        : typeof settlement === "number"
        ? settlement
        : settlement[dimension] ?? estimate
      usage.add(dimension, now, actual - estimate)
    }
  }

  count(outcome: Api.Outcome): void {
    this.calls++
    this.outcomes[outcome]++
    outcomesTotal.unsafeUpdate(1, this.labels.outcome[outcome])
  }

  /** A call has left: counted once, as its caller saw it end. */
  finish(call: Call, outcome: Api.Outcome): void {
    call.done = true
    this.active.delete(call)
    this.watchdog.unwatch(call)
    this.inFlight--
    this.count(outcome)
    if (this.closing && this.inFlight === 0) Deferred.unsafeDone(this.drained, Exit.void)
    if (outcome === "interrupted") interruptedTotal.unsafeUpdate(1, this.labels.phase[call.phase])
    const span = call.span
    if (span === undefined) return
    span.attribute("sluice.provider.attempts", call.attempt)
    span.attribute("sluice.provider.outcome", outcome)
    if (outcome === "interrupted") span.attribute("sluice.provider.interrupted_phase", call.phase)
  }

  totalTimeout(call: Call, now: number, phase: ProviderError.Phase): ProviderError.TotalTimeout {
    return new ProviderError.TotalTimeout({
      provider: this.name,
      timeout: Duration.millis(call.perCall.totalTimeoutMillis ?? Infinity),
      elapsed: Duration.millis(now - call.startedAt),
      attempts: call.attempt,
      phase
    })
  }

  closed(reason: "closing" | "grace-period-elapsed"): ProviderError.ProviderClosed {
    return new ProviderError.ProviderClosed({ provider: this.name, reason, gracePeriod: this.gracePeriod })
  }

  /** Each limit of a limiter with named dimensions, with the rate its dimension is used at lately. */
  private dimensionLoads(): ReadonlyArray<Api.DimensionLoad> | undefined {
    const usage = this.dimensions
    if (usage === undefined || this.limiter === undefined) return undefined
    return this.limiter.limits.map((limit) => ({
      dimension: limit.dimension,
      limit: limit.limit,
      window: limit.window,
      ratePerSecond: usage.ratePerSecond(limit.dimension),
      spanMillis: usage.spanMillis(limit.dimension)
    }))
  }

  get stats(): Effect.Effect<Api.Stats> {
    return Effect.map(this.bulkhead.stats, (bulkhead) => {
      const permitWait = this.permitWait.summary()
      const limiterWait = this.limiterWait.summary()
      const callTime = this.callTime.summary()
      return {
        provider: this.name,
        calls: this.calls,
        attempts: this.attempts,
        inFlight: this.inFlight,
        outcomes: { ...this.outcomes },
        upstreamErrors: this.upstreamErrors,
        storeErrors: this.storeErrors,
        permitWait,
        limiterWait,
        callTime,
        circuit: this.breaker?.state ?? "closed",
        bulkhead,
        verdict: verdict({
          attempts: this.attempts,
          upstreamErrors: this.upstreamErrors,
          storeErrors: this.storeErrors,
          permitWait,
          limiterWait,
          callTime,
          startRate: this.starts.ratePerSecond(),
          limiterRate: this.limiterRate,
          dimensions: this.dimensionLoads()
        })
      }
    })
  }
}
