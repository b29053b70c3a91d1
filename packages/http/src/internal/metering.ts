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

/** A value for a log line: objects with their fields, `undefined` ones included. */
const show = (u: unknown): string => {
  if (typeof u !== "object" || u === null) return typeof u === "string" ? JSON.stringify(u) : String(u)
  const fields = Object.entries(u).map(([key, value]) => `${key}: ${show(value)}`)
  return `{ ${fields.join(", ")} }`
}

/** What a usage function was given, for the warning that it read nothing. */
const describeBody = (body: unknown): string => {
  if (body === undefined) return "none"
  if (typeof body === "string") return `text of ${body.length} characters`
  if (ArrayBuffer.isView(body)) return `${body.byteLength} bytes`
  return "parsed JSON"
}

/**
 * Why `cost` is no cost a limiter can charge (`undefined` when it is one): a number, or units by
 * dimension, each an integer of at least `min` (0 for a dimension of a record), on the dimensions
 * the limiter has.
 */
const junkCost = (cost: unknown, min: number, dimensions: ReadonlySet<string> | undefined): string | undefined => {
  const unit = (n: unknown, least: number) => typeof n === "number" && Number.isSafeInteger(n) && n >= least
  if (typeof cost === "number") return unit(cost, min) ? undefined : `not an integer ≥ ${min}`
  if (typeof cost !== "object" || cost === null) return "neither a number nor units by dimension"
  const entries = Object.entries(cost)
  if (entries.length === 0) return "no dimension"
  for (const [dimension, n] of entries) {
    if (!unit(n, 0)) return `${dimension} is not an integer ≥ 0`
    if (dimensions !== undefined && !dimensions.has(dimension)) {
      return `the limiter has no dimension ${dimension} (it has ${[...dimensions].join(", ")})`
    }
  }
  return undefined
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
        return Effect.logWarning(`provider "${name}": its usage option threw (${String(error)}); the estimate stands`)
      }
      if (read === undefined) {
        return Effect.logWarning(
          `provider "${name}": its usage option read nothing from a ${response.status} response (body: ${
            describeBody(body)
          }); the estimate stands`
        )
      }
      const junk = junkCost(read, 0, dimensions)
      if (junk !== undefined) {
        return Effect.logWarning(
          `provider "${name}": its usage option returned ${show(read)} (${junk}); the estimate stands`
        )
      }
      slot.usage = read as Provider.Cost
      return Effect.void
    })

  /** How an attempt's reservation is settled, from its ending and what it reported. */
  const settlement = (slot: Slot) => (exit: Exit.Exit<unknown, unknown>): Provider.Settlement => {
    const reported = slot.usage
    slot.usage = undefined // the next attempt reports its own
    if (Exit.isSuccess(exit)) return reported
    const failure = Cause.failureOption(exit.cause)
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
          Effect.logWarning(
            `provider "${name}": its estimate option threw (${String(error)}); charged its default cost`
          ),
          withUsage(base)
        )
      }
      const junk = junkCost(cost, 1, dimensions)
      if (junk !== undefined) {
        return Effect.as(
          Effect.logWarning(
            `provider "${name}": its estimate option returned ${show(cost)} (${junk}); charged its default cost`
          ),
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
