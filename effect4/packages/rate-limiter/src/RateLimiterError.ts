/**
 * The errors of a rate limiter and of its store: a take refused because its start is beyond the
 * wait budget, a cost no limit of its dimension can ever hold, or a store that failed to decide.
 *
 * The classes are declared here, in a public module, so that the declarations a library emits
 * when it narrows with `instanceof` point at a path the package exports.
 *
 * @since 2.0.0
 */
import * as LimiterMessages from "@sluice/core/LimiterMessages"
import * as Duration from "effect/Duration"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import { limitFields } from "./internal/errors.js"

/**
 * @since 2.0.0
 * @category type ids
 */
export const ErrorTypeId: unique symbol = Symbol.for("@sluice/rate-limiter/RateLimiterError")

/**
 * @since 2.0.0
 * @category type ids
 */
export type ErrorTypeId = typeof ErrorTypeId

/**
 * A limit with its defaults filled in (`RateLimiter.ResolvedLimit`), as the errors carry it.
 *
 * @since 2.0.0
 * @category schemas
 */
export const ResolvedLimit = Schema.Struct({
  dimension: Schema.String,
  limit: Schema.Number,
  window: Schema.Duration,
  algorithm: Schema.Literals(["gcra", "fixed-window", "sliding-window"]),
  burst: Schema.Number
})

/**
 * The start would come later than the wait budget allows; nothing was consumed. `retryAfter` is
 * how long to wait before a take with the same budget can succeed; `limit` is the limit that set
 * the start, `undefined` when the pause did (`reason: "paused"`).
 *
 * @since 2.0.0
 * @category errors
 */
export class RateLimitExceeded extends Schema.TaggedError<RateLimitExceeded>()("RateLimitExceeded", {
  /** The name of the limiter that refused (not `name`, which is `Error`'s: the tag). */
  limiter: Schema.String,
  reason: Schema.Literals(["quota", "paused"]),
  retryAfter: Schema.Duration,
  limit: Schema.UndefinedOr(ResolvedLimit),
  /** The cost on the limit that set the start (on the largest charged limit when paused). */
  cost: Schema.Number,
  maxWait: Schema.Duration
}) {
  /**
   * @since 2.0.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /**
   * @since 2.0.0
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
 * @since 2.0.0
 * @category errors
 */
export class CostExceedsCapacity extends Schema.TaggedError<CostExceedsCapacity>()("CostExceedsCapacity", {
  /** The name of the limiter that refused (not `name`, which is `Error`'s: the tag). */
  limiter: Schema.String,
  dimension: Schema.String,
  cost: Schema.Number,
  capacity: Schema.Number,
  /** The limit that cannot hold it. */
  limit: ResolvedLimit
}) {
  /**
   * @since 2.0.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
  /**
   * @since 2.0.0
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
 * @since 2.0.0
 * @category errors
 */
export class RateLimiterStoreError extends Schema.TaggedError<RateLimiterStoreError>()("RateLimiterStoreError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Unknown)
}) {
  /**
   * @since 2.0.0
   */
  readonly [ErrorTypeId]: ErrorTypeId = ErrorTypeId
}

/**
 * @since 2.0.0
 * @category errors
 */
export type RateLimiterError = RateLimitExceeded | CostExceedsCapacity | RateLimiterStoreError

/**
 * @since 2.0.0
 * @category guards
 */
export const isRateLimiterError = (u: unknown): u is RateLimiterError => Predicate.hasProperty(u, ErrorTypeId)
