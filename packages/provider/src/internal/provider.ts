/** @internal */
import { Bulkhead } from "@sluice/bulkhead"
import { RateLimiter, type RateLimiterStore } from "@sluice/rate-limiter"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as FiberRefs from "effect/FiberRefs"
import { dual } from "effect/Function"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as MetricLabel from "effect/MetricLabel"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Random from "effect/Random"
import * as Runtime from "effect/Runtime"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"
import type * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type * as Api from "../Provider.js"
import * as errors from "../ProviderError.js"
import { type BreakerSettings, CircuitBreaker, type State as CircuitState } from "./circuitBreaker.js"
import { show } from "./format.js"
import { RetryBudget } from "./retryBudget.js"
import { Samples, StartTimes } from "./samples.js"

/** @internal */
export const TypeId: Api.TypeId = Symbol.for("@sluice/provider/Provider") as Api.TypeId

/** @internal */
export const RetryableTypeId: Api.RetryableTypeId = Symbol.for("@sluice/provider/Retryable") as Api.RetryableTypeId

/** @internal */
export const isProvider = (u: unknown): u is Api.Provider<unknown> => Predicate.hasProperty(u, TypeId)

/** @internal */
export const isRetryable = (error: unknown): boolean =>
  (errors.isProviderError(error) && error._tag === "CallTimeout") ||
  (Predicate.hasProperty(error, RetryableTypeId) && error[RetryableTypeId] === true)

// ---------------------------------------------------------------------------------------------
// metrics
// ---------------------------------------------------------------------------------------------

/**
 * From 1 ms doubling to about 9 min: a geocoder answers in tens of milliseconds, an LLM call in
 * tens of seconds, a stuck call is cut by its attempt budget long before the last bucket.
 *
 * @internal
 */
export const callSeconds = Metric.histogram(
  "sluice_call_seconds",
  MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 20 }),
  "Time of each attempt's call to a provider, permit held and limiter passed, in seconds"
)

/** @internal */
export const outcomesTotal = Metric.counter("sluice_provider_outcomes_total", {
  description: "Calls through a provider by how they ended",
  incremental: true
})

/** @internal */
export const interruptedTotal = Metric.counter("sluice_provider_interrupted_total", {
  description: "Calls through a provider interrupted by their caller, by the phase they were in",
  incremental: true
})

/** @internal */
export const circuitGauge = Metric.gauge("sluice_provider_circuit_state", {
  description: "A provider's circuit: 0 closed, 1 half-open, 2 open"
})

const circuitValue: Record<CircuitState, number> = { closed: 0, "half-open": 1, open: 2 }

const outcomeNames: ReadonlyArray<Api.Outcome> = [
  "success",
  "call_error",
  "call_timeout",
  "total_timeout",
  "permit_wait_timeout",
  "bulkhead_full",
  "rate_limited",
  "circuit_open",
  "retry_budget_exhausted",
  "store_error",
  "closed",
  "interrupted"
]

const recordOf = <K extends string, V>(keys: ReadonlyArray<K>, f: (key: K) => V): Record<K, V> => {
  const record = {} as Record<K, V>
  for (const key of keys) record[key] = f(key)
  return record
}

const phases: ReadonlyArray<errors.Phase> = ["circuit", "permit_wait", "limiter_wait", "call", "backoff"]

// ---------------------------------------------------------------------------------------------
// validation
// ---------------------------------------------------------------------------------------------

const illegal = (name: string, message: string): Cause.IllegalArgumentException =>
  new Cause.IllegalArgumentException(`provider ${JSON.stringify(name)}: ${message}`)

/**
 * A duration option in milliseconds. Effect's `Duration` reads negative and NaN inputs as zero; a
 * budget written as `-5` or `NaN` is a mistake, so it is refused instead of meaning "no time".
 */
const millisOf = (
  name: string,
  label: string,
  input: Duration.DurationInput,
  options: { readonly allowZero: boolean }
): number => {
  const negative = (typeof input === "number" && !(input >= 0)) ||
    (typeof input === "bigint" && input < BigInt(0)) ||
    (typeof input === "string" && input.trim().startsWith("-")) ||
    (Array.isArray(input) && !(Number(input[0]) >= 0 && Number(input[1]) >= 0))
  const decoded = negative ? undefined : Option.getOrUndefined(Duration.decodeUnknown(input))
  const millis = decoded === undefined ? Number.NaN : Duration.toMillis(decoded)
  if (!(millis > 0 || (millis === 0 && options.allowZero))) {
    throw illegal(name, `${label} must be a duration ${options.allowZero ? "≥ 0" : "> 0"}, got ${show(input)}`)
  }
  return millis
}

const optionalMillis = (
  name: string,
  label: string,
  input: Duration.DurationInput | undefined
): number | undefined => input === undefined ? undefined : millisOf(name, label, input, { allowZero: false })

const isPositiveInteger = (u: unknown): u is number => typeof u === "number" && Number.isSafeInteger(u) && u >= 1

const positiveInteger = (name: string, label: string, u: unknown, fallback: number): number => {
  const value = u === undefined ? fallback : u
  if (!isPositiveInteger(value)) throw illegal(name, `${label} must be an integer ≥ 1, got ${show(u)}`)
  return value
}

const fraction = (
  name: string,
  label: string,
  u: unknown,
  fallback: number,
  range: { readonly min: number; readonly minInclusive: boolean }
): number => {
  const value = u === undefined ? fallback : u
  if (
    typeof value !== "number" || !(value <= 1) || !(range.minInclusive ? value >= range.min : value > range.min)
  ) {
    throw illegal(
      name,
      `${label} must be a number ${range.minInclusive ? "≥" : ">"} ${range.min} and ≤ 1, got ${show(u)}`
    )
  }
  return value
}

interface BackoffPolicy {
  readonly initialMillis: number
  readonly maxMillis: number
  readonly factor: number
  readonly jitter: number
}

interface Resolved {
  readonly name: string
  readonly attemptTimeoutMillis: number | undefined
  readonly totalTimeoutMillis: number | undefined
  readonly maxAttempts: number
  readonly backoff: BackoffPolicy
  readonly isRetryable: (error: unknown) => boolean
  readonly budget: RetryBudget | undefined
  readonly breaker: BreakerSettings | undefined
  readonly isFailure: (error: unknown) => boolean
  readonly gracePeriodMillis: number
  readonly isUpstream: (error: unknown) => boolean
  readonly sampleSize: number
}

const yes = (): boolean => true
const no = (): boolean => false

