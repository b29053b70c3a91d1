/** @internal */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ProviderError from "../ProviderError.js"
import type { Owner } from "./format.js"

/**
 * How many slices the retry budget's window is cut into: the window slides one slice at a time,
 * so the count is exact to a tenth of the window, and the state is twenty numbers whatever the rate.
 */
const SLICES = 10

/** @internal */
export interface RetryBudgetSettings {
  /** Retries allowed per first attempt in the window (0.1: at most 10 % extra calls). */
  readonly ratio: number
  /** Retries always allowed per window, so that a quiet provider can still retry. */
  readonly minRetries: number
  readonly windowMillis: number
}

/**
 * First attempts and retries over a sliding window; a retry is allowed while the retries in the
 * window stay below `max(minRetries, ratio × first attempts)`.
 *
 * @internal
 */
export class RetryBudget {
  private readonly firsts = new Array<number>(SLICES).fill(0)
  private readonly retries = new Array<number>(SLICES).fill(0)
  private slice = Number.NEGATIVE_INFINITY
  private readonly sliceMillis: number

  constructor(readonly settings: RetryBudgetSettings) {
    this.sliceMillis = settings.windowMillis / SLICES
  }

  private rotate(now: number): number {
    const slice = Math.floor(now / this.sliceMillis)
    if (slice > this.slice) {
      // clear the slices entered since the last call (all of them after a whole window of silence)
      const entered = Math.min(SLICES, slice - this.slice)
      for (let i = 0; i < entered; i++) {
        const at = (slice - i) % SLICES
        this.firsts[at] = 0
        this.retries[at] = 0
      }
      this.slice = slice
    }
    return this.slice % SLICES
  }

  recordFirst(now: number): void {
    this.firsts[this.rotate(now)]++
  }

  recordRetry(now: number): void {
    this.retries[this.rotate(now)]++
  }

  /** The window's counts, and how many retries it allows. */
  check(now: number): { readonly firsts: number; readonly retries: number; readonly allowed: number } {
    this.rotate(now)
    let firsts = 0
    let retries = 0
    for (let i = 0; i < SLICES; i++) {
      firsts += this.firsts[i]
      retries += this.retries[i]
    }
    const allowed = Math.max(this.settings.minRetries, Math.floor(this.settings.ratio * firsts))
    return { firsts, retries, allowed }
  }
}

/**
 * The refusal of the retry numbered `attempt` (2 is the first retry) by `budget` at `now`, naming
 * `name` and carrying the error it would have retried; `undefined` when the window affords it.
 *
 * @internal
 */
export const refusal = (
  budget: RetryBudget,
  owner: Owner,
  attempt: number,
  lastError: unknown,
  now: number
): ProviderError.RetryBudgetExhausted | undefined => {
  const window = budget.check(now)
  if (window.retries < window.allowed) return undefined
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
  budget: RetryBudget,
  owner: Owner,
  attempt: number,
  lastError: unknown
): Effect.Effect<void, ProviderError.RetryBudgetExhausted> =>
  Effect.clockWith((clock) => {
    const now = clock.unsafeCurrentTimeMillis()
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
export const first = (budget: RetryBudget): Effect.Effect<void> =>
  Effect.clockWith((clock) => Effect.sync(() => budget.recordFirst(clock.unsafeCurrentTimeMillis())))
