/** @internal */
import * as Defaults from "@sluice/core/ProviderDefaults"
import { OptionSchema } from "@sluice/options"
import type { RateLimiter } from "@sluice/rate-limiter"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Api from "../Provider.js"
import * as ProviderError from "../ProviderError.js"
import type { BreakerSettings } from "./circuitBreaker.js"
import type { RetryBudgetSettings } from "./retryBudget.js"

/** @internal */
export const RetryableTypeId: Api.RetryableTypeId = Symbol.for("@sluice/provider/Retryable") as Api.RetryableTypeId

/**
 * The default retry predicate: `CallTimeout`, and errors that mark themselves retryable.
 *
 * @internal
 */
export const isRetryable = (error: unknown): boolean =>
  (error instanceof ProviderError.CallTimeout) ||
  (Predicate.hasProperty(error, RetryableTypeId) && error[RetryableTypeId] === true)

const illegal = (name: string, message: string, kind = "provider"): Cause.IllegalArgumentException =>
  new Cause.IllegalArgumentException(`${OptionSchema.owner(kind, name)}: ${message}`)

/** A budget or a window: 0 would mean "no time at all", a mistake; infinity is "no bound". */
export const Timeout = OptionSchema.duration({ zero: false, infinite: true })
/** A wait that may be none: backoff, the grace period. */
export const Wait = OptionSchema.duration({ zero: true, infinite: true })
export const Count = OptionSchema.integer({ min: 1 })
export const Fraction = OptionSchema.number({ min: 0, max: 1 })
export const Factor = OptionSchema.number({ min: 1 })
export const MinRetries = OptionSchema.integer({ min: 0 })

/** The circuit breaker's options, checked alike in a provider and in `CircuitBreaker.make`. */
const BreakerChecked = Schema.Struct({
  consecutiveFailures: Schema.optional(Count),
  failureRatio: Schema.optional(Schema.Struct({
    ratio: Schema.optional(OptionSchema.number({ greaterThan: 0, max: 1 })),
    window: Schema.optional(Count),
    minimumCalls: Schema.optional(Count)
  })),
  openFor: Schema.optional(Timeout)
})

/** The retry budget's options, checked alike in a provider and in `RetryBudget.make`. */
const BudgetChecked = Schema.Struct({
  ratio: Schema.optional(Fraction),
  minRetries: Schema.optional(MinRetries),
  window: Schema.optional(Timeout)
})

/**
 * The options a provider checks, declared once: `resolve` decodes them, and `Provider.config`
 * reads its keys through the same schemas. (Functions and the bulkhead and limiter, which check
 * their own, are taken from the options as given.)
 */
const Checked = Schema.Struct({
  attemptTimeout: Schema.optional(Timeout),
  totalTimeout: Schema.optional(Timeout),
  retry: Schema.optional(Schema.Struct({
    maxAttempts: Schema.optional(Count),
    backoff: Schema.optional(Schema.Struct({
      initial: Schema.optional(Wait),
      max: Schema.optional(Wait),
      factor: Schema.optional(Factor),
      jitter: Schema.optional(Fraction)
    })),
    budget: Schema.optional(Schema.Union(Schema.Literal(false), BudgetChecked))
  })),
  circuitBreaker: Schema.optional(BreakerChecked),
  gracePeriod: Schema.optional(Wait),
  sampleSize: Schema.optional(Count),
  recording: Schema.optional(Schema.Union(
    Schema.Boolean,
    Schema.Struct({
      bucket: Schema.optional(Timeout),
      maxBuckets: Schema.optional(OptionSchema.integer({ min: 2 }))
    })
  ))
})

/** Keys a provider takes as given: functions, and the bulkhead and limiter, which check their own. */
const providerGiven = [
  "name",
  "bulkhead",
  "rateLimiter",
  "isUpstreamError",
  "retry.isRetryable",
  "circuitBreaker.isFailure"
]

/** A call's keys read as given: its usage, whether it retries, its lane. */
const callGiven = ["usage", "retry", "lane"]

/** A call's own options, decoded only when it sets one. */
const CallChecked = Schema.Struct({
  permits: Schema.optional(Count),
  // units per dimension are the limiter's to check: it names the dimension and the limiter
  cost: Schema.optional(Schema.Union(Count, Schema.Record({ key: Schema.String, value: Schema.Number }))),
  attemptTimeout: Schema.optional(Timeout),
  totalTimeout: Schema.optional(Timeout)
})