const resolve = (options: Api.Options): Resolved => {
  const name: unknown = options.name
  if (typeof name !== "string" || name.length === 0) {
    throw new Cause.IllegalArgumentException(`a provider needs a non-empty name, got ${show(name)}`)
  }
  if (options.bulkhead === undefined || options.bulkhead === null) {
    throw illegal(name, "bulkhead is required: a bulkhead or its settings ({ permits, maxWait?, maxWaiting? })")
  }
  const retry = options.retry
  const maxAttempts = retry === undefined ? 1 : positiveInteger(name, "retry.maxAttempts", retry.maxAttempts, 1)
  const backoff = retry?.backoff
  const initialMillis = backoff?.initial === undefined
    ? 100
    : millisOf(name, "retry.backoff.initial", backoff.initial, { allowZero: true })
  const maxMillis = backoff?.max === undefined
    ? Math.max(10_000, initialMillis)
    : millisOf(name, "retry.backoff.max", backoff.max, { allowZero: true })
  const factor = backoff?.factor ?? 2
  if (typeof factor !== "number" || !(factor >= 1) || !Number.isFinite(factor)) {
    throw illegal(name, `retry.backoff.factor must be a finite number ≥ 1, got ${show(backoff?.factor)}`)
  }
  const jitter = fraction(name, "retry.backoff.jitter", backoff?.jitter, 0.2, { min: 0, minInclusive: true })
  const budgetOptions = retry === undefined || retry.budget === false ? undefined : retry.budget ?? {}
  const budget = budgetOptions === undefined ? undefined : new RetryBudget({
    ratio: fraction(name, "retry.budget.ratio", budgetOptions.ratio, 0.1, { min: 0, minInclusive: true }),
    minRetries: budgetOptions.minRetries === undefined
      ? 3
      : budgetOptions.minRetries === 0
      ? 0
      : positiveInteger(name, "retry.budget.minRetries", budgetOptions.minRetries, 3),
    windowMillis: budgetOptions.window === undefined
      ? 10_000
      : millisOf(name, "retry.budget.window", budgetOptions.window, { allowZero: false })
  })
  const cb = options.circuitBreaker
  let breaker: Resolved["breaker"] = undefined
  if (cb !== undefined) {
    const ratio = cb.failureRatio
    const window = ratio === undefined
      ? 0
      : positiveInteger(name, "circuitBreaker.failureRatio.window", ratio.window, 1)
    breaker = {
      consecutiveFailures: cb.consecutiveFailures === undefined && ratio === undefined
        ? 5
        : cb.consecutiveFailures === undefined
        ? undefined
        : positiveInteger(name, "circuitBreaker.consecutiveFailures", cb.consecutiveFailures, 5),
      ratio: ratio === undefined
        ? undefined
        : fraction(name, "circuitBreaker.failureRatio.ratio", ratio.ratio, 0.5, { min: 0, minInclusive: false }),
      window,
      minimumCalls: ratio === undefined
        ? 0
        : positiveInteger(name, "circuitBreaker.failureRatio.minimumCalls", ratio.minimumCalls, window),
      openForMillis: cb.openFor === undefined
        ? 30_000
        : millisOf(name, "circuitBreaker.openFor", cb.openFor, { allowZero: false })
    }
    if (breaker.minimumCalls > window && ratio !== undefined) {
      throw illegal(
        name,
        `circuitBreaker.failureRatio.minimumCalls must be ≤ window (${window}), got ${breaker.minimumCalls}`
      )
    }
  }
  const sampleSize = positiveInteger(name, "sampleSize", options.sampleSize, 1024)
  return {
    name,
    attemptTimeoutMillis: optionalMillis(name, "attemptTimeout", options.attemptTimeout),
    totalTimeoutMillis: optionalMillis(name, "totalTimeout", options.totalTimeout),
    maxAttempts,
    backoff: { initialMillis, maxMillis, factor, jitter },
    isRetryable: retry?.isRetryable ?? isRetryable,
    budget,
    breaker,
    isFailure: cb?.isFailure ?? yes,
    gracePeriodMillis: options.gracePeriod === undefined
      ? 10_000
      : millisOf(name, "gracePeriod", options.gracePeriod, { allowZero: true }),
    isUpstream: options.isUpstreamError ?? no,
    sampleSize
  }
}

// ---------------------------------------------------------------------------------------------
// the verdict
// ---------------------------------------------------------------------------------------------

/** Per second, the rate of the limit with the shortest window: the one a batch meets first. */
const shortestWindowRate = (limiter: RateLimiter.RateLimiter): number => {
  let shortest = limiter.limits[0]
  for (const limit of limiter.limits) {
    if (Duration.lessThan(limit.window, shortest.window)) shortest = limit
  }
  return (shortest.limit * 1000) / Duration.toMillis(shortest.window)
}

/** Upstream pushback on at least this share of attempts is what binds, whatever the waits say. */
const UPSTREAM_SHARE = 0.05
/** Permits held asleep in the limiter for at least half their time: the quota binds. */
const LIMITER_SHARE = 0.5
/** A permit wait of a tenth of the call or more is a queue behind slow calls, not noise. */
const PERMIT_WAIT_SHARE = 0.1
/** Calls starting at this share of the limiter's rate or more: the quota binds. */
const QUOTA_RATE_SHARE = 0.9

const perSecond = (rate: number): string => `${Number(rate.toFixed(rate >= 100 ? 0 : 1))}/s`

const ms = (millis: number): string =>
  millis >= 1000 ? `${Number((millis / 1000).toFixed(2))} s` : `${Number(millis.toFixed(1))} ms`

const percent = (share: number): string => `${Math.round(share * 100)} %`

/** @internal */
export const verdict = (input: Api.VerdictInput): Api.Verdict => {
  const { attempts, callTime, limiterWait, permitWait, upstreamErrors } = input
  if (attempts === 0) return { binding: "none", reason: "no calls yet" }
  const storeErrors = input.storeErrors ?? 0
  const storeShare = storeErrors / attempts
  if (storeErrors > 0 && storeShare >= UPSTREAM_SHARE) {
    return {
      binding: "store",
      reason: `${storeErrors} of ${attempts} attempts (${
        percent(storeShare)
      }) failed because the rate limiter's store could not decide: those calls never reached the upstream; check the store (Redis) and its fail mode`
    }
  }
  const upstreamShare = upstreamErrors / attempts
  if (upstreamErrors > 0 && upstreamShare >= UPSTREAM_SHARE) {
    return {
      binding: "upstream",
      reason: `${upstreamErrors} of ${attempts} attempts (${
        percent(upstreamShare)
      }) met upstream pushback (429/5xx): the provider refuses, act on its quota or back off`
    }
  }
  const held = limiterWait.meanMillis + callTime.meanMillis
  const limiterShare = held > 0 ? limiterWait.meanMillis / held : 0
  if (limiterShare >= LIMITER_SHARE) {
    return {
      binding: "limiter",
      reason: `permits were held ${percent(limiterShare)} asleep in the limiter (mean ${
        ms(limiterWait.meanMillis)
      } of ${ms(held)}; permit wait mean ${
        ms(permitWait.meanMillis)
      }): the quota is saturated, the healthy state for a batch; more quota or a second provider helps, more permits do not`
    }
  }
  const { limiterRate, startRate } = input
  if (
    limiterRate !== undefined && startRate !== undefined && limiterRate > 0 &&
    startRate >= QUOTA_RATE_SHARE * limiterRate
  ) {
    return {
      binding: "limiter",
      reason: `calls started at ${perSecond(startRate)}, ${
        percent(Math.min(1, startRate / limiterRate))
      } of the limiter's ${perSecond(limiterRate)} (permit wait mean ${ms(permitWait.meanMillis)}, limiter wait mean ${
        ms(limiterWait.meanMillis)
      }, call mean ${
        ms(callTime.meanMillis)
      }): the quota is saturated, the healthy state for a batch; more quota or a second provider helps, more permits do not`
    }
  }
  if (permitWait.meanMillis > 0 && permitWait.meanMillis >= PERMIT_WAIT_SHARE * callTime.meanMillis) {
    return {
      binding: "bulkhead",
      reason: `permits were held ${percent(1 - limiterShare)} by the call (mean ${
        ms(callTime.meanMillis)
      }) while callers waited a mean ${ms(permitWait.meanMillis)} (p95 ${
        ms(permitWait.p95Millis)
      }) for one: the provider slowed down; act on latency, timeouts or a fallback`
    }
  }
  return {
    binding: "none",
    reason: `nothing binds: permit wait mean ${ms(permitWait.meanMillis)}, limiter wait mean ${
      ms(limiterWait.meanMillis)
    }, call mean ${ms(callTime.meanMillis)}`
  }
}

