import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type * as Provider from "@sluice/provider/Provider"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Api from "../ProviderHttpClient.js"
import * as RateLimitHeaders from "../RateLimitHeaders.js"

/** What one call's attempt reported of its usage; read (and cleared) when the attempt settles. */
export interface Slot {
  usage: Provider.Cost | undefined
}

/**
 * Error codes of a connection that never opened: the upstream never saw the request, so its
 * reservation is released. Any other failure may come after the upstream counted it.
 */
const neverConnected = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT"
])

const codeOf = (u: unknown): string | undefined =>
  Predicate.hasProperty(u, "code") && typeof u.code === "string" ? u.code : undefined

/** True for a failure that happened before the request left: nothing for the upstream to count. */
const neverSent = (error: unknown): boolean => {
  if (!Predicate.isTagged(error, "RequestError") || !Predicate.hasProperty(error, "reason")) return false
  if (error.reason === "InvalidUrl" || error.reason === "Encode") return true
  if (error.reason !== "Transport") return false
  const cause = Predicate.hasProperty(error, "cause") ? error.cause : undefined
  const code = codeOf(cause) ?? (Predicate.hasProperty(cause, "cause") ? codeOf(cause.cause) : undefined)
  return code !== undefined && neverConnected.has(code)
}

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
        const problems = Effect.forEach(reading.problems, (problem) =>
          Effect.logWarning(
            `provider "${name}": ignored the rate-limit header ${problem.header}: ${
              JSON.stringify(problem.value)
            } (${problem.reason})`
          ), { discard: true })
        if (observations.length === 0) return problems
        return Effect.zipRight(
          problems,
          Effect.catchAll(
            limiter.tighten(observations),
            (error) => Effect.logWarning(`provider "${name}": could not apply its rate-limit headers: ${error.message}`)
          )
        )
      })

  /** Reads the usage a response reports into the call's slot (nothing without `usage`). */
  const report = (slot: Slot, response: HttpClientResponse.HttpClientResponse, body: unknown): Effect.Effect<void> =>
    usage === undefined ? Effect.void : Effect.suspend(() => {
      try {
        slot.usage = usage({ status: response.status, headers: response.headers, body })
        return Effect.void
      } catch (error) {
        return Effect.logWarning(`provider "${name}": its usage option threw (${String(error)}); the estimate stands`)
      }
    })

  /** How an attempt's reservation is settled, from its ending and what it reported. */
  const settlement = (slot: Slot) => (exit: Exit.Exit<unknown, unknown>): Provider.Settlement => {
    const reported = slot.usage
    slot.usage = undefined // the next attempt reports its own
    if (Exit.isSuccess(exit)) return reported
    const failure = Cause.failureOption(exit.cause)
    return Option.isSome(failure) && neverSent(failure.value) ? "release" : reported
  }

  /** The call options of one request with its cost and, with `usage`, the settle of its attempts. */
  const callOptions = (
    request: HttpClientRequest.HttpClientRequest,
    base: Provider.CallOptions,
    slot: Slot
  ): Provider.CallOptions => {
    const cost = base.cost ?? estimate?.(request)
    const withCost = cost === undefined ? base : { ...base, cost }
    return usage === undefined ? withCost : { ...withCost, usage: settlement(slot) }
  }

  return {
    /** Whether any per-call work is needed at all: none keeps the client's calls as they were. */
    metered: usage !== undefined || estimate !== undefined,
    learn,
    report,
    callOptions
  } as const
}