const millis = (d: Duration.Duration | undefined, fallback: number): number =>
  d === undefined ? fallback : Duration.toMillis(d)

const optionalMillis = (d: Duration.Duration | undefined): number | undefined =>
  d === undefined ? undefined : Duration.toMillis(d)

/** Defaults and the rule between fields, from the core: a breaker's options refused name it and the value. */
const breakerSettings = (
  cb: Schema.Schema.Type<typeof BreakerChecked>,
  kind: string,
  name: string,
  prefix: string
): BreakerSettings => {
  const outcome = Defaults.breakerSettings({
    consecutiveFailures: cb.consecutiveFailures,
    failureRatio: cb.failureRatio,
    openForMillis: optionalMillis(cb.openFor)
  }, prefix)
  if (outcome._tag === "Invalid") throw illegal(name, outcome.message, kind)
  return outcome.settings
}

const budgetSettings = (options: Schema.Schema.Type<typeof BudgetChecked>): RetryBudgetSettings =>
  Defaults.budgetSettings({
    ratio: options.ratio,
    minRetries: options.minRetries,
    windowMillis: optionalMillis(options.window)
  })

/** A name checked as a provider checks its own. */
const checkName = (kind: string, name: unknown): string => {
  if (typeof name !== "string" || name.length === 0) {
    throw new Cause.IllegalArgumentException(`a ${kind} needs a non-empty name, got ${OptionSchema.show(name)}`)
  }
  return name
}

/**
 * A standalone circuit breaker's options, checked: a defect naming it and the value otherwise.
 *
 * @internal
 */
export const resolveBreaker = (options: { readonly name: string }): BreakerSettings => {
  const name = checkName("circuit breaker", options.name)
  const checked = OptionSchema.decodeSync(BreakerChecked, OptionSchema.owner("circuit breaker", name), [
    "name",
    "isFailure"
  ])(options)
  return breakerSettings(checked, "circuit breaker", name, "")
}

/**
 * A standalone retry budget's options, checked.
 *
 * @internal
 */
export const resolveBudget = (options: { readonly name: string }): RetryBudgetSettings => {
  const name = checkName("retry budget", options.name)
  return budgetSettings(
    OptionSchema.decodeSync(BudgetChecked, OptionSchema.owner("retry budget", name), ["name"])(options)
  )
}

export interface BackoffPolicy {
  readonly initialMillis: number
  readonly maxMillis: number
  readonly factor: number
  readonly jitter: number
}

export interface Resolved {
  readonly name: string
  readonly attemptTimeoutMillis: number | undefined
  readonly totalTimeoutMillis: number | undefined
  readonly maxAttempts: number
  readonly backoff: BackoffPolicy
  readonly isRetryable: (error: unknown) => boolean
  readonly budget: RetryBudgetSettings | undefined
  readonly breaker: BreakerSettings | undefined
  readonly isFailure: (error: unknown) => boolean
  readonly gracePeriodMillis: number
  readonly isUpstream: (error: unknown) => boolean
  readonly sampleSize: number
  /** Recording's bucket and bound; `undefined` when off. */
  readonly recording: { readonly bucketMillis: number; readonly maxBuckets: number } | undefined
  readonly decodeCall: (options: Api.CallOptions) => Schema.Schema.Type<typeof CallChecked>
}

const yes = (): boolean => true
const no = (): boolean => false

const isPlain = (u: unknown): boolean =>
  typeof u === "object" && u !== null && Object.getPrototypeOf(u) === Object.prototype

/** A breaker or a budget given made is the provider's to share, not options to check. */
const checkable = (options: Api.Options): unknown => {
  const retry = options.retry
  return {
    ...options,
    circuitBreaker: isPlain(options.circuitBreaker) ? options.circuitBreaker : undefined,
    retry: isPlain(retry) && retry !== undefined && retry.budget !== false && !isPlain(retry.budget)
      ? { ...retry, budget: undefined }
      : retry
  }
}

