/**
 * Every error a provider can produce, as values: its own (`CallTimeout`, `TotalTimeout`,
 * `CircuitOpen`, `RetryBudgetExhausted`, `ProviderClosed`) and those of its bulkhead and limiter,
 * re-exported unchanged so that one import gives `Effect.catchTag`, `instanceof` and the guard.
 *
 * @since 0.1.0
 */
import { Bulkhead } from "@sluice/bulkhead"
import * as ProviderMessages from "@sluice/core/ProviderMessages"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"

/**
 * @since 0.1.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/provider/ProviderError")

/**
 * @since 0.1.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * Where a call was: the `phase` of `sluice_provider_interrupted_total` and of `TotalTimeout`.
 *
 * @since 0.1.0
 * @category models
 */
export type Phase = ProviderMessages.Phase

/**
 * One attempt's call outlived `attemptTimeout`; it was interrupted and its permit released.
 * Retried by default. When the attempt and the total budget expire at the same instant, this is
 * the error (the innermost budget wins).
 *
 * @since 0.1.0
 * @category errors
 */
export class CallTimeout extends Data.TaggedError("CallTimeout")<{
  readonly provider: string
  readonly timeout: Duration.Duration
  readonly attempt: number
  readonly maxAttempts: number
}> {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 0.1.0 */
  override get message(): string {
    return ProviderMessages.callTimeout({ ...this, timeoutMillis: Duration.toMillis(this.timeout) })
  }
}

/**
 * The whole operation (waits, attempts, backoff) outlived `totalTimeout`, or the next backoff
 * would; `phase` says where it was.
 *
 * @since 0.1.0
 * @category errors
 */
export class TotalTimeout extends Data.TaggedError("TotalTimeout")<{
  readonly provider: string
  readonly timeout: Duration.Duration
  readonly elapsed: Duration.Duration
  readonly attempts: number
  readonly phase: Phase
}> {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 0.1.0 */
  override get message(): string {
    return ProviderMessages.totalTimeout({
      ...this,
      timeoutMillis: Duration.toMillis(this.timeout),
      elapsedMillis: Duration.toMillis(this.elapsed)
    })
  }
}

/**
 * The circuit is open (or half-open with its probe in flight): the call failed at once, holding
 * nothing. `retryAfter` is how long until a probe is let through.
 *
 * @since 0.1.0
 * @category errors
 */
export class CircuitOpen extends Data.TaggedError("CircuitOpen")<{
  /** The breaker's name: a provider's carries the provider's, unless one was given to it. */
  readonly breaker: string
  /** The provider whose call was refused; `undefined` for a breaker used on its own. */
  readonly provider: string | undefined
  readonly state: "open" | "half-open"
  /** The failures that opened the circuit (consecutive, or in the ratio window). */
  readonly failures: number
  /** How long the circuit has been open. */
  readonly openedFor: Duration.Duration
  /** How long until a probe is let through; zero while the probe is in flight. */
  readonly retryAfter: Duration.Duration
}> {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 0.1.0 */
  override get message(): string {
    return ProviderMessages.circuitOpen({
      ...this,
      openedForMillis: Duration.toMillis(this.openedFor),
      retryAfterMillis: Duration.toMillis(this.retryAfter)
    })
  }
}

/**
 * A retry was due but the retry budget was spent; the error it would have retried is `lastError`.
 *
 * @since 0.1.0
 * @category errors
 */
export class RetryBudgetExhausted extends Data.TaggedError("RetryBudgetExhausted")<{
  /** The budget's name: a provider's carries the provider's, unless one was given to it. */
  readonly budget: string
  /** The provider whose retry was refused; `undefined` for a budget used on its own. */
  readonly provider: string | undefined
  /** The attempt that was refused (2 is the first retry). */
  readonly attempt: number
  /** Retries made in the window. */
  readonly retries: number
  /** First attempts made in the window. */
  readonly firstAttempts: number
  /** Retries the budget allowed in the window. */
  readonly allowed: number
  readonly window: Duration.Duration
  /** The error the refused retry would have retried. */
  readonly lastError: unknown
}> {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 0.1.0 */
  override get message(): string {
    return ProviderMessages.retryBudgetExhausted({ ...this, windowMillis: Duration.toMillis(this.window) })
  }
}

