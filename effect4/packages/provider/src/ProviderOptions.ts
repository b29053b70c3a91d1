/**
 * The options of a provider and of one call: the bulkhead and limiter it is built from, its
 * budgets, retries with their backoff and budget, the circuit breaker, and a call's cost and
 * usage. `Provider` re-exports each under the same name (`Provider.Options`).
 *
 * @since 2.0.0
 */
import type { Bulkhead } from "@sluice/bulkhead"
import type { RateLimiter } from "@sluice/rate-limiter"
import type * as Duration from "effect/Duration"
import type * as Exit from "effect/Exit"
import type * as CircuitBreakerModule from "./CircuitBreaker.js"
import type * as ProviderRecordingModule from "./ProviderRecording.js"
import type * as RetryBudgetModule from "./RetryBudget.js"

/**
 * Exponential backoff between attempts: `initial × factor^(retry - 1)`, at most `max`, then
 * shortened by up to `jitter` of itself at random (0: exact delays, 1: "full jitter").
 *
 * @since 2.0.0
 * @category models
 */
export interface Backoff {
  /** Default 100 ms. */
  readonly initial?: Duration.Input | undefined
  /** Default 10 s. */
  readonly max?: Duration.Input | undefined
  /** Default 2. */
  readonly factor?: number | undefined
  /** A fraction from 0 to 1. Default 0.2. */
  readonly jitter?: number | undefined
}

/**
 * Stops retry storms: a retry is allowed while the retries in the sliding `window` stay below
 * `max(minRetries, ratio × first attempts)`. The window slides by tenths.
 *
 * @since 2.0.0
 * @category models
 */
export interface RetryBudget {
  /** Retries per first attempt. Default 0.1: at most 10 % extra calls. */
  readonly ratio?: number | undefined
  /** Retries always allowed per window. Default 3. */
  readonly minRetries?: number | undefined
  /** Default 10 s. */
  readonly window?: Duration.Input | undefined
}

/**
 * @since 2.0.0
 * @category models
 */
export interface RetryOptions {
  /** Attempts in all, the first included: an integer ≥ 1. */
  readonly maxAttempts: number
  readonly backoff?: Backoff | undefined
  /**
   * Which errors are retried. Default: `CallTimeout`, and errors that carry
   * `[Provider.RetryableTypeId]: true`. `BulkheadFull`, `CircuitOpen`, `RetryBudgetExhausted`,
   * `TotalTimeout` and `ProviderClosed` are never retried, whatever the predicate says.
   */
  readonly isRetryable?: ((error: unknown) => boolean) | undefined
  /**
   * The retry budget, its settings or one made by `RetryBudget.make` (shared with whatever else
   * uses it); `false` turns it off (then `RetryBudgetExhausted` is not in the type). Default on.
   */
  readonly budget?: RetryBudget | RetryBudgetModule.RetryBudget | false | undefined
}

/**
 * The failure ratio over the last `window` calls (count-based).
 *
 * @since 2.0.0
 * @category models
 */
export interface FailureRatio {
  /** From 0 (exclusive) to 1. */
  readonly ratio: number
  /** The last calls considered, an integer ≥ 1. */
  readonly window: number
  /** Calls needed in the window before the ratio counts. Default: `window`. */
  readonly minimumCalls?: number | undefined
}

/**
 * Opens after `consecutiveFailures` failures in a row, or when `failureRatio` is reached (give
 * either or both; default: 5 consecutive failures). Only the call's own failures and
 * `CallTimeout` count, never a refusal by the bulkhead or the limiter.
 *
 * @since 2.0.0
 * @category models
 */
export interface CircuitBreakerOptions {
  readonly consecutiveFailures?: number | undefined
  readonly failureRatio?: FailureRatio | undefined
  /** How long the circuit stays open before a probe. Default 30 s. */
  readonly openFor?: Duration.Input | undefined
  /** Which failures of the call count. Default: all. */
  readonly isFailure?: ((error: unknown) => boolean) | undefined
}

/**
 * @since 2.0.0
 * @category models
 */
