/**
 * The sentences of a provider's own refusals (`CallTimeout`, `TotalTimeout`, `CircuitOpen`,
 * `RetryBudgetExhausted`, `ProviderClosed`), built from their fields with durations in
 * milliseconds: both Effect lines' errors take their `message` from here, so that the same refusal
 * prints the same bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */
import { formatMillis, plural } from "./Verdict.js"

/**
 * Where a call was: the `phase` of `sluice_provider_interrupted_total` and of `TotalTimeout`.
 *
 * @since 0.1.0
 * @category models
 */
export type Phase = "circuit" | "permit_wait" | "limiter_wait" | "call" | "backoff"

/**
 * Every phase, in the order a call goes through them.
 *
 * @since 0.4.0
 * @category models
 */
export const phases: ReadonlyArray<Phase> = ["circuit", "permit_wait", "limiter_wait", "call", "backoff"]

const phaseText: Record<Phase, string> = {
  circuit: "circuit check",
  permit_wait: "wait for a permit",
  limiter_wait: "wait for the rate limiter",
  call: "call",
  backoff: "backoff before a retry"
}

/**
 * Who refused, as a message starts: the provider (and its policy, when shared), or the policy
 * alone (`provider` undefined).
 *
 * @since 0.1.0
 * @category messages
 */
export const owner = (provider: string | undefined, policy: string, name: string): string =>
  provider === undefined
    ? `${policy} "${name}"`
    : name === provider
    ? `provider "${provider}"`
    : `provider "${provider}" (${policy} "${name}")`

/**
 * `provider "geo": the call took longer than its 2s attempt budget (attempt 1 of 3)`.
 *
 * @since 0.1.0
 * @category messages
 */
export const callTimeout = (f: {
  readonly provider: string
  readonly timeoutMillis: number
  readonly attempt: number
  readonly maxAttempts: number
}): string =>
  `provider "${f.provider}": the call took longer than its ${
    formatMillis(f.timeoutMillis)
  } attempt budget (attempt ${f.attempt} of ${f.maxAttempts})`

/**
 * The total budget passed, naming the phase it passed in; during a backoff, the attempt that
 * would have come and the time spent.
 *
 * @since 0.1.0
 * @category messages
 */
export const totalTimeout = (f: {
  readonly provider: string
  readonly timeoutMillis: number
  readonly elapsedMillis: number
  readonly attempts: number
  readonly phase: Phase
}): string => {
  const budget = formatMillis(f.timeoutMillis)
  if (f.phase === "backoff") {
    return `provider "${f.provider}": the backoff before attempt ${f.attempts + 1} would pass the ${budget} ` +
      `total budget (${formatMillis(f.elapsedMillis)} spent over ${plural(f.attempts, "attempt")})`
  }
  return `provider "${f.provider}": the operation passed its ${budget} total budget during the ${
    phaseText[f.phase]
  } of attempt ${f.attempts}`
}

/**
 * An open circuit (until a probe in `retryAfterMillis`), or a half-open one with its probe in flight.
 *
 * @since 0.1.0
 * @category messages
 */
export const circuitOpen = (f: {
  readonly breaker: string
  readonly provider: string | undefined
  readonly state: "open" | "half-open"
  readonly failures: number
  readonly openedForMillis: number
  readonly retryAfterMillis: number
}): string => {
  const opened = `the circuit opened ${formatMillis(f.openedForMillis)} ago after ${plural(f.failures, "failure")}`
  const who = owner(f.provider, "circuit breaker", f.breaker)
  return f.state === "open"
    ? `${who}: ${opened}; calls fail at once until a probe in ${formatMillis(f.retryAfterMillis)}`
    : `${who}: ${opened}; it is half-open and its single probe is in flight`
}

/**
 * A retry refused by the budget: the window's figures, and the tag of the error it would have
 * retried when that has one.
 *
 * @since 0.1.0
 * @category messages
 */
export const retryBudgetExhausted = (f: {
  readonly budget: string
  readonly provider: string | undefined
  readonly attempt: number
  readonly retries: number
  readonly firstAttempts: number
  readonly allowed: number
  readonly windowMillis: number
  readonly lastError: unknown
}): string => {
  const error = f.lastError
  const last = (typeof error === "object" || typeof error === "function") && error !== null && "_tag" in error
    ? ` (the last error: ${String(error._tag)}${
      "status" in error && typeof error.status === "number" ? ` ${error.status}` : ""
    })`
    : ""
  return `${owner(f.provider, "retry budget", f.budget)}: attempt ${f.attempt} refused by the retry budget: ${
    plural(f.retries, "retry", "retries")
  } against ${plural(f.firstAttempts, "first attempt")} in the last ${
    formatMillis(f.windowMillis)
  } (${f.allowed} allowed)${last}`
}

/**
 * A provider shutting down: a new call refused, or a running one interrupted after the grace period.
 *
 * @since 0.1.0
 * @category messages
 */
export const providerClosed = (f: {
  readonly provider: string
  readonly reason: "closing" | "grace-period-elapsed"
  readonly gracePeriodMillis: number
}): string =>
  f.reason === "closing"
    ? `provider "${f.provider}" is shutting down and admits no new calls`
    : `provider "${f.provider}" shut down: the call was interrupted after the ${
      formatMillis(f.gracePeriodMillis)
    } grace period`
