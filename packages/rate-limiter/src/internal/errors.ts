/** @internal */
import type * as LimiterMessages from "@sluice/core/LimiterMessages"
import * as Duration from "effect/Duration"
import type * as RateLimiter from "../RateLimiter.js"

/**
 * A resolved limit as the core's messages read it, its window in milliseconds.
 *
 * @internal
 */
export const limitFields = (limit: RateLimiter.ResolvedLimit): LimiterMessages.LimitFields => ({
  dimension: limit.dimension,
  limit: limit.limit,
  windowMillis: Duration.toMillis(limit.window),
  algorithm: limit.algorithm,
  burst: limit.burst
})