// ---------------------------------------------------------------------------------------------
// the attempt budget
// ---------------------------------------------------------------------------------------------

/**
 * Fibers forked from `parent` as `Effect.fork` would fork them (its refs, its runtime flags), but
 * started at once and with no parent: the provider supervises them itself. `context`, when given,
 * is the fibers' context instead of the parent's (the parent's with the call's span as parent
 * span): set in the forked refs, it costs nothing more, where `Effect.withParentSpan` inside the
 * fiber would update the context twice. One of the fibers, started with `start`, is the one whose
 * refs pass to the parent when it ends (`inherit`); the others (timers) pass nothing.
 */
class Forker {
  /** The parent's refs, as the fibers were forked from them. */
  readonly refs: FiberRefs.FiberRefs
  /** The refs the fiber of `start` started with. */
  private forked: FiberRefs.FiberRefs | undefined = undefined
  private starting = false
  private readonly runtime: Runtime.Runtime<never>
  private readonly options: Runtime.RunForkOptions

  constructor(
    private readonly parent: Fiber.RuntimeFiber<unknown, unknown>,
    readonly runtimeFlags: RuntimeFlags.RuntimeFlags,
    readonly context: Context.Context<never> | undefined,
    /** The provider's last answer of `forkJoinKeepsParent`. */
    private readonly lastForkJoin: LastForkJoin
  ) {
    const refs = this.refs = parent.getFiberRefs()
    // empty: `runFork` would fork them only for `updateRefs` to replace them
    this.runtime = Runtime.make({ context: parent.currentContext, runtimeFlags, fiberRefs: FiberRefs.empty() })
    this.options = {
      // forking the refs, rather than letting `runFork` set the context anew, leaves the fiber's
      // refs as the parent's until the fiber changes one: `inherit` can tell that it changed none
      updateRefs: (_, fiberId) => {
        // forked and given the context in one copy of the parent's refs
        const started = context === undefined
          ? FiberRefs.forkAs(refs, fiberId)
          : FiberRefs.updateManyAs(refs, {
            forkAs: fiberId,
            entries: [[FiberRef.currentContext, [[fiberId, context]]]]
          })
        if (this.starting) this.forked = started
        return started
      }
    }
  }

  /** Starts the fiber whose refs `inherit` passes to the parent. */
  start<A, E>(effect: Effect.Effect<A, E>): Fiber.RuntimeFiber<A, E> {
    this.starting = true
    try {
      return this.run(effect)
    } finally {
      this.starting = false
    }
  }

  run<A, E>(effect: Effect.Effect<A, E>): Fiber.RuntimeFiber<A, E> {
    return Runtime.runFork(this.runtime, effect, this.options)
  }

  /**
   * `fiber.inheritAll` for the fiber of `start`, once it has ended: the refs it changed pass to the
   * parent. Most calls change none (`FiberRef.locally` puts the value back), and then there is
   * nothing to merge and nothing is run (`inheritAll` would copy and walk every ref of the parent to
   * find that out); the result is `undefined`. The fiber's context, when this forker set it, is not
   * the fiber's change: the parent keeps its own parent span.
   */
  inherit(fiber: Fiber.RuntimeFiber<unknown, unknown>): Effect.Effect<void> | undefined {
    const after = fiber.getFiberRefs()
    const forked = this.forked as FiberRefs.FiberRefs
    const context = this.context
    // refs that only the fork changed (a `fork` patch: a child's fork-scope override, say)
    let forkedOnly: Array<FiberRef.FiberRef<unknown>> | undefined
    for (const [ref, stack] of after.locals) {
      const value: unknown = stack[0][1]
      if (ref === FiberRef.currentRuntimeFlags) {
        if (RuntimeFlagsPatch.isEmpty(inheritedFlags(this.runtimeFlags, value as RuntimeFlags.RuntimeFlags))) continue
        return this.inheritAll(fiber)
      }
      // an interruption never passes to the parent; the context set at the fork is not the fiber's
      if (ref === FiberRef.interruptedCause || (ref === FiberRef.currentContext && value === context)) continue
      if (value === FiberRefs.getOrDefault(this.refs, ref)) continue
      if (value !== FiberRefs.getOrDefault(forked, ref)) return this.inheritAll(fiber)
      ;(forkedOnly ??= []).push(ref)
    }
    if (forkedOnly === undefined) return undefined
    return this.forkJoinKeepsParent(forkedOnly, forked) ? undefined : this.inheritAll(fiber)
  }

  /**
   * Whether merging back what the fork alone changed in `refs` leaves the parent's values as they
   * are: it does when the refs' `join` keeps the parent's value, as for the fork-scope override that
   * `Effect.forEach`'s workers hold. Found by merging them into a copy of those refs of the parent;
   * for one ref the answer depends only on its two values (a ref's `diff`, `patch` and `join` are
   * pure), and is kept for the next call: the calls of one `forEach` share them.
   */
  private forkJoinKeepsParent(refs: ReadonlyArray<FiberRef.FiberRef<unknown>>, forked: FiberRefs.FiberRefs): boolean {
    const single = refs.length === 1 ? refs[0] : undefined
    const last = this.lastForkJoin
    if (
      single !== undefined && last.ref === single && last.parentValue === FiberRefs.getOrDefault(this.refs, single) &&
      last.forkedValue === FiberRefs.getOrDefault(forked, single)
    ) return last.keepsParent
    const stacks = (from: FiberRefs.FiberRefs) =>
      new Map(refs.flatMap((ref) => {
        const stack = from.locals.get(ref)
        return stack === undefined ? [] : [[ref, stack] as const]
      }))
    const joined = FiberRefs.joinAs(
      FiberRefs.unsafeMake(stacks(this.refs)),
      this.parent.id(),
      FiberRefs.unsafeMake(stacks(forked))
    )
    const keepsParent = refs.every((ref) =>
      FiberRefs.getOrDefault(joined, ref) === FiberRefs.getOrDefault(this.refs, ref)
    )
    if (single !== undefined) {
      last.ref = single
      last.parentValue = FiberRefs.getOrDefault(this.refs, single)
      last.forkedValue = FiberRefs.getOrDefault(forked, single)
      last.keepsParent = keepsParent
    }
    return keepsParent
  }

  private inheritAll(fiber: Fiber.RuntimeFiber<unknown, unknown>): Effect.Effect<void> {
    const context = this.context
    if (context === undefined) return fiber.inheritAll
    const parentSpan = Context.getOption(FiberRefs.getOrDefault(this.refs, FiberRef.currentContext), Tracer.ParentSpan)
    return Effect.zipRight(
      fiber.inheritAll,
      Effect.updateFiberRefs((fiberId, refs) => {
        const merged = FiberRefs.getOrDefault(refs, FiberRef.currentContext)
        return FiberRefs.updateAs(refs, {
          fiberId,
          fiberRef: FiberRef.currentContext,
          value: Option.isSome(parentSpan)
            ? Context.add(merged, Tracer.ParentSpan, parentSpan.value)
            : Context.omit(Tracer.ParentSpan)(merged)
        })
      })
    )
  }
}

