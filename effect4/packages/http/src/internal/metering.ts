import * as HttpMessages from "@sluice/core/HttpMessages"
import type * as Provider from "@sluice/provider/Provider"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpClientError from "effect/http/HttpClientError"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Api from "../ProviderHttpClient.js"
import * as RateLimitHeaders from "../RateLimitHeaders.js"

/** What one call's attempt reported of its usage; read (and cleared) when the attempt settles. */
export interface Slot {
  usage: Provider.Cost | undefined
}

/** True for a failure that happened before the request left: nothing for the upstream to count. */
const neverSent = (error: unknown): boolean => {
  if (!HttpClientError.isHttpClientError(error)) return false
  const reason = error.reason
  // the core names reasons as the Effect 3 line did: "Transport", "InvalidUrl", "Encode"
  const name = reason._tag.endsWith("Error") ? reason._tag.slice(0, -5) : reason._tag
  return HttpMessages.neverSent(name, Predicate.hasProperty(reason, "cause") ? reason.cause : undefined)
}

const { junkCost, metering: say } = HttpMessages

/**
 * The per-provider usage options of a client: the estimate, the usage read from responses and
 * settled inside the permit, and what the rate-limit headers say, given to the limiter.
 *
 * @internal
 */
export const make = (provider: Provider.Provider<unknown>, options: Api.Options) => {
  const name = provider.name
  const limiter = provider.rateLimiter
  const usage = options.usage
  const estimate = options.estimate
  const profile = options.rateLimitHeaders
  const dimensions = limiter === undefined ? undefined : new Set(limiter.dimensions)

  /** Headers → observations → `tighten`, for the dimensions the limiter has; problems logged. */
  const learn = profile === undefined || limiter === undefined
    ? undefined
    : (response: HttpClientResponse.HttpClientResponse): Effect.Effect<void> =>
      Effect.flatMap(RateLimitHeaders.observe(profile, response.headers), (reading) => {
        const known = new Set(limiter.dimensions)
        const observations = reading.observations.filter((o) => known.has(o.dimension)).map((o) => ({
          dimension: o.dimension,
          limit: o.limit,
          remaining: o.remaining,
          resetAfter: o.resetAfterMillis === undefined ? undefined : Duration.millis(o.resetAfterMillis)
        }))
        const problems = Effect.forEach(
          reading.problems,
          (problem) => Effect.logWarning(say.ignoredHeader(name, problem)),
          { discard: true }
        )
        if (observations.length === 0) return problems
        return Effect.andThen(
          problems,
          Effect.catch(
            limiter.tighten(observations),
            (error) => Effect.logWarning(say.tightenFailed(name, error.message))
          )
        )
      })

  /**
   * Reads the usage a response reports into the call's slot (nothing without `usage`). A `usage`
   * that throws, reads nothing or returns what no limiter can charge is logged with the provider
   * and the value, and the estimate stands: the answer is delivered either way.
   */
  const report = (slot: Slot, response: HttpClientResponse.HttpClientResponse, body: unknown): Effect.Effect<void> =>
    usage === undefined ? Effect.void : Effect.suspend(() => {
      let read: unknown
      try {
        read = usage({ status: response.status, headers: response.headers, body })
      } catch (error) {
        return Effect.logWarning(say.usageThrew(name, error))
      }
      if (read === undefined) {
        return Effect.logWarning(say.usageReadNothing(name, response.status, body))
      }
      const junk = junkCost(read, 0, dimensions)
      if (junk !== undefined) {
        return Effect.logWarning(say.usageJunk(name, read, junk))
      }
      slot.usage = read as Provider.Cost
      return Effect.void
    })

  /** How an attempt's reservation is settled, from its ending and what it reported. */
  const settlement = (slot: Slot) => (exit: Exit.Exit<unknown, unknown>): Provider.Settlement => {
    const reported = slot.usage
    slot.usage = undefined // the next attempt reports its own
    if (Exit.isSuccess(exit)) return reported
    const failure = Cause.findErrorOption(exit.cause)
    return Option.isSome(failure) && neverSent(failure.value) ? "release" : reported
  }

  /**
   * The call options of one request with its cost and, with `usage`, the settle of its attempts. An
   * `estimate` that throws or returns junk is logged with the provider and the value; the
   * provider's cost is charged instead.
   */
  const prepare = (
    request: HttpClientRequest.HttpClientRequest,
    base: Provider.CallOptions,
    slot: Slot
  ): Effect.Effect<Provider.CallOptions> =>
    Effect.suspend(() => {
      const withUsage = (options: Provider.CallOptions): Provider.CallOptions =>
        usage === undefined ? options : { ...options, usage: settlement(slot) }
      if (base.cost !== undefined || estimate === undefined) return Effect.succeed(withUsage(base))
      let cost: unknown
      try {
        cost = estimate(request)
      } catch (error) {
        return Effect.as(
          Effect.logWarning(say.estimateThrew(name, error)),
          withUsage(base)
        )
      }
      const junk = junkCost(cost, 1, dimensions)
      if (junk !== undefined) {
        return Effect.as(
          Effect.logWarning(say.estimateJunk(name, cost, junk)),
          withUsage(base)
        )
      }
      return Effect.succeed(withUsage({ ...base, cost: cost as Provider.Cost }))
    })

  return {
    /** Whether any per-call work is needed at all: none keeps the client's calls as they were. */
    metered: usage !== undefined || estimate !== undefined,
    learn,
    report,
    prepare
  } as const
}
