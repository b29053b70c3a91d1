/**
 * What a take asks its store (the request for its options, built once for the default take) and
 * the error it fails with when the store, or the pacer, refuses it.
 *
 * @internal
 */
import * as core from "@sluice/core/Requests"
import type { NonEmptyReadonlyArray } from "effect/Array"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as RateLimiter from "../RateLimiter.js"
import { type CostExceedsCapacity, RateLimitExceeded } from "../RateLimiterError.js"
import type * as RateLimiterStore from "../RateLimiterStore.js"
import type { Series } from "./metrics.js"
import { decodeMaxWait } from "./settings.js"
import * as usage from "./usage.js"

/** @internal */
export const make = (shape: usage.Shape, maxWaitMillis: number) => {
  // The request of a take with neither cost nor maxWait, built once: stores never keep or change it.
  const defaultRequest = core.unitRequest(shape.key, shape.specs, maxWaitMillis)
  const unitCosts = defaultRequest.costs

  /** The store's request for a take's options, or why they cannot be charged. */
  const requestFor = (
    options: RateLimiter.TakeOptions | undefined
  ): Result.Result<RateLimiterStore.ReserveRequest, string | CostExceedsCapacity> => {
    if (options === undefined || (options.cost === undefined && options.maxWait === undefined)) {
      return Result.succeed(defaultRequest)
    }
    const costs = options.cost === undefined || options.cost === 1
      ? Result.succeed(unitCosts)
      : usage.takeCosts(shape, options.cost)
    if (Result.isFailure(costs)) return Result.fail(costs.failure)
    const charged = core.charged(defaultRequest, costs.success)
    if (options.maxWait === undefined) return Result.succeed(charged)
    return Result.map(
      decodeMaxWait(options.maxWait),
      (maxWait) => ({ ...charged, maxWaitMillis: Duration.toMillis(maxWait) })
    )
  }

  return { defaultRequest, requestFor }
}

/** @internal */
export const refusal = (
  name: string,
  limits: NonEmptyReadonlyArray<RateLimiter.ResolvedLimit>,
  series: Series
) =>
(
  refusal: RateLimiterStore.Refused,
  request: RateLimiterStore.ReserveRequest
): Effect.Effect<never, RateLimitExceeded> => {
  const read = core.refusalOf(refusal, request)
  const paused = read._tag === "Paused"
  ;(paused ? series.paused : series.quota).updateUnsafe(1, series.context)
  return Effect.fail(
    new RateLimitExceeded({
      limiter: name,
      reason: paused ? "paused" : "quota",
      retryAfter: Duration.millis(read.retryAfterMillis),
      limit: paused ? undefined : limits[read.index],
      cost: read.cost,
      maxWait: Duration.millis(read.maxWaitMillis)
    })
  )
}
