/**
 * Every error a provider can produce, as values: its own (`CallTimeout`, `TotalTimeout`,
 * `CircuitOpen`, `RetryBudgetExhausted`, `ProviderClosed`) and those of its bulkhead and limiter,
 * re-exported unchanged so that one import gives `Effect.catchTag`, `instanceof` and the guard.
 *
 * @since 2.0.0
 */
import { Bulkhead } from "@sluice/bulkhead"
import * as ProviderMessages from "@sluice/core/ProviderMessages"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * @since 2.0.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/provider/ProviderError")

/**
 * @since 2.0.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * Where a call was: the `phase` of `sluice_provider_interrupted_total` and of `TotalTimeout`.
 *
 * @since 2.0.0
 * @category models
 */
export type Phase = ProviderMessages.Phase

/**
 * One attempt's call outlived `attemptTimeout`; it was interrupted and its permit released.
 * Retried by default. When the attempt and the total budget expire at the same instant, this is
 * the error (the innermost budget wins).
 *
 * @since 2.0.0
 * @category errors
 */
export class CallTimeout extends Schema.TaggedError<CallTimeout>()("CallTimeout", {
  provider: Schema.String,
  timeout: Schema.Duration,
  attempt: Schema.Number,
  maxAttempts: Schema.Number
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  override get message(): string {
    return ProviderMessages.callTimeout({ ...this, timeoutMillis: Duration.toMillis(this.timeout) })
  }
}

/**
 * The whole operation (waits, attempts, backoff) outlived `totalTimeout`, or the next backoff
 * would; `phase` says where it was.
 *
 * @since 2.0.0
 * @category errors
 */
export class TotalTimeout extends Schema.TaggedError<TotalTimeout>()("TotalTimeout", {
  provider: Schema.String,
  timeout: Schema.Duration,
  elapsed: Schema.Duration,
  attempts: Schema.Number,
  phase: Schema.Literals(["circuit", "permit_wait", "limiter_wait", "call", "backoff"])
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
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
 * @since 2.0.0
 * @category errors
 */
export class CircuitOpen extends Schema.TaggedError<CircuitOpen>()("CircuitOpen", {
  /** The breaker's name: a provider's carries the provider's, unless one was given to it. */
  breaker: Schema.String,
  /** The provider whose call was refused; `undefined` for a breaker used on its own. */
  provider: Schema.UndefinedOr(Schema.String),
  state: Schema.Literals(["open", "half-open"]),
  /** The failures that opened the circuit (consecutive, or in the ratio window). */
  failures: Schema.Number,
  /** How long the circuit has been open. */
  openedFor: Schema.Duration,
  /** How long until a probe is let through; zero while the probe is in flight. */
  retryAfter: Schema.Duration
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
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
 * @since 2.0.0
 * @category errors
 */
export class RetryBudgetExhausted extends Schema.TaggedError<RetryBudgetExhausted>()("RetryBudgetExhausted", {
  /** The budget's name: a provider's carries the provider's, unless one was given to it. */
  budget: Schema.String,
  /** The provider whose retry was refused; `undefined` for a budget used on its own. */
  provider: Schema.UndefinedOr(Schema.String),
  /** The attempt that was refused (2 is the first retry). */
  attempt: Schema.Number,
  /** Retries made in the window. */
  retries: Schema.Number,
  /** First attempts made in the window. */
  firstAttempts: Schema.Number,
  /** Retries the budget allowed in the window. */
  allowed: Schema.Number,
  window: Schema.Duration,
  /** The error the refused retry would have retried. */
  lastError: Schema.Unknown
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  override get message(): string {
    return ProviderMessages.retryBudgetExhausted({ ...this, windowMillis: Duration.toMillis(this.window) })
  }
}

/**
 * The provider's scope is closing: a new call is refused at once (`reason: "closing"`), and a call
 * still running when the grace period ends is interrupted (`"grace-period-elapsed"`).
 *
 * @since 2.0.0
 * @category errors
 */
export class ProviderClosed extends Schema.TaggedError<ProviderClosed>()("ProviderClosed", {
  provider: Schema.String,
  reason: Schema.Literals(["closing", "grace-period-elapsed"]),
  gracePeriod: Schema.Duration
}) {
  /** @since 2.0.0 */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /** @since 2.0.0 */
  override get message(): string {
    return ProviderMessages.providerClosed({ ...this, gracePeriodMillis: Duration.toMillis(this.gracePeriod) })
  }
}

/**
 * The bulkhead's queue was at `maxWaiting` (from `@sluice/bulkhead`); never retried.
 *
 * @since 2.0.0
 * @category errors
 */
export const BulkheadFull: typeof Bulkhead.BulkheadFull = Bulkhead.BulkheadFull

/**
 * @since 2.0.0
 * @category errors
 */
export interface BulkheadFull extends Bulkhead.BulkheadFull {}

/**
 * The permit wait passed the bulkhead's `maxWait` (from `@sluice/bulkhead`).
 *
 * @since 2.0.0
 * @category errors
 */
export const PermitWaitTimeout: typeof Bulkhead.PermitWaitTimeout = Bulkhead.PermitWaitTimeout

/**
 * @since 2.0.0
 * @category errors
 */
export interface PermitWaitTimeout extends Bulkhead.PermitWaitTimeout {}

/**
 * The limiter refused: the start would come later than its wait budget (its `maxWait`, capped by
 * what is left of the total). From `@sluice/rate-limiter`.
 *
 * @since 2.0.0
 * @category errors
 */
export const RateLimitExceeded: typeof RateLimiter.RateLimitExceeded = RateLimiter.RateLimitExceeded

/**
 * @since 2.0.0
 * @category errors
 */
export interface RateLimitExceeded extends RateLimiter.RateLimitExceeded {}

/**
 * The call's cost on one dimension is more than a limit of that dimension can ever hold (a
 * 300,000-token request against 200,000 tokens a minute): it fails at once, never waits. From
 * `@sluice/rate-limiter`.
 *
 * @since 2.0.0
 * @category errors
 */
export const CostExceedsCapacity: typeof RateLimiter.CostExceedsCapacity = RateLimiter.CostExceedsCapacity

/**
 * @since 2.0.0
 * @category errors
 */
export interface CostExceedsCapacity extends RateLimiter.CostExceedsCapacity {}

/**
 * The limiter's store failed to decide (from `@sluice/rate-limiter`).
 *
 * @since 2.0.0
 * @category errors
 */
export const RateLimiterStoreError: typeof RateLimiterStore.RateLimiterStoreError =
  RateLimiterStore.RateLimiterStoreError

/**
 * @since 2.0.0
 * @category errors
 */
export interface RateLimiterStoreError extends RateLimiterStore.RateLimiterStoreError {}

/**
 * Every refusal a provider can produce.
 *
 * @since 2.0.0
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
 * @since 2.0.0
 * @category guards
 */
export const isProviderError = (u: unknown): u is ProviderError =>
  Predicate.hasProperty(u, ErrorTypeId) || Bulkhead.isBulkheadError(u) || RateLimiter.isRateLimiterError(u)
