/** @internal */
import * as Core from "@sluice/core/Verdict"
import type { RateLimiter } from "@sluice/rate-limiter"
import * as Duration from "effect/Duration"
import type * as Api from "../ProviderStats.js"

/**
 * Per second, the rate of the limit with the shortest window: the one a batch meets first.
 *
 * @internal
 */
export const shortestWindowRate = (limiter: RateLimiter.RateLimiter): number =>
  Core.shortestWindowRate(
    limiter.limits.map((limit) => ({ limit: limit.limit, windowMillis: Duration.toMillis(limit.window) }))
  )

/** @internal */
export const verdict = (input: Api.VerdictInput): Api.Verdict =>
  Core.verdict({
    ...input,
    dimensions: input.dimensions?.map((load) => ({
      dimension: load.dimension,
      limit: load.limit,
      windowMillis: Duration.toMillis(load.window),
      ratePerSecond: load.ratePerSecond,
      spanMillis: load.spanMillis
    }))
  })