/** A span's parent as `Effect.makeSpan` finds it: the nearest one that does not disable propagation. */
const visibleParent = (parent: Option.Option<Tracer.AnySpan>): Option.Option<Tracer.AnySpan> => {
  if (Option.isNone(parent) || !Context.get(parent.value.context, Tracer.DisablePropagation)) return parent
  return parent.value._tag === "Span" ? visibleParent(parent.value.parent) : Option.none()
}

/** The last answer of `Forker.forkJoinKeepsParent` for a single ref, by the identity of its values. */
interface LastForkJoin {
  ref: FiberRef.FiberRef<unknown> | undefined
  parentValue: unknown
  forkedValue: unknown
  keepsParent: boolean
}

/** The runtime flags `Fiber.inheritAll` passes from a child to its parent: neither interruption nor wind-down. */
const inheritedFlags = (
  parent: RuntimeFlags.RuntimeFlags,
  child: RuntimeFlags.RuntimeFlags
): RuntimeFlagsPatch.RuntimeFlagsPatch =>
  RuntimeFlagsPatch.exclude(
    RuntimeFlagsPatch.exclude(RuntimeFlags.diff(parent, child), RuntimeFlags.Interruption),
    RuntimeFlags.WindDown
  )

/** A call racing its attempt budget: the state shared by its fiber, its timer and its caller. */
class TimeoutRace {
  timer: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined
  resume: ((effect: Effect.Effect<unknown, unknown>) => void) | undefined = undefined
  result: Effect.Effect<unknown, unknown> | undefined = undefined
  timedOut: Exit.Exit<never, unknown> | undefined = undefined

  constructor(
    readonly forker: Forker,
    readonly fiber: Fiber.RuntimeFiber<unknown, unknown>,
    readonly parentId: FiberId.FiberId
  ) {}

  /** The budget ran out first: the call is interrupted, and fails with `error` once it has ended. */
  expire(error: unknown): void {
    if (this.result !== undefined) return
    this.timedOut = Exit.fail(error)
    this.fiber.unsafeInterruptAsFork(this.parentId)
  }

  settle(exit: Exit.Exit<unknown, unknown>): void {
    if (this.result !== undefined) return
    this.timer?.unsafeInterruptAsFork(this.parentId)
    // as `Effect.timeoutFail`'s race: the winner's refs pass on when it succeeded
    const inherit = this.timedOut === undefined && Exit.isSuccess(exit) ? this.forker.inherit(this.fiber) : undefined
    this.result = this.timedOut ?? (inherit === undefined ? exit : Effect.zipRight(inherit, exit))
    const resume = this.resume
    if (resume !== undefined) {
      this.resume = undefined
      resume(this.result)
    }
  }

  wait(resume: (effect: Effect.Effect<unknown, unknown>) => void): void {
    if (this.result !== undefined) resume(this.result)
    else this.resume = resume
  }

  /** The waiting fiber was interrupted: the call is interrupted too, and awaited. */
  readonly cancel: Effect.Effect<void> = Effect.suspend(() => {
    if (this.result !== undefined) return Effect.void
    this.fiber.unsafeInterruptAsFork(this.parentId)
    return Effect.async<void>((resume) => {
      if (this.result !== undefined) resume(Effect.void)
      else this.resume = () => resume(Effect.void)
    })
  })
}

/**
 * `Effect.timeoutFail` with the same outcome, cheaper: `self` runs on a fiber of its own started at
 * once, and the timer is started only if `self` suspends. A call that completes at once forks
 * nothing that waits; a call that times out is interrupted and awaited before `onTimeout`'s error.
 */
const timeoutFail = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  millis: number,
  clock: Clock.Clock,
  lastForkJoin: LastForkJoin,
  onTimeout: () => unknown
): Effect.Effect<A, unknown, R> =>
  Effect.withFiberRuntime<A, unknown, R>((parent, status) =>
    Effect.uninterruptibleMask((restore) => {
      const forker = new Forker(parent, status.runtimeFlags, undefined, lastForkJoin)
      // the parent's context provides `R`
      const fiber = forker.start(self as Effect.Effect<A, E>)
      const done = fiber.unsafePoll()
      if (done !== null) {
        const inherit = Exit.isSuccess(done) ? forker.inherit(fiber) : undefined
        return inherit === undefined ? done : Effect.zipRight(inherit, done)
      }
      const race = new TimeoutRace(forker, fiber, parent.id())
      race.timer = forker.run(
        Effect.flatMap(Effect.interruptible(clock.sleep(Duration.millis(millis))), () => {
          race.expire(onTimeout())
          return Effect.void
        })
      )
      fiber.addObserver((exit) => race.settle(exit))
      return Effect.matchCauseEffect(
        restore(Effect.async<unknown, unknown>((resume) => race.wait(resume))),
        {
          onFailure: (cause) =>
            race.result === undefined ? Effect.zipRight(race.cancel, Effect.failCause(cause)) : Effect.failCause(cause),
          onSuccess: Effect.succeed
        }
      ) as Effect.Effect<A, unknown>
    })
  )

// ---------------------------------------------------------------------------------------------
// the provider
// ---------------------------------------------------------------------------------------------

/** A failure of the call itself, kept apart from the provider's own refusals until the end. */
class CallFailed {
  constructor(readonly error: unknown) {}
}

const wrap = (error: unknown): CallFailed => new CallFailed(error)
/** As `Effect.mapError(wrap)` fails: with the first error, wrapped, or with the cause as it is when it has no error. */
const wrapCause = (cause: Cause.Cause<unknown>): Cause.Cause<unknown> => {
  const failure = Cause.failureOrCause(cause)
  return Either.isLeft(failure) ? Cause.fail(wrap(failure.left)) : failure.right
}
const unwrap = (error: unknown): unknown => error instanceof CallFailed ? error.error : error

/** `Effect.mapError(unwrap)` on an exit: a failure becomes its first error, unwrapped. */
const unwrapExit = (exit: Exit.Exit<unknown, unknown>): Exit.Exit<unknown, unknown> => {
  if (Exit.isSuccess(exit)) return exit
  const failure = Cause.failureOrCause(exit.cause)
  return Either.isLeft(failure) ? Exit.fail(unwrap(failure.left)) : exit
}

/**
 * The `code.stacktrace` of the span `Provider.call`: the line of `call`, as `Effect.withSpan` would
 * capture it on every call, captured once and formatted only when a span ends in failure. It is not
 * handed to the span as `captureStackTrace`: Effect would keep it for every span in a `WeakMap`, whose
 * entries cost the garbage collector more than anything else the call does.
 */
const spanTrace = (): () => string | undefined => {
  const errorConstructor = Error as { stackTraceLimit?: number | undefined }
  const limit = errorConstructor.stackTraceLimit
  errorConstructor.stackTraceLimit = 2
  const error = new Error()
  errorConstructor.stackTraceLimit = limit
  let cache: string | undefined | false = false
  return () => {
    if (cache === false) cache = error.stack?.split("\n")[2]?.trim()
    return cache
  }
}

interface PerCall {
  readonly permits: number
  readonly cost: number
  readonly attemptTimeoutMillis: number | undefined
  readonly totalTimeoutMillis: number | undefined
  readonly maxAttempts: number
}

