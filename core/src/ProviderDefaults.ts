/**
 * The defaults of a provider's circuit breaker and retry budget, and the one rule between their
 * options that no single field's schema checks (a ratio's `minimumCalls` within its `window`):
 * both Effect lines decode the fields with their own schemas, then settle them here.
 *
 * @since 0.4.0
 */
import type { BreakerSettings } from "./BreakerState.js"
import type { RetryBudgetSettings } from "./RetryBudgetState.js"

/**
 * A breaker's options, each field already decoded (durations in milliseconds).
 *
 * @since 0.4.0
 * @category models
 */
export interface BreakerInput {
  readonly consecutiveFailures?: number | undefined
  readonly failureRatio?: {
    readonly ratio?: number | undefined
    readonly window?: number | undefined
    readonly minimumCalls?: number | undefined
  } | undefined
  readonly openForMillis?: number | undefined
}

/**
 * The settings, or the sentence of the rule they break (`prefix` names where the options sit:
 * `"circuitBreaker."` in a provider's, `""` for a breaker of its own).
 *
 * @since 0.4.0
 * @category models
 */
export type BreakerOutcome =
  | { readonly _tag: "Settings"; readonly settings: BreakerSettings }
  | { readonly _tag: "Invalid"; readonly message: string }

/**
 * Defaults: 5 consecutive failures when no ratio is given; a ratio of 0.5 over a window of 1,
 * counted once the window is full; open for 30 s.
 *
 * @since 0.4.0
 * @category constructors
 */
export const breakerSettings = (input: BreakerInput, prefix: string): BreakerOutcome => {
  const ratio = input.failureRatio
  const window = ratio === undefined ? 0 : ratio.window ?? 1
  const settings: BreakerSettings = {
    consecutiveFailures: input.consecutiveFailures ?? (ratio === undefined ? 5 : undefined),
    ratio: ratio === undefined ? undefined : ratio.ratio ?? 0.5,
    window,
    minimumCalls: ratio === undefined ? 0 : ratio.minimumCalls ?? window,
    openForMillis: input.openForMillis ?? 30_000
  }
  if (ratio !== undefined && settings.minimumCalls > window) {
    return {
      _tag: "Invalid",
      message: `${prefix}failureRatio.minimumCalls must be ≤ window (${window}), got ${settings.minimumCalls}`
    }
  }
  return { _tag: "Settings", settings }
}

/**
 * Defaults: a ratio of 0.1 retries per first attempt, 3 retries always allowed, a 10 s window.
 *
 * @since 0.4.0
 * @category constructors
 */
export const budgetSettings = (input: {
  readonly ratio?: number | undefined
  readonly minRetries?: number | undefined
  readonly windowMillis?: number | undefined
}): RetryBudgetSettings => ({
  ratio: input.ratio ?? 0.1,
  minRetries: input.minRetries ?? 3,
  windowMillis: input.windowMillis ?? 10_000
})