export interface Options {
  /** The name used in errors, metrics and spans; also the bulkhead's and limiter's when built here. */
  readonly name: string
  /** A bulkhead (its store error, e.g. a Redis bulkhead's, joins the provider's errors), or its settings. */
  readonly bulkhead: Bulkhead.Bulkhead<unknown> | Bulkhead.Settings
  /** A rate limiter, or its settings (built on the `RateLimiterStore` service). */
  readonly rateLimiter?: RateLimiter.RateLimiter | RateLimiter.Settings | undefined
  /** The budget of one attempt, around the call only (not the waits): `CallTimeout`. */
  readonly attemptTimeout?: Duration.Input | undefined
  /** The budget of the whole operation, waits, attempts and backoff included: `TotalTimeout` (shorter than `attemptTimeout`, it cuts the attempt). */
  readonly totalTimeout?: Duration.Input | undefined
  readonly retry?: RetryOptions | undefined
  /** The breaker's settings, or one made by `CircuitBreaker.make` (shared with whatever else uses it). */
  readonly circuitBreaker?: CircuitBreakerOptions | CircuitBreakerModule.CircuitBreaker | undefined
  /** How long in-flight calls may run on when the provider's scope closes (`Infinity`: as long as they take). Default 10 s. */
  readonly gracePeriod?: Duration.Input | undefined
  /** Which failures of the call are upstream signals (429s, 5xx) for the verdict. Default: none. */
  readonly isUpstreamError?: ((error: unknown) => boolean) | undefined
  /** How many recent attempts the stats keep per phase. Default 1,024. */
  readonly sampleSize?: number | undefined
  /**
   * Record the run as time series, read with `provider.recording` (see `ProviderRecording`):
   * `true` for the defaults (1 s buckets, at most 512). Default off: a provider that does not
   * record pays nothing for it.
   *
   * @since 2.0.0
   */
  readonly recording?: boolean | ProviderRecordingModule.Options | undefined
}

/**
 * Everything but the name: what a service tag's `layer` takes.
 *
 * @since 2.0.0
 * @category models
 */
export type Settings = Omit<Options, "name">

/**
 * Options of one call.
 *
 * @since 2.0.0
 * @category models
 */
export interface CallOptions {
  /** Bulkhead permits this call holds. Default 1. */
  readonly permits?: number | undefined
  /**
   * Rate limiter units this call takes: a number on every limit, or units per dimension
   * (`{ requests: 1, tokens: 1_800 }`; see `RateLimiter.Cost`). With `usage`, an estimate that
   * each attempt settles. Default 1.
   */
  readonly cost?: RateLimiter.Cost | undefined
  /**
   * The actual usage of an attempt, read from how it ended. Given, each attempt *reserves* `cost`
   * on the limiter instead of taking it, and settles the reservation when the attempt ends,
   * inside the permit, before its release: with the `Cost` this returns (dimensions it omits keep
   * their estimate), with `"release"` (the upstream never counted the call: the connection was
   * refused), or keeping the whole estimate with `undefined` (the upstream may have counted it and
   * said nothing). An attempt that ends before its call starts (the total budget ran out in the
   * limiter, an interruption) releases without asking. The exit is the call's own: its value, its
   * error, or an interruption (the caller's, `CallTimeout`, shutdown). An exception thrown here is
   * logged and keeps the estimate.
   *
   * @since 2.0.0
   */
  readonly usage?: Usage | undefined
  /** Overrides the provider's attempt budget. */
  readonly attemptTimeout?: Duration.Input | undefined
  /** Overrides the provider's total budget. */
  readonly totalTimeout?: Duration.Input | undefined
  /** `false`: one attempt only, e.g. for a call that is not idempotent. Default `true`. */
  readonly retry?: boolean | undefined
  /**
   * The bulkhead lane this call waits in, for a provider whose bulkhead has `lanes`; wins over
   * `Provider.withLane`. Default: the lane `withLane` set, else the bulkhead's default lane.
   * Ignored by a bulkhead without lanes.
   *
   * @since 2.0.0
   */
  readonly lane?: string | undefined
}

/**
 * A call's cost on the limiter: a number on every limit, or units per dimension (see
 * `RateLimiter.Cost`).
 *
 * @since 2.0.0
 * @category models
 */
export type Cost = RateLimiter.Cost

/**
 * How an attempt's reservation is settled: the actual usage, `"release"`, or `undefined` to keep
 * the estimate (see `CallOptions.usage`).
 *
 * @since 2.0.0
 * @category models
 */
export type Settlement = RateLimiter.Cost | "release" | undefined

/**
 * @since 2.0.0
 * @category models
 */
export type Usage = (exit: Exit.Exit<unknown, unknown>) => Settlement