/**
 * One call in flight. Its attempts run in a fiber of their own (`fiber`), so that the provider can
 * end it from outside (its total budget, shutdown's grace period) while the caller lives on and
 * sees the provider's error, as it would with a race against a guard, without paying for one.
 */
class Call {
  phase: errors.Phase = "circuit"
  attempt = 0
  /** When the own budget of the current phase ends (permit wait or attempt); `Infinity` without one. */
  phaseDeadline = Infinity
  /** The fiber running the attempts. */
  fiber: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined
  /** The fiber waiting for the total budget, only when there is one. */
  timer: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined
  /** Resumes the caller, once it waits. */
  resume: ((effect: Effect.Effect<unknown, unknown>) => void) | undefined = undefined
  /** What the caller gets: set once the attempts' fiber has ended. */
  result: Effect.Effect<unknown, unknown> | undefined = undefined
  /** Set when the provider ends the call from outside: the exit the caller sees, whatever the fiber's. */
  ending: Exit.Exit<never, unknown> | undefined = undefined
  callerInterrupted = false

  constructor(
    readonly startedAt: number,
    /** When the total budget ends; `Infinity` without one. */
    readonly deadline: number,
    /** The span `Provider.call`; none when tracing is off, where it would be a no-op span. */
    readonly span: Tracer.Span | undefined,
    readonly callerId: FiberId.FiberId,
    /** Forks the call's fiber, and its timer, from the caller. */
    readonly forker: Forker,
    /** The caller's clock, and whether its spans record times. */
    readonly clock: Clock.Clock,
    readonly timing: boolean
  ) {}
}

class ProviderImpl {
  readonly labels: ReadonlyArray<MetricLabel.MetricLabel>
  readonly outcomeLabels: Record<Api.Outcome, ReadonlyArray<MetricLabel.MetricLabel>>
  readonly phaseLabels: Record<errors.Phase, ReadonlyArray<MetricLabel.MetricLabel>>
  readonly breaker: CircuitBreaker | undefined
  readonly limiterMaxWaitMillis: number
  readonly defaults: PerCall

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
  /** The rate of the limiter's shortest-window limit, per second. */
  readonly limiterRate: number | undefined

  // shutdown
  closing = false
  readonly drained = Deferred.unsafeMake<void>(FiberId.none)
  /** The calls in flight, to end when the grace period has elapsed. */
  readonly active = new Set<Call>()
  readonly gracePeriod: Duration.Duration

  readonly lastForkJoin: LastForkJoin = {
    ref: undefined,
    parentValue: undefined,
    forkedValue: undefined,
    keepsParent: false
  }

  /** The options of every call's span, and its stack trace, made at the first call (see `spanTrace`). */
  private spanOptions: Tracer.SpanOptions | undefined = undefined
  private spanTrace: (() => string | undefined) | undefined = undefined

  constructor(
    readonly resolved: Resolved,
    readonly bulkhead: Bulkhead.Bulkhead,
    /** The bulkhead's own permit wait, when the provider knows it (built from settings). */
    readonly permitWaitMillis: number,
    readonly limiter: RateLimiter.RateLimiter | undefined
  ) {
    const nameLabel = MetricLabel.make("name", resolved.name)
    this.labels = [nameLabel]
    this.outcomeLabels = recordOf(outcomeNames, (outcome) => [nameLabel, MetricLabel.make("outcome", outcome)])
    this.phaseLabels = recordOf(phases, (phase) => [nameLabel, MetricLabel.make("phase", phase)])
    this.outcomes = recordOf(outcomeNames, () => 0)
    this.permitWait = new Samples(resolved.sampleSize)
    this.limiterWait = new Samples(resolved.sampleSize)
    this.callTime = new Samples(resolved.sampleSize)
    this.starts = new StartTimes(resolved.sampleSize)
    this.limiterRate = limiter === undefined ? undefined : shortestWindowRate(limiter)
    this.breaker = resolved.breaker === undefined
      ? undefined
      : new CircuitBreaker(resolved.breaker, (state) => circuitGauge.unsafeUpdate(circuitValue[state], this.labels))
    if (this.breaker !== undefined) circuitGauge.unsafeUpdate(0, this.labels)
    this.limiterMaxWaitMillis = limiter === undefined ? Infinity : Duration.toMillis(limiter.maxWait)
    this.defaults = {
      permits: 1,
      cost: 1,
      attemptTimeoutMillis: resolved.attemptTimeoutMillis,
      totalTimeoutMillis: resolved.totalTimeoutMillis,
      maxAttempts: resolved.maxAttempts
    }
    this.gracePeriod = Duration.millis(resolved.gracePeriodMillis)
  }

  get name(): string {
    return this.resolved.name
  }

  private perCall(options: Api.CallOptions | undefined): PerCall {
    // no option set (an HTTP client passes `{}` on every call): the provider's own, as validated once
    if (
      options === undefined ||
      (options.permits === undefined && options.cost === undefined && options.attemptTimeout === undefined &&
        options.totalTimeout === undefined && options.retry !== false)
    ) return this.defaults
    const name = this.name
    return {
      permits: positiveInteger(name, "permits", options.permits, 1),
      cost: positiveInteger(name, "cost", options.cost, 1),
      attemptTimeoutMillis: options.attemptTimeout === undefined
        ? this.defaults.attemptTimeoutMillis
        : millisOf(name, "attemptTimeout", options.attemptTimeout, { allowZero: false }),
      totalTimeoutMillis: options.totalTimeout === undefined
        ? this.defaults.totalTimeoutMillis
        : millisOf(name, "totalTimeout", options.totalTimeout, { allowZero: false }),
      maxAttempts: options.retry === false ? 1 : this.defaults.maxAttempts
    }
  }

  call<A, E, R>(self: Effect.Effect<A, E, R>, options?: Api.CallOptions): Effect.Effect<A, unknown, R> {
    return Effect.withFiberRuntime<A, unknown, R>((caller, status) =>
      // the call's fiber is started and registered with no interruption in between, so that it is
      // never left running without a caller; only the wait for it is interruptible
      Effect.uninterruptibleMask((restore) =>
        this.start(self, options, caller, status.runtimeFlags, restore) as Effect.Effect<A, unknown, R>
      )
    )
  }

  /**
   * The span `Provider.call`, made as `Effect.makeSpan` makes it (the caller's tracer, parent span,
   * span links and annotations, and the start time when timing is on) without copying the caller's
   * refs to read three of them. The span is ended by the provider when the call settles, as
   * `Effect.useSpan` would end it, without the wrapper `useSpan` puts around the call.
   */
  private makeSpan(caller: Fiber.RuntimeFiber<unknown, unknown>, clock: Clock.Clock, timing: boolean): Tracer.Span {
    const options = this.spanOptions ??= { attributes: { "sluice.provider": this.name }, captureStackTrace: false }
    this.spanTrace ??= spanTrace()
    const span = caller.currentTracer.span(
      "Provider.call",
      visibleParent(Context.getOption(caller.currentContext, Tracer.ParentSpan)),
      Context.empty(),
      Chunk.toReadonlyArray(caller.getFiberRef(FiberRef.currentTracerSpanLinks)),
      timing ? clock.unsafeCurrentTimeNanos() : BigInt(0),
      "internal",
      options
    )
    HashMap.forEach(
      caller.getFiberRef(FiberRef.currentTracerSpanAnnotations),
      (value, key) => span.attribute(key, value)
    )
    span.attribute("sluice.provider", this.name)
    return span
  }

