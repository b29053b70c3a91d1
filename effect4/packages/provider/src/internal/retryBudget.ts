/** @internal */
import type { RetryBudgetState } from "@sluice/core/RetryBudgetState"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ProviderError from "../ProviderError.js"
import type { Owner } from "./format.js"

/** @internal */
export { type RetryBudgetSettings, RetryBudgetState as RetryBudget } from "@sluice/core/RetryBudgetState"

/**
 * The refusal of the retry numbered `attempt` (2 is the first retry) by `budget` at `now`, naming
 * `name` and carrying the error it would have retried; `undefined` when the window affords it.
 *
 * @internal
 */
export const refusal = (
  budget: RetryBudgetState,
  owner: Owner,
  attempt: number,
  lastError: unknown,
  now: number
): ProviderError.RetryBudgetExhausted | undefined => {
  const window = budget.exhausted(now)
  if (window === undefined) return undefined
  return new ProviderError.RetryBudgetExhausted({
    budget: owner.name,
    provider: owner.provider,
    attempt,
    retries: window.retries,
    firstAttempts: window.firsts,
    allowed: window.allowed,
    window: Duration.millis(budget.settings.windowMillis),
    lastError
  })
}

/**
 * The retry numbered `attempt` asks `budget`: spent and recorded, or refused.
 *
 * @internal
 */
export const spend = (
  budget: RetryBudgetState,
  owner: Owner,
  attempt: number,
  lastError: unknown
): Effect.Effect<void, ProviderError.RetryBudgetExhausted> =>
  Effect.clockWith((clock) => {
    const now = clock.currentTimeMillisUnsafe()
    const refused = refusal(budget, owner, attempt, lastError, now)
    if (refused !== undefined) return Effect.fail(refused)
    budget.recordRetry(now)
    return Effect.void
  })

/**
 * A first attempt, counted in `budget`'s window.
 *
 * @internal
 */
export const first = (budget: RetryBudgetState): Effect.Effect<void> =>
  Effect.clockWith((clock) => Effect.sync(() => budget.recordFirst(clock.currentTimeMillisUnsafe())))
