/** @internal */
import type { RateLimiter } from "@sluice/rate-limiter"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Api from "../Provider.js"
import * as ProviderError from "../ProviderError.js"
import type { BreakerSettings } from "./circuitBreaker.js"
import { show } from "./format.js"
import { RetryBudget } from "./retryBudget.js"

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

const illegal = (name: string, message: string): Cause.IllegalArgumentException =>
  new Cause.IllegalArgumentException(`provider ${JSON.stringify(name)}: ${message}`)

/**
 * A duration option in milliseconds. Effect's `Duration` reads negative and NaN inputs as zero; a
 * budget written as `-5` or `NaN` is a mistake, so it is refused instead of meaning "no time".
 */
export const millisOf = (
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

export const positiveInteger = (name: string, label: string, u: unknown, fallback: number): number => {
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
  readonly budget: RetryBudget | undefined
  readonly breaker: BreakerSettings | undefined
  readonly isFailure: (error: unknown) => boolean
  readonly gracePeriodMillis: number
  readonly isUpstream: (error: unknown) => boolean
  readonly sampleSize: number
}

const yes = (): boolean => true
const no = (): boolean => false

export const resolve = (options: Api.Options): Resolved => {
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
}

/** @internal */
export const defaultsOf = (resolved: Resolved): PerCall => ({
  permits: 1,
  cost: 1,
  usage: undefined,
  attemptTimeoutMillis: resolved.attemptTimeoutMillis,
  totalTimeoutMillis: resolved.totalTimeoutMillis,
  maxAttempts: resolved.maxAttempts
})

/** @internal */
export const perCall = (resolved: Resolved, defaults: PerCall, options: Api.CallOptions | undefined): PerCall => {
  // no option set (an HTTP client passes `{}` on every call): the provider's own, as validated once
  if (
    options === undefined ||
    (options.permits === undefined && options.cost === undefined && options.attemptTimeout === undefined &&
      options.totalTimeout === undefined && options.retry !== false && options.usage === undefined)
  ) return defaults
  const name = resolved.name
  return {
    permits: positiveInteger(name, "permits", options.permits, 1),
    cost: typeof options.cost === "object" ? options.cost : positiveInteger(name, "cost", options.cost, 1),
    usage: options.usage,
    attemptTimeoutMillis: options.attemptTimeout === undefined
      ? defaults.attemptTimeoutMillis
      : millisOf(name, "attemptTimeout", options.attemptTimeout, { allowZero: false }),
    totalTimeoutMillis: options.totalTimeout === undefined
      ? defaults.totalTimeoutMillis
      : millisOf(name, "totalTimeout", options.totalTimeout, { allowZero: false }),
    maxAttempts: options.retry === false ? 1 : defaults.maxAttempts
  }
}