  /** As `Effect.useSpan` ends its span: the stack trace on a failure, the end time when timing is on. */
  private endSpan(span: Tracer.Span, exit: Exit.Exit<unknown, unknown>, clock: Clock.Clock, timing: boolean): void {
    if (span.status._tag === "Ended") return
    if (Exit.isFailure(exit)) span.attribute("code.stacktrace", this.spanTrace?.())
    span.end(timing ? clock.unsafeCurrentTimeNanos() : BigInt(0), exit)
  }

  /**
   * Starts the call: its attempts run in a fiber of their own, started at once (a call that
   * completes without suspending never suspends its caller), and the caller waits for it. The
   * total budget, when there is one, runs on a timer fiber beside it.
   */
  private start<A, E, R>(
    self: Effect.Effect<A, E, R>,
    options: Api.CallOptions | undefined,
    caller: Fiber.RuntimeFiber<unknown, unknown>,
    runtimeFlags: RuntimeFlags.RuntimeFlags,
    restore: <X, Y, Z>(effect: Effect.Effect<X, Y, Z>) => Effect.Effect<X, Y, Z>
  ): Effect.Effect<unknown, unknown> {
    const clock = Context.get(caller.currentDefaultServices, Clock.Clock)
    // with tracing off every span is a no-op that nothing can reach: none is made
    const traced = caller.getFiberRef(FiberRef.currentTracerEnabled)
    const timing = traced && caller.getFiberRef(FiberRef.currentTracerTimingEnabled)
    const span = traced ? this.makeSpan(caller, clock, timing) : undefined
    let perCall: PerCall
    try {
      perCall = this.perCall(options)
    } catch (defect) {
      const died = Exit.die(defect)
      if (span !== undefined) this.endSpan(span, died, clock, timing)
      return died
    }
    if (this.closing) {
      this.count("closed")
      this.calls++
      const closed = Exit.fail(
        new errors.ProviderClosed({ provider: this.name, reason: "closing", gracePeriod: this.gracePeriod })
      )
      if (span !== undefined) this.endSpan(span, closed, clock, timing)
      return closed
    }
    const now = clock.unsafeCurrentTimeMillis()
    const total = perCall.totalTimeoutMillis
    // with the caller's runtime flags as they were outside the mask, as a forked fiber would have
    // them; the call's own spans are children of its span
    const forker = new Forker(
      caller,
      runtimeFlags,
      span === undefined ? undefined : Context.add(caller.currentContext, Tracer.ParentSpan, span),
      this.lastForkJoin
    )
    const call = new Call(now, total === undefined ? Infinity : now + total, span, caller.id(), forker, clock, timing)
    this.inFlight++
    this.active.add(call)
    // the caller's context provides `R`
    const fiber = forker.start(this.attemptFrom(self, perCall, call, clock, 1, undefined) as Effect.Effect<A, unknown>)
    call.fiber = fiber
    if (total !== undefined && fiber.unsafePoll() === null) call.timer = forker.run(this.timer(call, perCall, clock))
    fiber.addObserver((exit) => this.settle(call, fiber, exit))
    // done without suspending: no wait at all
    if (call.result !== undefined) return call.result
    return Effect.matchCauseEffect(restore(Effect.async<unknown, unknown>((resume) => this.wait(call, resume))), {
      // the caller was interrupted before the call ended: the call's fiber is interrupted, and awaited
      onFailure: (cause) =>
        call.result === undefined
          ? Effect.zipRight(this.cancel(call), Effect.failCause(cause))
          : Effect.failCause(cause),
      onSuccess: Effect.succeed
    })
  }

  private wait(call: Call, resume: (effect: Effect.Effect<unknown, unknown>) => void): void {
    if (call.result !== undefined) resume(call.result)
    else call.resume = resume
  }

  /**
   * The total budget: when it runs out, the call ends with `TotalTimeout`. When the current phase's
   * own budget (attempt, permit wait) ends at the same instant, the total steps aside and lets the
   * innermost budget report: the call then ends by itself, since no attempt starts past the total.
   */
  private timer(call: Call, perCall: PerCall, clock: Clock.Clock): Effect.Effect<void> {
    // interruptible even for a caller that is not: the timer goes as soon as the call has ended
    return Effect.flatMap(Effect.interruptible(clock.sleep(Duration.millis(call.deadline - call.startedAt))), () => {
      const now = clock.unsafeCurrentTimeMillis()
      const innerDue = (call.phase === "call" || call.phase === "permit_wait") && call.phaseDeadline <= now
      if (!innerDue) this.end(call, Exit.fail(this.totalTimeout(call, perCall, now, call.phase)))
      return Effect.void
    })
  }

  /** Ends a call from outside: its fiber is interrupted, and the caller gets `exit` once it has ended. */
  private end(call: Call, exit: Exit.Exit<never, unknown>): void {
    if (call.result !== undefined || call.ending !== undefined) return
    call.ending = exit
    call.fiber?.unsafeInterruptAsFork(call.callerId)
  }

  /** The caller was interrupted while it waited: the call's fiber is interrupted, and awaited. */
  private cancel(call: Call): Effect.Effect<void> {
    return Effect.suspend(() => {
      if (call.result !== undefined) return Effect.void
      call.callerInterrupted = true
      call.fiber?.unsafeInterruptAsFork(call.callerId)
      return Effect.async<void>((resume) => {
        if (call.result !== undefined) resume(Effect.void)
        else call.resume = () => resume(Effect.void)
      })
    })
  }

  /** The call's fiber has ended (on the fiber's side): the bookkeeping, then the caller resumes. */
  private settle(call: Call, fiber: Fiber.RuntimeFiber<unknown, unknown>, exit: Exit.Exit<unknown, unknown>): void {
    if (call.result !== undefined) return
    this.active.delete(call)
    call.timer?.unsafeInterruptAsFork(call.callerId)
    const ending = call.ending
    // counted as the caller saw it: interrupted, ended by the provider, or as the attempts ended
    const seen = unwrapExit(ending ?? exit)
    const interrupted = call.callerInterrupted ? Exit.interrupt(call.callerId) : undefined
    this.finish(interrupted ?? ending ?? exit, call)
    if (call.span !== undefined) this.endSpan(call.span, interrupted ?? seen, call.clock, call.timing)
    // as the winner of a race would: what the call changed in its fiber's refs passes to the caller
    const inherit = ending === undefined ? call.forker.inherit(fiber) : undefined
    call.result = inherit === undefined ? seen : Effect.zipRight(inherit, seen)
    const resume = call.resume
    if (resume !== undefined) {
      call.resume = undefined
      resume(call.result)
    }
  }

  private totalTimeout(state: Call, perCall: PerCall, now: number, phase: errors.Phase): errors.TotalTimeout {
    return new errors.TotalTimeout({
      provider: this.name,
      timeout: Duration.millis(perCall.totalTimeoutMillis ?? Infinity),
      elapsed: Duration.millis(now - state.startedAt),
      attempts: state.attempt,
      phase
    })
  }