export const resolve = (options: Api.Options): Resolved => {
  const name: unknown = options.name
  if (typeof name !== "string" || name.length === 0) {
    throw new Cause.IllegalArgumentException(`a provider needs a non-empty name, got ${OptionSchema.show(name)}`)
  }
  if (options.bulkhead === undefined || options.bulkhead === null) {
    throw illegal(name, "bulkhead is required: a bulkhead or its settings ({ permits, maxWait?, maxWaiting? })")
  }
  const checked = OptionSchema.decodeSync(Checked, OptionSchema.owner("provider", name), providerGiven)(
    checkable(options)
  )
  const retry = checked.retry
  const backoff = retry?.backoff
  const initialMillis = millis(backoff?.initial, 100)
  const budgetOptions = retry === undefined || retry.budget === false ? undefined : retry.budget ?? {}
  const cb = checked.circuitBreaker
  const breaker = cb === undefined ? undefined : breakerSettings(cb, "provider", name, "circuitBreaker.")
  return {
    name,
    attemptTimeoutMillis: optionalMillis(checked.attemptTimeout),
    totalTimeoutMillis: optionalMillis(checked.totalTimeout),
    maxAttempts: retry?.maxAttempts ?? 1,
    backoff: {
      initialMillis,
      maxMillis: millis(backoff?.max, Math.max(10_000, initialMillis)),
      factor: backoff?.factor ?? 2,
      jitter: backoff?.jitter ?? 0.2
    },
    isRetryable: options.retry?.isRetryable ?? isRetryable,
    budget: budgetOptions === undefined ? undefined : budgetSettings(budgetOptions),
    breaker,
    isFailure: options.circuitBreaker?.isFailure ?? yes,
    gracePeriodMillis: millis(checked.gracePeriod, 10_000),
    isUpstream: options.isUpstreamError ?? no,
    sampleSize: checked.sampleSize ?? 1024,
    recording: checked.recording === undefined || checked.recording === false ? undefined : {
      bucketMillis: checked.recording === true ? 1000 : millis(checked.recording.bucket, 1000),
      maxBuckets: checked.recording === true ? 512 : checked.recording.maxBuckets ?? 512
    },
    decodeCall: OptionSchema.decodeSync(CallChecked, OptionSchema.owner("provider", name), callGiven)
  }
}

/**
 * What one call runs with: the provider's defaults, overridden by the call's options.
 *
 * @internal
 */
export interface PerCall {
  readonly permits: number
  /** A number on every limit, or units per dimension (checked by the limiter, naming it). */
  readonly cost: RateLimiter.Cost
  /** Given: the limiter reserves `cost` and the attempt settles it (see `Api.CallOptions.usage`). */
  readonly usage: Api.Usage | undefined
  readonly attemptTimeoutMillis: number | undefined
  readonly totalTimeoutMillis: number | undefined
  readonly maxAttempts: number
  /** The bulkhead lane (`ProviderState.laneFor`); `undefined` for the default one. */
  readonly lane: string | undefined
}

/** @internal */
export const defaultsOf = (resolved: Resolved): PerCall => ({
  permits: 1,
  cost: 1,
  usage: undefined,
  attemptTimeoutMillis: resolved.attemptTimeoutMillis,
  totalTimeoutMillis: resolved.totalTimeoutMillis,
  maxAttempts: resolved.maxAttempts,
  lane: undefined
})

/** @internal */
export const perCall = (
  resolved: Resolved,
  defaults: PerCall,
  options: Api.CallOptions | undefined,
  lane: string | undefined
): PerCall => {
  // no option set (an HTTP client passes `{}` on every call): the provider's own, as validated once
  if (
    options === undefined ||
    (options.permits === undefined && options.cost === undefined && options.attemptTimeout === undefined &&
      options.totalTimeout === undefined && options.retry !== false && options.usage === undefined)
  ) return lane === undefined ? defaults : { ...defaults, lane }
  const call = resolved.decodeCall(options)
  return {
    lane,
    permits: call.permits ?? 1,
    cost: call.cost ?? 1,
    usage: options.usage,
    attemptTimeoutMillis: call.attemptTimeout === undefined
      ? defaults.attemptTimeoutMillis
      : Duration.toMillis(call.attemptTimeout),
    totalTimeoutMillis: call.totalTimeout === undefined
      ? defaults.totalTimeoutMillis
      : Duration.toMillis(call.totalTimeout),
    maxAttempts: options.retry === false ? 1 : defaults.maxAttempts
  }
}
