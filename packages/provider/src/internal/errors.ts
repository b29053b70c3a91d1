/** @internal */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"

/** @internal */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/provider/ProviderError")

/** @internal */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * A duration as a short figure (`2s`, `1s 500ms`, `0ms`).
 *
 * @internal
 */
export const formatDuration = (d: Duration.Duration): string => Duration.format(d) || "0ms"

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * Where a call was when something happened to it.
 *
 * @internal
 */
export type Phase = "circuit" | "permit_wait" | "limiter_wait" | "call" | "backoff"

const phaseText: Record<Phase, string> = {
  circuit: "circuit check",
  permit_wait: "wait for a permit",
  limiter_wait: "wait for the rate limiter",
  call: "call",
  backoff: "backoff before a retry"
}

/** @internal */
export class CallTimeout extends Data.TaggedError("CallTimeout")<{
  readonly provider: string
  readonly timeout: Duration.Duration
  readonly attempt: number
  readonly maxAttempts: number
}> {
  /** @internal */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return `provider "${this.provider}": the call took longer than its ${
      formatDuration(this.timeout)
    } attempt budget (attempt ${this.attempt} of ${this.maxAttempts})`
  }
}

/** @internal */
export class TotalTimeout extends Data.TaggedError("TotalTimeout")<{
  readonly provider: string
  readonly timeout: Duration.Duration
  readonly elapsed: Duration.Duration
  readonly attempts: number
  readonly phase: Phase
}> {
  /** @internal */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
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

/** @internal */
export class CircuitOpen extends Data.TaggedError("CircuitOpen")<{
  readonly provider: string
  readonly state: "open" | "half-open"
  /** The failures that opened the circuit (consecutive, or in the ratio window). */
  readonly failures: number
  /** How long the circuit has been open. */
  readonly openedFor: Duration.Duration
  /** How long until a probe is let through; zero while the probe is in flight. */
  readonly retryAfter: Duration.Duration
}> {
  /** @internal */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    const opened = `the circuit opened ${formatDuration(this.openedFor)} ago after ${plural(this.failures, "failure")}`
    return this.state === "open"
      ? `provider "${this.provider}": ${opened}; calls fail at once until a probe in ${formatDuration(this.retryAfter)}`
      : `provider "${this.provider}": ${opened}; it is half-open and its single probe is in flight`
  }
}

/** @internal */
export class RetryBudgetExhausted extends Data.TaggedError("RetryBudgetExhausted")<{
  readonly provider: string
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
  /** @internal */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    const last = Predicate.hasProperty(this.lastError, "_tag")
      ? ` (the last error: ${String(this.lastError._tag)})`
      : ""
    return `provider "${this.provider}": attempt ${this.attempt} refused by the retry budget: ${
      plural(this.retries, "retry")
    } against ${plural(this.firstAttempts, "first attempt")} in the last ${
      formatDuration(this.window)
    } (${this.allowed} allowed)${last}`
  }
}

/** @internal */
export class ProviderClosed extends Data.TaggedError("ProviderClosed")<{
  readonly provider: string
  readonly reason: "closing" | "grace-period-elapsed"
  readonly gracePeriod: Duration.Duration
}> {
  /** @internal */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  override get message(): string {
    return this.reason === "closing"
      ? `provider "${this.provider}" is shutting down and admits no new calls`
      : `provider "${this.provider}" shut down: the call was interrupted after the ${
        formatDuration(this.gracePeriod)
      } grace period`
  }
}

/** @internal */
export const isProviderError = (
  u: unknown
): u is CallTimeout | TotalTimeout | CircuitOpen | RetryBudgetExhausted | ProviderClosed =>
  Predicate.hasProperty(u, ErrorTypeId)