  /** Attempt `attempt`, then the retries the policy allows. */
  private attemptFrom<A, E, R>(
    self: Effect.Effect<A, E, R>,
    perCall: PerCall,
    state: Call,
    clock: Clock.Clock,
    attempt: number,
    lastError: unknown
  ): Effect.Effect<A, unknown, R> {
    // the first attempt is made as the call starts: nothing to defer
    const begin = () => {
      const now = clock.unsafeCurrentTimeMillis()
      const budget = this.resolved.budget
      if (attempt > 1) {
        // the attempt and the total ended at the same instant: the attempt's error stands
        if (now >= state.deadline) return Effect.fail(lastError)
        if (budget !== undefined) {
          const window = budget.check(now)
          if (window.retries >= window.allowed) {
            return Effect.fail(
              new errors.RetryBudgetExhausted({
                provider: this.name,
                attempt,
                retries: window.retries,
                firstAttempts: window.firsts,
                allowed: window.allowed,
                window: Duration.millis(budget.settings.windowMillis),
                lastError: unwrap(lastError)
              })
            )
          }
        }
      }
      state.phase = "circuit"
      let probe = false
      if (this.breaker !== undefined) {
        const admission = this.breaker.admit(now)
        if (admission._tag === "Refuse") {
          return Effect.fail(
            new errors.CircuitOpen({
              provider: this.name,
              state: admission.state,
              failures: admission.failures,
              openedFor: Duration.millis(admission.openedForMillis),
              retryAfter: Duration.millis(admission.retryAfterMillis)
            })
          )
        }
        probe = admission.probe
      }
      if (budget !== undefined) {
        if (attempt === 1) budget.recordFirst(now)
        else budget.recordRetry(now)
      }
      state.attempt = attempt
      this.attempts++
      const breaker = this.breaker
      const once = this.attemptOnce(self, perCall, state, clock)
      // a probe ended from outside (its caller, the total budget, shutdown) proves nothing: the
      // next call probes; `afterFailure` never sees an interruption of this fiber
      const attempted = probe && breaker !== undefined
        ? Effect.onInterrupt(once, () => Effect.sync(() => breaker.onNeutral(true)))
        : once
      return Effect.matchCauseEffect(attempted, {
        onSuccess: (value) => {
          this.breaker?.onSuccess(probe)
          return Effect.succeed(value)
        },
        onFailure: (cause) => this.afterFailure(self, perCall, state, clock, attempt, probe, cause)
      })
    }
    return attempt === 1 ? begin() : Effect.suspend(begin)
  }

  private afterFailure<A, E, R>(
    self: Effect.Effect<A, E, R>,
    perCall: PerCall,
    state: Call,
    clock: Clock.Clock,
    attempt: number,
    probe: boolean,
    cause: Cause.Cause<unknown>
  ): Effect.Effect<A, unknown, R> {
    const now = clock.unsafeCurrentTimeMillis()
    const breaker = this.breaker
    const failure = Cause.failureOrCause(cause)
    if (Either.isRight(failure)) {
      // a defect of the call counts against the circuit; an interruption proves nothing
      if (breaker !== undefined) {
        if (Cause.isInterruptedOnly(cause)) breaker.onNeutral(probe)
        else breaker.onFailure(probe, now)
      }
      return Effect.failCause(cause)
    }
    const error = failure.left
    let retryable: boolean
    if (error instanceof CallFailed) {
      if (breaker !== undefined) {
        if (this.resolved.isFailure(error.error)) breaker.onFailure(probe, now)
        else breaker.onSuccess(probe)
      }
      if (this.resolved.isUpstream(error.error)) this.upstreamErrors++
      retryable = this.resolved.isRetryable(error.error)
    } else if (error instanceof errors.CallTimeout) {
      breaker?.onFailure(probe, now)
      retryable = this.resolved.isRetryable(error)
    } else {
      // refused before reaching the upstream: the circuit learns nothing
      breaker?.onNeutral(probe)
      if (RateLimiter.isRateLimiterError(error) && error._tag === "RateLimiterStoreError") this.storeErrors++
      retryable = !(Predicate.hasProperty(error, "_tag") && error._tag === "BulkheadFull") &&
        this.resolved.isRetryable(error)
    }
    if (!retryable || attempt >= perCall.maxAttempts) return Effect.fail(error)
    const { factor, initialMillis, jitter, maxMillis } = this.resolved.backoff
    const exact = Math.min(maxMillis, initialMillis * Math.pow(factor, attempt - 1))
    const withDelay = (delay: number): Effect.Effect<A, unknown, R> => {
      if (now >= state.deadline) return Effect.fail(error)
      if (now + delay >= state.deadline) {
        return Effect.fail(
          this.totalTimeout(state, perCall, now, "backoff")
        )
      }
      state.phase = "backoff"
      return Effect.zipRight(
        clock.sleep(Duration.millis(delay)),
        this.attemptFrom(self, perCall, state, clock, attempt + 1, error)
      )
    }
    return jitter === 0 ? withDelay(exact) : Effect.flatMap(Random.next, (r) => withDelay(exact * (1 - jitter * r)))
  }

  /** One attempt: bulkhead → rate limiter → attempt timeout → the call → release. */
  private attemptOnce<A, E, R>(
    self: Effect.Effect<A, E, R>,
    perCall: PerCall,
    state: Call,
    clock: Clock.Clock
  ): Effect.Effect<A, unknown, R> {
    const queuedAt = clock.unsafeCurrentTimeMillis()
    state.phase = "permit_wait"
    state.phaseDeadline = queuedAt + this.permitWaitMillis
    const holding = Effect.suspend(() => {
      const granted = clock.unsafeCurrentTimeMillis()
      this.permitWait.add(granted - queuedAt)
      // a permit granted as the total runs out (say, freed by a call that timed out at that
      // instant) comes too late, whichever of the grant and the total's timer ran first
      if (granted >= state.deadline) return Effect.fail(this.totalTimeout(state, perCall, granted, "permit_wait"))
      const limiter = this.limiter
      if (limiter === undefined) return this.callPhase(self, perCall, state, clock)
      state.phase = "limiter_wait"
      state.phaseDeadline = Infinity
      // the limiter refuses at once a start the total budget could not wait for
      const left = state.deadline - granted
      const take = left < this.limiterMaxWaitMillis
        ? limiter.take({ cost: perCall.cost, maxWait: Duration.millis(Math.max(0, left)) })
        : limiter.take(perCall.cost === 1 ? undefined : { cost: perCall.cost })
      return Effect.zipRight(
        take,
        Effect.suspend(() => {
          const passed = clock.unsafeCurrentTimeMillis()
          this.limiterWait.add(passed - granted)
          if (passed >= state.deadline) return Effect.fail(this.totalTimeout(state, perCall, passed, "limiter_wait"))
          return this.callPhase(self, perCall, state, clock)
        })
      )
    })
    return this.bulkhead.run(holding, perCall.permits === 1 ? undefined : { cost: perCall.permits })
  }

