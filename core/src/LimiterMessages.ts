/**
 * The sentences of a rate limiter's errors and option refusals, built from their fields in
 * milliseconds: both Effect lines' `RateLimitExceeded` and `CostExceedsCapacity` take their
 * `message` from here, so that the same refusal prints the same bytes on Effect 3 and Effect 4.
 *
 * @since 0.1.0
 */

/**
 * One limit as its messages name it: the window in milliseconds, so that no Effect `Duration`
 * crosses into the core.
 *
 * @since 0.1.0
 * @category models
 */
export interface LimitFields {
  readonly dimension?: string | undefined
  readonly limit: number
  readonly windowMillis: number
  readonly algorithm: "gcra" | "fixed-window" | "sliding-window"
  readonly burst: number
}

/**
 * The fields of a `RateLimitExceeded` refusal that its sentence names; `limit` is undefined when
 * the pause refused.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExceededFields {
  readonly limiter: string
  readonly maxWaitMillis: number
  readonly retryAfterMillis: number
  readonly cost: number
  readonly limit: LimitFields | undefined
}

/**
 * The fields of a `CostExceedsCapacity` refusal that its sentence names.
 *
 * @since 0.1.0
 * @category models
 */
export interface CapacityFields {
  readonly limiter: string
  readonly dimension: string
  readonly cost: number
  readonly capacity: number
  readonly limit: LimitFields
}

const units: ReadonlyArray<readonly [number, string]> = [[86_400_000, "d"], [3_600_000, "h"], [60_000, "min"]]

/**
 * Milliseconds as a short human figure: `340ms`, `3.4s`, `2min`, `1d`, `forever`. A limiter's
 * windows and waits are whole units more often than not, so a whole unit is written as one.
 *
 * @since 0.1.0
 * @category formatting
 */
export const shortMillis = (millis: number): string => {
  if (!Number.isFinite(millis)) return "forever"
  for (const [size, unit] of units) {
    if (millis >= size && millis % size === 0) return `${millis / size}${unit}`
  }
  if (millis >= 1000) return `${Number((millis / 1000).toFixed(3))}s`
  return `${Number(millis.toFixed(3))}ms`
}

/**
 * `10 per 1s (burst 1)`, `1000 per 1d (fixed window)`; a named dimension first:
 * `tokens: 200000 per 1min (burst 200000)`.
 *
 * @since 0.1.0
 * @category messages
 */
export const describeLimit = (limit: LimitFields): string => {
  const shape = limit.algorithm === "gcra" ? `burst ${limit.burst}` : limit.algorithm.replace("-", " ")
  const dimension = limit.dimension === undefined || limit.dimension === "default" ? "" : `${limit.dimension}: `
  return `${dimension}${limit.limit} per ${shortMillis(limit.windowMillis)} (${shape})`
}

/**
 * `rate limiter "geo": a start within 2s for cost 3 is impossible under 10 per 1s (burst 1);
 * retry after 500ms`; `a start now` for a zero budget, `while paused` when the pause refused.
 *
 * @since 0.1.0
 * @category messages
 */
export const exceeded = (f: ExceededFields): string => {
  const within = f.maxWaitMillis === 0 ? "a start now" : `a start within ${shortMillis(f.maxWaitMillis)}`
  const cost = f.cost === 1 ? "" : ` for cost ${f.cost}`
  const cause = f.limit === undefined ? "while paused" : `under ${describeLimit(f.limit)}`
  return `rate limiter "${f.limiter}": ${within}${cost} is impossible ${cause}; retry after ${
    shortMillis(f.retryAfterMillis)
  }`
}

/**
 * `rate limiter "llm": cost 300000 on dimension "tokens" exceeds what tokens: 200000 per 1min
 * (burst 200000) can ever hold (200000); it would wait forever`.
 *
 * @since 0.1.0
 * @category messages
 */
export const costExceedsCapacity = (f: CapacityFields): string =>
  `rate limiter "${f.limiter}": cost ${f.cost} on dimension "${f.dimension}" exceeds what ${
    describeLimit(f.limit)
  } can ever hold (${f.capacity}); it would wait forever`

/**
 * Options giving both shapes of limits, after the limiter's owner (`rate limiter "geo"`).
 *
 * @since 0.1.0
 * @category messages
 */
export const bothShapes = (who: string): string => `${who}: give either limit and window or limits, not both`

/**
 * Options whose `limits` hold none.
 *
 * @since 0.1.0
 * @category messages
 */
export const noLimits = (who: string): string => `${who}: limits must hold at least one limit`

/**
 * Why a `burst` on a window algorithm is refused; no option's name in it, since Config writes
 * those as keys.
 *
 * @since 0.1.0
 * @category messages
 */
export const burstOnGcraOnly = "applies to gcra only: fixed and sliding windows admit all their starts at once " +
  "(add a gcra rule to space them)"