/**
 * The provider's scope is closing: a new call is refused at once (`reason: "closing"`), and a call
 * still running when the grace period ends is interrupted (`"grace-period-elapsed"`).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderClosed extends Data.TaggedError("ProviderClosed")<{
  readonly provider: string
  readonly reason: "closing" | "grace-period-elapsed"
  readonly gracePeriod: Duration.Duration
}> {
  /** @since 0.1.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 0.1.0 */
  override get message(): string {
    return ProviderMessages.providerClosed({ ...this, gracePeriodMillis: Duration.toMillis(this.gracePeriod) })
  }
}

/**
 * The bulkhead's queue was at `maxWaiting` (from `@sluice/bulkhead`); never retried.
 *
 * @since 0.1.0
 * @category errors
 */
export const BulkheadFull: typeof Bulkhead.BulkheadFull = Bulkhead.BulkheadFull

/**
 * @since 0.1.0
 * @category errors
 */
export type BulkheadFull = Bulkhead.BulkheadFull

/**
 * The permit wait passed the bulkhead's `maxWait` (from `@sluice/bulkhead`).
 *
 * @since 0.1.0
 * @category errors
 */
export const PermitWaitTimeout: typeof Bulkhead.PermitWaitTimeout = Bulkhead.PermitWaitTimeout

/**
 * @since 0.1.0
 * @category errors
 */
export type PermitWaitTimeout = Bulkhead.PermitWaitTimeout

/**
 * The limiter refused: the start would come later than its wait budget (its `maxWait`, capped by
 * what is left of the total). From `@sluice/rate-limiter`.
 *
 * @since 0.1.0
 * @category errors
 */
export const RateLimitExceeded: typeof RateLimiter.RateLimitExceeded = RateLimiter.RateLimitExceeded

/**
 * @since 0.1.0
 * @category errors
 */
export type RateLimitExceeded = RateLimiter.RateLimitExceeded

/**
 * The call's cost on one dimension is more than a limit of that dimension can ever hold (a
 * 300,000-token request against 200,000 tokens a minute): it fails at once, never waits. From
 * `@sluice/rate-limiter`.
 *
 * @since 0.2.0
 * @category errors
 */
export const CostExceedsCapacity: typeof RateLimiter.CostExceedsCapacity = RateLimiter.CostExceedsCapacity

/**
 * @since 0.2.0
 * @category errors
 */
export type CostExceedsCapacity = RateLimiter.CostExceedsCapacity

/**
 * The limiter's store failed to decide (from `@sluice/rate-limiter`).
 *
 * @since 0.1.0
 * @category errors
 */
export const RateLimiterStoreError: typeof RateLimiterStore.RateLimiterStoreError =
  RateLimiterStore.RateLimiterStoreError

/**
 * @since 0.1.0
 * @category errors
 */
export type RateLimiterStoreError = RateLimiterStore.RateLimiterStoreError

/**
 * Every refusal a provider can produce.
 *
 * @since 0.1.0
 * @category errors
 */
export type ProviderError =
  | BulkheadFull
  | PermitWaitTimeout
  | RateLimitExceeded
  | CostExceedsCapacity
  | RateLimiterStoreError
  | CallTimeout
  | TotalTimeout
  | CircuitOpen
  | RetryBudgetExhausted
  | ProviderClosed

/**
 * True for every member of `ProviderError`, the bulkhead's and the limiter's errors included.
 *
 * @since 0.1.0
 * @category guards
 */
export const isProviderError = (u: unknown): u is ProviderError =>
  Predicate.hasProperty(u, ErrorTypeId) || Bulkhead.isBulkheadError(u) || RateLimiter.isRateLimiterError(u)
