/** @internal */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import type * as RateLimiter from "../RateLimiter.js"

/** @internal */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/rate-limiter/RateLimiterError")

/** @internal */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * Milliseconds as a short human figure: `340ms`, `3.4s`, `2min`, `1d`.
 *
 * @internal
 */
export const formatMillis = (millis: number): string => {
  if (!Number.isFinite(millis)) return "forever"
  const units: ReadonlyArray<readonly [number, string]> = [[86_400_000, "d"], [3_600_000, "h"], [60_000, "min"]]
  for (const [size, unit] of units) {
    if (millis >= size && millis % size === 0) return `${millis / size}${unit}`
  }
  if (millis >= 1000) return `${Number((millis / 1000).toFixed(3))}s`
  return `${Number(millis.toFixed(3))}ms`
}

/**
 * `10 per 1s (burst 1)`, `1000 per 1d (fixed window)`.
 *
 * @internal
 */
export const describeLimit = (limit: RateLimiter.ResolvedLimit): string => {
  const window = formatMillis(Duration.toMillis(limit.window))
  const shape = limit.algorithm === "gcra" ? `burst ${limit.burst}` : limit.algorithm.replace("-", " ")
  return `${limit.limit} per ${window} (${shape})`
}

/** @internal */
export class RateLimitExceeded extends Data.TaggedError("RateLimitExceeded")<{
  readonly name: string
  readonly reason: "quota" | "paused"
  readonly retryAfter: Duration.Duration
  readonly limit: RateLimiter.ResolvedLimit | undefined
  readonly cost: number
  readonly maxWait: Duration.Duration
}> {
  /** @internal */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId

  override get message(): string {
    const maxWait = Duration.toMillis(this.maxWait)
    const within = maxWait === 0 ? "a start now" : `a start within ${formatMillis(maxWait)}`
    const cost = this.cost === 1 ? "" : ` for cost ${this.cost}`
    const cause = this.limit === undefined ? "while paused" : `under ${describeLimit(this.limit)}`
    return `rate limiter "${this.name}": ${within}${cost} is impossible ${cause}; retry after ${
      formatMillis(Duration.toMillis(this.retryAfter))
    }`
  }
}

/** @internal */
export class RateLimiterStoreError extends Data.TaggedError("RateLimiterStoreError")<{
  readonly message: string
  readonly cause?: unknown
}> {
  /** @internal */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/** @internal */
export const isRateLimiterError = (u: unknown): u is RateLimitExceeded | RateLimiterStoreError =>
  Predicate.hasProperty(u, ErrorTypeId)
