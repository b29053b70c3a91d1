/**
 * Every error a provider can produce, as values: its own (`CallTimeout`, `TotalTimeout`,
 * `CircuitOpen`, `RetryBudgetExhausted`, `ProviderClosed`) and those of its bulkhead and limiter,
 * re-exported unchanged so that one import gives `Effect.catchTag`, `instanceof` and the guard.
 *
 * @since 0.1.0
 */
import { Bulkhead } from "@sluice/bulkhead"
import { RateLimiter, RateLimiterStore } from "@sluice/rate-limiter"
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import { formatDuration, plural } from "./internal/format.js"

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
export type Phase = "circuit" | "permit_wait" | "limiter_wait" | "call" | "backoff"

const phaseText: Record<Phase, string> = {
  circuit: "circuit check",
  permit_wait: "wait for a permit",
  limiter_wait: "wait for the rate limiter",
  call: "call",
  backoff: "backoff before a retry"
}

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
    return `provider "${this.provider}": the call took longer than its ${
      formatDuration(this.timeout)
    } attempt budget (attempt ${this.attempt} of ${this.maxAttempts})`
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
    const budget = formatDuration(this.timeout)
    if (this.phase === "backoff") {
      return `provider "${this.provider}": the backoff before attempt ${this.attempts + 1} would pass the ${budget} ` +
        `total budget (${formatDuration(this.elapsed)} spent over ${plural(this.attempts, "attempt")})`
    }
    return `provider "${this.provider}": the operation passed its ${budget} total budget during the ${
      phaseText[this.phase]
    } of attempt ${this.attempts}`
  }
}

/** Who refused, as a message starts: the provider (and its policy, when shared), or the policy alone. */
const ownerOf = (provider: string | undefined, policy: string, name: string): string =>
  provider === undefined
    ? `${policy} "${name}"`
    : name === provider
    ? `provider "${provider}"`
    : `provider "${provider}" (${policy} "${name}")`

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
    const opened = `the circuit opened ${formatDuration(this.openedFor)} ago after ${plural(this.failures, "failure")}`
    const owner = ownerOf(this.provider, "circuit breaker", this.breaker)
    return this.state === "open"
      ? `${owner}: ${opened}; calls fail at once until a probe in ${formatDuration(this.retryAfter)}`
      : `${owner}: ${opened}; it is half-open and its single probe is in flight`
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
    const last = Predicate.hasProperty(this.lastError, "_tag")
      ? ` (the last error: ${String(this.lastError._tag)})`
      : ""
    return `${
      ownerOf(this.provider, "retry budget", this.budget)
    }: attempt ${this.attempt} refused by the retry budget: ${plural(this.retries, "retry", "retries")} against ${
      plural(this.firstAttempts, "first attempt")
    } in the last ${formatDuration(this.window)} (${this.allowed} allowed)${last}`
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
    return this.reason === "closing"
      ? `provider "${this.provider}" is shutting down and admits no new calls`
      : `provider "${this.provider}" shut down: the call was interrupted after the ${
        formatDuration(this.gracePeriod)
      } grace period`
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
