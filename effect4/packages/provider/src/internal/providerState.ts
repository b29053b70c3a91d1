/** @internal */
import type { Bulkhead } from "@sluice/bulkhead"
import { DimensionUsage, LaneWaits, Samples, StartTimes } from "@sluice/core/Samples"
import type { RateLimiter } from "@sluice/rate-limiter"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as FiberSet from "effect/FiberSet"
import type * as Tracer from "effect/Tracer"
import * as CircuitBreaker from "../CircuitBreaker.js"
import * as ProviderError from "../ProviderError.js"
import type { Settlement } from "../ProviderOptions.js"
import type * as RecordingApi from "../ProviderRecording.js"
import type * as Api from "../ProviderStats.js"
import * as RetryBudgetModule from "../RetryBudget.js"
import type * as internalBreaker from "./circuitBreaker.js"
import type { Owner } from "./format.js"
import { laneSummaries } from "./lane.js"
import { outcomeNames, recordOf, type Series } from "./metrics.js"
import { defaultsOf, type PerCall, type Resolved } from "./options.js"
import { Recorder } from "./recording.js"
import type { RetryBudget } from "./retryBudget.js"
import { shortestWindowRate, verdict } from "./verdict.js"

/**
 * Where one call is, for its errors, its span and the interrupted-phase metric: written by the
 * call's own steps only, read when it ends.
 *
 * @internal
 */
export class Progress {
  phase: ProviderError.Phase = "circuit"
  attempt = 0
  /** The last attempt's error, for the retry budget's refusal. */
  lastError: unknown = undefined
  /** Set when the next backoff would end past the total budget. */
  backoffPastDeadline = false

  constructor(
    readonly startedAt: number,
    /** When the total budget ends; `Infinity` without one. */
    readonly deadline: number,
    readonly settings: PerCall
  ) {}
}

/**
 * What a provider holds: its parts, the calls it runs (a `FiberSet` its scope owns), and the
 * counters its stats read.
 *
 * @internal
 */
export class ProviderState {
  readonly name: string
  readonly series: Series
  readonly breaker: internalBreaker.Policy | undefined
  readonly budget: RetryBudget | undefined
  readonly breakerOwner: Owner
  readonly budgetOwner: Owner
  readonly defaults: PerCall
  readonly limiterMaxWaitMillis: number
  /** The rate of the limiter's shortest-window limit, per second. */
  readonly limiterRate: number | undefined
  readonly gracePeriod: Duration.Duration
  readonly gracePeriodMillis: number
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
  /** Permit waits per lane, when the bulkhead has lanes. */
  readonly lanes: LaneWaits | undefined
  /** The run as time series, when `recording` is on. */
  readonly recorder: Recorder | undefined

  // shutdown: no call admitted once closing; calls still running when the grace period ends are interrupted
  closing = false
  graceElapsed = false
  private emptied: Deferred.Deferred<void> | undefined = undefined

  /**
   * The lane a call waits in: its own option as given (an undeclared one is the bulkhead's
   * defect), else `Provider.withLane`'s when this bulkhead has it, else the default lane. The
   * ambient lane is set for every provider, so a bulkhead whose lanes are named otherwise ignores it.
   */
  laneFor(own: string | undefined, ambient: string | undefined): string | undefined {
    if (own !== undefined || ambient === undefined) return own
    const laneOf = this.bulkhead.laneOf
    return laneOf === undefined || laneOf(ambient) !== undefined ? ambient : undefined
  }

  /** How long a call in `lane` may wait for its permits: its lane's budget, else the bulkhead's. */
  permitWaitMillisIn(lane: string | undefined): number {
    const info = this.lanes === undefined ? undefined : this.bulkhead.laneOf?.(lane)
    return info === undefined ? this.permitWaitMillis : Duration.toMillis(info.maxWait)
  }

