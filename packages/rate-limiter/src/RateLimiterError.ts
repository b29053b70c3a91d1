/**
 * The errors of a rate limiter and of its store: a take refused because its start is beyond the
 * wait budget, a cost no limit of its dimension can ever hold, or a store that failed to decide.
 *
 * The classes are declared here, in a public module, so that the declarations a library emits
 * when it narrows with `instanceof` point at a path the package exports.
 *
 * @since 0.2.0
 */
import * as LimiterMessages from "@sluice/core/LimiterMessages"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import { limitFields } from "./internal/errors.js"
import type * as RateLimiter from "./RateLimiter.js"

/**
 * @since 0.2.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/rate-limiter/RateLimiterError")

/**
 * @since 0.2.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * The start would come later than the wait budget allows; nothing was consumed. `retryAfter` is
 * how long to wait before a take with the same budget can succeed; `limit` is the limit that set
 * the start, `undefined` when the pause did (`reason: "paused"`).
 *
 * @since 0.2.0
 * @category errors
 */
export class RateLimitExceeded extends Data.TaggedError("RateLimitExceeded")<{
  /** The name of the limiter that refused (not `name`, which is `Error`'s: the tag). */
  readonly limiter: string
  readonly reason: "quota" | "paused"
  readonly retryAfter: Duration.Duration
  readonly limit: RateLimiter.ResolvedLimit | undefined
  /** The cost on the limit that set the start (on the largest charged limit when paused). */
  readonly cost: number
  readonly maxWait: Duration.Duration
}> {
  /**
   * @since 0.2.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /**
   * @since 0.2.0
   */
  override get message(): string {
    return LimiterMessages.exceeded({
      limiter: this.limiter,
      maxWaitMillis: Duration.toMillis(this.maxWait),
      retryAfterMillis: Duration.toMillis(this.retryAfter),
      cost: this.cost,
      limit: this.limit === undefined ? undefined : limitFields(this.limit)
    })
  }
}

/**
 * A take's cost on one dimension is more than a limit of that dimension can ever hold (`burst`
 * for GCRA, `limit` for the window algorithms): it would wait forever, so it fails at once and
 * consumes nothing. `capacity` is that limit's capacity.
 *
 * @since 0.3.0
 * @category errors
 */
export class CostExceedsCapacity extends Data.TaggedError("CostExceedsCapacity")<{
  /** The name of the limiter that refused (not `name`, which is `Error`'s: the tag). */
  readonly limiter: string
  readonly dimension: string
  readonly cost: number
  readonly capacity: number
  /** The limit that cannot hold it. */
  readonly limit: RateLimiter.ResolvedLimit
}> {
  /**
   * @since 0.3.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /**
   * @since 0.3.0
   */
  override get message(): string {
    return LimiterMessages.costExceedsCapacity({
      limiter: this.limiter,
      dimension: this.dimension,
      cost: this.cost,
      capacity: this.capacity,
      limit: limitFields(this.limit)
    })
  }
}

/**
 * A store failed to decide (for example Redis is unreachable). The memory store never fails.
 *
 * @since 0.2.0
 * @category errors
 */
export class RateLimiterStoreError extends Data.TaggedError("RateLimiterStoreError")<{
  readonly message: string
  readonly cause?: unknown
}> {
  /**
   * @since 0.2.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * @since 0.2.0
 * @category errors
 */
export type RateLimiterError = RateLimitExceeded | CostExceedsCapacity | RateLimiterStoreError

/**
 * @since 0.2.0
 * @category guards
 */
export const isRateLimiterError = (u: unknown): u is RateLimiterError => Predicate.hasProperty(u, ErrorTypeId)
