/**
 * Header profiles: the limits a server reports in its response headers, read as observations per
 * dimension (`{ dimension, limit?, remaining?, resetAfterMillis? }`), for a limiter to tighten on.
 *
 * | profile | headers | reset |
 * | --- | --- | --- |
 * | `openai` | `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` | Go durations: `1s`, `6m0s`, `20ms` |
 * | `anthropic` | `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}` | RFC 3339 instants |
 * | `ietf` | `RateLimit-Policy` (`q`) and `RateLimit` (`r`, `t`) structured fields, one dimension per policy name | seconds |
 * | `generic` | `X-RateLimit-Limit/Remaining/Reset`, the dimension `default` | seconds, or epoch seconds/milliseconds recognised by size |
 *
 * A reset that comes with nothing remaining (the one a limiter obeys: no start on that dimension
 * until it) is bounded, by one hour unless `withMaxReset` says otherwise (as `Retry-After` is by
 * five minutes): one beyond is read as the bound and reported as a `Problem` naming the header and
 * the value, so that `x-ratelimit-reset-tokens: 87600h` cannot hold a dimension for ten years
 * across the fleet (a server that still has nothing left then says so again). A reset with units
 * left is the server's figure, unchanged.
 *
 * Header names are matched in any case. An instant (Anthropic's reset, an epoch) becomes a duration
 * once, on the receiver's clock at receipt: from then on only the duration travels, so no other
 * process compares its clock with the server's. A value that cannot be read is never thrown: it is
 * left out and returned as a `Problem` naming the header and the value, for the caller to log.
 *
 * @since 2.0.0
 */
import * as internal from "@sluice/core/RateLimitHeaders"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/**
 * What a server said about one dimension (`dimension`, as the profile names it: `requests`,
 * `tokens`, an IETF policy name…): the window's quota (`limit`), the units left (`remaining`), how
 * long until the quota is back, from receipt, in milliseconds rounded up (`resetAfterMillis`).
 * Fields it did not send are absent.
 *
 * @since 2.0.0
 * @category models
 */
export interface Observation extends internal.Observation {}

/**
 * A header value that could not be read, and why; the observation it belonged to lacks that field.
 *
 * @since 2.0.0
 * @category models
 */
export interface Problem extends internal.Problem {}

/**
 * @since 2.0.0
 * @category models
 */
export interface Reading extends internal.Reading {}

/**
 * Response headers as a record: Effect's `Headers`, Node's `IncomingHttpHeaders`, or a
 * plain object; names in any case.
 *
 * @since 2.0.0
 * @category models
 */
export type HeaderInput = internal.HeaderInput

/**
 * Reads a response's headers at `nowMillis` (the receiver's clock, epoch milliseconds).
 *
 * @since 2.0.0
 * @category models
 */
export interface Profile extends internal.Profile {}

/**
 * OpenAI: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, dimensions `requests` and
 * `tokens`; resets are Go durations (`6m0s` is six minutes, not six seconds).
 *
 * @since 2.0.0
 * @category profiles
 */
export const openai: Profile = internal.openai

/**
 * Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`,
 * dimensions `requests`, `tokens`, `input-tokens`, `output-tokens`; resets are RFC 3339 instants,
 * turned into durations against the receiver's clock (an instant already past is 0).
 *
 * @since 2.0.0
 * @category profiles
 */
export const anthropic: Profile = internal.anthropic

/**
 * The IETF fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "permin";q=50;w=60`
 * gives a policy's quota, `RateLimit: "permin";r=12;t=30` its remaining units and the seconds until
 * more; each policy name is a dimension (map them to yours with `rename`). A field that is not a
 * valid structured field list is ignored as a whole, as the draft asks.
 *
 * @since 2.0.0
 * @category profiles
 */
export const ietf: Profile = internal.ietf

/**
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`, the dimension `default`. The
 * reset is delta seconds below 10^9, epoch seconds from 10^9 (no window lasts 31 years, no epoch
 * of this century is below it), epoch milliseconds from 10^12.
 *
 * @since 2.0.0
 * @category profiles
 */
export const generic: Profile = internal.generic

/**
 * The profile with its dimensions renamed to the limiter's, e.g.
 * `rename(anthropic, { "input-tokens": "input", "output-tokens": "output" })`; names not mapped stay.
 *
 * @since 2.0.0
 * @category combinators
 */
export const rename: (profile: Profile, names: Readonly<Record<string, string>>) => Profile = internal.rename

/**
 * The longest reset a profile passes on with nothing remaining, unless `withMaxReset` says
 * otherwise: one hour, the longest of the usual per-minute and per-hour quotas (a daily quota's
 * reset is obeyed an hour at a time: the server says so again).
 *
 * @since 2.0.0
 * @category constants
 */
export const defaultMaxReset: Duration.Duration = Duration.millis(internal.DEFAULT_MAX_RESET_MILLIS)

/**
 * The profile with its resets bounded by `maxReset` (a finite duration) instead of one hour: e.g.
 * `withMaxReset(openai, "1 day")` to obey a daily quota's reset whole, `"5 minutes"` to trust the
 * server less. A bound that is not a finite duration ≥ 0 throws an `IllegalArgumentError`
 * naming it.
 *
 * @since 2.0.0
 * @category combinators
 */
export const withMaxReset = (profile: Profile, maxReset: Duration.Input): Profile => {
  const decoded = typeof maxReset === "number" && !(maxReset >= 0)
    ? Option.none()
    : Option.filter(Duration.fromInput(maxReset), Duration.isFinite)
  if (Option.isNone(decoded)) {
    throw new Cause.IllegalArgumentError(
      `RateLimitHeaders.withMaxReset of profile ${
        JSON.stringify(profile.name)
      }: maxReset must be a finite duration ≥ 0, got ${
        typeof maxReset === "number" ? String(maxReset) : JSON.stringify(maxReset)
      }`
    )
  }
  return internal.withMaxReset(profile, Duration.toMillis(decoded.value))
}

/**
 * Reads `headers` with `profile` at the current `Clock` time.
 *
 * @example
 * ```ts
 * import { RateLimitHeaders } from "@sluice/http"
 * import { Effect } from "effect"
 *
 * const reading = RateLimitHeaders.observe(RateLimitHeaders.openai, {
 *   "x-ratelimit-remaining-tokens": "149984",
 *   "x-ratelimit-reset-tokens": "6m0s"
 * })
 * // Effect<{ observations: [{ dimension: "tokens", remaining: 149984, resetAfterMillis: 360000 }], problems: [] }>
 * Effect.runSync(reading)
 * ```
 *
 * @since 2.0.0
 * @category constructors
 */
export const observe = (profile: Profile, headers: HeaderInput): Effect.Effect<Reading> =>
  Effect.map(Clock.currentTimeMillis, (now) => profile.read(headers, now))