  /** Waits until no call is in flight: read by shutdown, once no call can start. */
  get drained(): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (this.inFlight === 0) return Effect.void
      this.emptied ??= Deferred.makeUnsafe<void>()
      return Deferred.await(this.emptied)
    })
  }

  constructor(
    readonly resolved: Resolved,
    readonly bulkhead: Bulkhead.Bulkhead<unknown>,
    /** The bulkhead's own permit wait. */
    readonly permitWaitMillis: number,
    readonly limiter: RateLimiter.RateLimiter | undefined,
    readonly circuitBreaker: CircuitBreaker.CircuitBreaker | undefined,
    retryBudget: RetryBudgetModule.RetryBudget | undefined,
    readonly running: FiberSet.FiberSet<unknown, unknown>,
    series: Series
  ) {
    this.name = resolved.name
    this.series = series
    this.breaker = circuitBreaker === undefined ? undefined : CircuitBreaker.policyOf(circuitBreaker)
    this.budget = retryBudget === undefined ? undefined : RetryBudgetModule.machineOf(retryBudget)
    // a breaker or a budget given to the provider keeps its own name in its errors
    this.breakerOwner = { name: circuitBreaker?.name ?? resolved.name, provider: resolved.name }
    this.budgetOwner = { name: retryBudget?.name ?? resolved.name, provider: resolved.name }
    this.outcomes = recordOf(outcomeNames, () => 0)
    this.permitWait = new Samples(resolved.sampleSize)
    this.limiterWait = new Samples(resolved.sampleSize)
    this.callTime = new Samples(resolved.sampleSize)
    this.starts = new StartTimes(resolved.sampleSize)
    const named = limiter !== undefined && (limiter.dimensions.length > 1 || limiter.dimensions[0] !== "default")
    this.dimensions = named ? new DimensionUsage(limiter.dimensions, resolved.sampleSize) : undefined
    const defaultLane = bulkhead.laneOf?.(undefined)?.name
    this.lanes = defaultLane === undefined ? undefined : new LaneWaits(defaultLane, resolved.sampleSize)
    this.limiterRate = limiter === undefined ? undefined : shortestWindowRate(limiter)
    const recording = resolved.recording
    this.recorder = recording === undefined
      ? undefined
      : new Recorder(recording.bucketMillis, recording.maxBuckets, named ? limiter.dimensions : [])
    this.limiterMaxWaitMillis = limiter === undefined ? Infinity : Duration.toMillis(limiter.maxWait)
    this.defaults = defaultsOf(resolved)
    this.gracePeriodMillis = resolved.gracePeriodMillis
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
      this.recorder?.settled(now, dimension, actual - estimate)
    }
  }

  count(outcome: Api.Outcome): void {
    this.calls++
    this.outcomes[outcome]++
    this.series.outcome[outcome].updateUnsafe(1, this.series.context)
  }

  /** A call has left at `now`: counted once, as its caller saw it end. */
  finish(progress: Progress, outcome: Api.Outcome, span: Tracer.Span | undefined, now: number): void {
    if (--this.inFlight === 0 && this.emptied !== undefined) Deferred.doneUnsafe(this.emptied, Effect.void)
    this.count(outcome)
    this.recorder?.ended(now, outcome)
    if (outcome === "interrupted") this.series.interrupted[progress.phase].updateUnsafe(1, this.series.context)
    if (span === undefined) return
    span.attribute("sluice.provider.attempts", progress.attempt)
    span.attribute("sluice.provider.outcome", outcome)
    if (outcome === "interrupted") span.attribute("sluice.provider.interrupted_phase", progress.phase)
  }

  totalTimeout(progress: Progress, now: number, phase: ProviderError.Phase): ProviderError.TotalTimeout {
    return new ProviderError.TotalTimeout({
      provider: this.name,
      timeout: Duration.millis(progress.settings.totalTimeoutMillis ?? Infinity),
      elapsed: Duration.millis(now - progress.startedAt),
      attempts: progress.attempt,
      phase
    })
  }

  callTimeout(progress: Progress): ProviderError.CallTimeout {
    return new ProviderError.CallTimeout({
      provider: this.name,
      timeout: Duration.millis(progress.settings.attemptTimeoutMillis ?? Infinity),
      attempt: progress.attempt,
      maxAttempts: progress.settings.maxAttempts
    })
  }

  /** A call refused because the provider is closing: counted, and failed with `ProviderClosed`. */
  refused(): Effect.Effect<never, ProviderError.ProviderClosed> {
    this.count("closed")
    return Effect.fail(this.closed("closing"))
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

  /** The recording up to now, `undefined` when off. */
  get recording(): Effect.Effect<RecordingApi.Recording | undefined> {
    const recorder = this.recorder
    if (recorder === undefined) return Effect.succeed(undefined)
    const limits = this.limiter?.limits.map((limit) => ({
      dimension: limit.dimension,
      limit: limit.limit,
      windowMillis: Duration.toMillis(limit.window)
    })) ?? []
    return Effect.zipWith(
      this.bulkhead.stats,
      Clock.currentTimeMillis,
      (bulkhead, now) => recorder.snapshot(now, this.name, bulkhead.permits, this.limiterRate, limits)
    )
  }

  get stats(): Effect.Effect<Api.Stats> {
    const circuit = this.breaker?.state ?? Effect.succeed("closed" as const)
    return Effect.zipWith(this.bulkhead.stats, circuit, (bulkhead, circuit) => {
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
        circuit,
        bulkhead,
        ...(this.lanes === undefined ? {} : { lanes: laneSummaries(this.lanes, bulkhead) }),
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