  private callPhase<A, E, R>(
    self: Effect.Effect<A, E, R>,
    perCall: PerCall,
    state: Call,
    clock: Clock.Clock
  ): Effect.Effect<A, unknown, R> {
    const start = clock.unsafeCurrentTimeMillis()
    // only a limiter's rate is compared with the starts
    if (this.limiterRate !== undefined) this.starts.add(start)
    state.phase = "call"
    // an infinite attempt budget (a stream's, say) is no budget: no timer for it
    const budget = perCall.attemptTimeoutMillis
    const timeout = budget === Infinity ? undefined : budget
    state.phaseDeadline = timeout === undefined ? Infinity : start + timeout
    const record = () => {
      const took = clock.unsafeCurrentTimeMillis() - start
      this.callTime.add(took)
      callSeconds.unsafeUpdate(took / 1000, this.labels)
    }
    if (timeout === undefined) {
      // `Effect.onExit(Effect.mapError(self, wrap), record)` in one step
      return Effect.uninterruptibleMask((restore) =>
        Effect.matchCauseEffect(restore(self), {
          onSuccess: (value) => {
            record()
            return Effect.succeed(value)
          },
          onFailure: (cause) => {
            record()
            return Effect.failCause(wrapCause(cause))
          }
        })
      )
    }
    const timed = timeoutFail(
      Effect.mapError(self, wrap),
      timeout,
      clock,
      this.lastForkJoin,
      () =>
        new errors.CallTimeout({
          provider: this.name,
          timeout: Duration.millis(timeout),
          attempt: state.attempt,
          maxAttempts: perCall.maxAttempts
        })
    )
    return Effect.onExit(timed, () => Effect.sync(record))
  }

  private count(outcome: Api.Outcome): void {
    this.outcomes[outcome]++
    outcomesTotal.unsafeUpdate(1, this.outcomeLabels[outcome])
  }

  private finish(exit: Exit.Exit<unknown, unknown>, call: Call): void {
    this.inFlight--
    this.calls++
    const outcome = outcomeOf(exit)
    this.count(outcome)
    if (this.closing && this.inFlight === 0) Deferred.unsafeDone(this.drained, Exit.void)
    const span = call.span
    span?.attribute("sluice.provider.attempts", call.attempt)
    span?.attribute("sluice.provider.outcome", outcome)
    if (outcome === "interrupted") {
      interruptedTotal.unsafeUpdate(1, this.phaseLabels[call.phase])
      span?.attribute("sluice.provider.interrupted_phase", call.phase)
    }
  }

  /** Stops admitting, waits for the calls in flight up to the grace period, then interrupts them. */
  readonly shutdown: Effect.Effect<void> = Effect.suspend(() => {
    this.closing = true
    if (this.inFlight === 0) return Effect.void
    // finalizers run uninterruptibly: the wait must be interruptible for the grace period to cut it
    return Effect.interruptible(Deferred.await(this.drained)).pipe(
      Effect.timeoutTo({
        duration: this.gracePeriod,
        onSuccess: () => Effect.void,
        onTimeout: () => Effect.zipRight(Effect.sync(() => this.endAll()), Deferred.await(this.drained))
      }),
      Effect.flatten
    )
  })

  /** The grace period has elapsed: every call still in flight ends with `ProviderClosed`. */
  private endAll(): void {
    for (const call of this.active) {
      this.end(
        call,
        Exit.fail(
          new errors.ProviderClosed({
            provider: this.name,
            reason: "grace-period-elapsed",
            gracePeriod: this.gracePeriod
          })
        )
      )
    }
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
          limiterRate: this.limiterRate
        })
      }
    })
  }
}

const outcomeOf = (exit: Exit.Exit<unknown, unknown>): Api.Outcome => {
  if (Exit.isSuccess(exit)) return "success"
  if (Cause.isInterruptedOnly(exit.cause)) return "interrupted"
  const failure = Cause.failureOrCause(exit.cause)
  if (Either.isRight(failure)) return "call_error"
  const error = failure.left
  if (error instanceof CallFailed) return "call_error"
  if (errors.isProviderError(error)) {
    switch (error._tag) {
      case "CallTimeout":
        return "call_timeout"
      case "TotalTimeout":
        return "total_timeout"
      case "CircuitOpen":
        return "circuit_open"
      case "RetryBudgetExhausted":
        return "retry_budget_exhausted"
      case "ProviderClosed":
        return "closed"
    }
  }
  if (Bulkhead.isBulkheadError(error)) return error._tag === "BulkheadFull" ? "bulkhead_full" : "permit_wait_timeout"
  if (RateLimiter.isRateLimiterError(error)) return error._tag === "RateLimitExceeded" ? "rate_limited" : "store_error"
  return "call_error"
}

// ---------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------

/** @internal */
export const make = (
  options: Api.Options
): Effect.Effect<Api.Provider, never, Scope.Scope | RateLimiterStore.RateLimiterStore> =>
  Effect.suspend(() => {
    let resolved: Resolved
    try {
      resolved = resolve(options)
    } catch (defect) {
      return Effect.die(defect)
    }
    return Effect.gen(function*() {
      const given = options.bulkhead
      const bulkhead = Bulkhead.isBulkhead(given)
        ? given
        : yield* Bulkhead.make({ ...given, name: resolved.name })
      const permitWaitMillis = Bulkhead.isBulkhead(given) || given.maxWait === undefined
        ? Infinity
        : millisOf(resolved.name, "bulkhead.maxWait", given.maxWait, { allowZero: true })
      const settings = options.rateLimiter
      const limiter = settings === undefined || RateLimiter.isRateLimiter(settings)
        ? settings
        : yield* RateLimiter.make({ ...settings, name: resolved.name })
      const impl = new ProviderImpl(resolved, bulkhead, permitWaitMillis, limiter)
      // added after the limiter's dispatcher, so it runs first: calls drain while the limiter still works
      yield* Effect.addFinalizer(() => impl.shutdown)
      const provider: Api.Provider = {
        [TypeId]: TypeId,
        name: resolved.name,
        bulkhead,
        rateLimiter: limiter,
        call: (self, callOptions) => impl.call(self, callOptions) as never,
        stats: impl.stats
      }
      return provider
    })
  })

/** @internal */
export const withProvider = dual<
  (
    provider: Api.Provider<unknown>,
    options?: Api.CallOptions | undefined
  ) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, unknown, R>,
  <A, E, R>(
    self: Effect.Effect<A, E, R>,
    provider: Api.Provider<unknown>,
    options?: Api.CallOptions | undefined
  ) => Effect.Effect<A, unknown, R>
>((args) => Effect.isEffect(args[0]), (self, provider, options) => provider.call(self, options))

// ---------------------------------------------------------------------------------------------
// services and layers
// ---------------------------------------------------------------------------------------------

/** @internal */
export const layer = <I>(
  tag: Context.Tag<I, Api.Provider>,
  options: Api.Options
): Layer.Layer<I, never, RateLimiterStore.RateLimiterStore> => Layer.scoped(tag, make(options))

/** @internal */
export const layerConfig = <I>(
  tag: Context.Tag<I, Api.Provider>,
  config: Config.Config<Api.Options>
): Layer.Layer<I, ConfigError.ConfigError, RateLimiterStore.RateLimiterStore> =>
  Layer.scoped(tag, Effect.flatMap(config, (options) => make(options)))

/** @internal */
export const Tag = <const Id extends string>(id: Id) => <Self>(): Api.TagClass<Self, Id> => {
  const tag = Context.Tag(`@sluice/provider/${id}` as const)<Self, Api.Provider>()
  return Object.assign(tag, {
    id,
    layer: (settings: Api.Settings) => layer(tag, { ...settings, name: id }),
    layerConfig: (config: Config.Config<Api.Settings>) =>
      layerConfig(tag, Config.map(config, (settings): Api.Options => ({ ...settings, name: id })))
  }) as never
}
