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
 * Header names are matched in any case. An instant (Anthropic's reset, an epoch) becomes a duration
 * once, on the receiver's clock at receipt: from then on only the duration travels, so no other
 * process compares its clock with the server's. A value that cannot be read is never thrown: it is
 * left out and returned as a `Problem` naming the header and the value, for the caller to log.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as internal from "./internal/rateLimitHeaders.js"

/**
 * What a server said about one dimension. Fields it did not send are absent.
 *
 * @since 0.2.0
 * @category models
 */
export interface Observation {
  /** The dimension, as the profile names it (`requests`, `tokens`, an IETF policy name…). */
  readonly dimension: string
  /** The quota of the window. */
  readonly limit?: number
  /** The units left in the current window. */
  readonly remaining?: number
  /** How long until the quota is back, from receipt, in milliseconds (rounded up). */
  readonly resetAfterMillis?: number
}

/**
 * A header value that could not be read, and why; the observation it belonged to lacks that field.
 *
 * @since 0.2.0
 * @category models
 */
export interface Problem {
  readonly header: string
  readonly value: string
  readonly reason: string
}

/**
 * @since 0.2.0
 * @category models
 */
export interface Reading {
  readonly observations: ReadonlyArray<Observation>
  readonly problems: ReadonlyArray<Problem>
}

/**
 * Response headers as a record: `@effect/platform`'s `Headers`, Node's `IncomingHttpHeaders`, or a
 * plain object; names in any case.
 *
 * @since 0.2.0
 * @category models
 */
export type HeaderInput = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * Reads a response's headers at `nowMillis` (the receiver's clock, epoch milliseconds).
 *
 * @since 0.2.0
 * @category models
 */
export interface Profile {
  readonly name: string
  readonly read: (headers: HeaderInput, nowMillis: number) => Reading
}

/**
 * OpenAI: `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`, dimensions `requests` and
 * `tokens`; resets are Go durations (`6m0s` is six minutes, not six seconds).
 *
 * @since 0.2.0
 * @category profiles
 */
export const openai: Profile = internal.openai

/**
 * Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`,
 * dimensions `requests`, `tokens`, `input-tokens`, `output-tokens`; resets are RFC 3339 instants,
 * turned into durations against the receiver's clock (an instant already past is 0).
 *
 * @since 0.2.0
 * @category profiles
 */
export const anthropic: Profile = internal.anthropic

/**
 * The IETF fields (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "permin";q=50;w=60`
 * gives a policy's quota, `RateLimit: "permin";r=12;t=30` its remaining units and the seconds until
 * more; each policy name is a dimension (map them to yours with `rename`). A field that is not a
 * valid structured field list is ignored as a whole, as the draft asks.
 *
 * @since 0.2.0
 * @category profiles
 */
export const ietf: Profile = internal.ietf

/**
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset`, the dimension `default`. The
 * reset is delta seconds below 10^9, epoch seconds from 10^9 (no window lasts 31 years, no epoch
 * of this century is below it), epoch milliseconds from 10^12.
 *
 * @since 0.2.0
 * @category profiles
 */
export const generic: Profile = internal.generic

/**
 * The profile with its dimensions renamed to the limiter's, e.g.
 * `rename(anthropic, { "input-tokens": "input", "output-tokens": "output" })`; names not mapped stay.
 *
 * @since 0.2.0
 * @category combinators
 */
export const rename: (profile: Profile, names: Readonly<Record<string, string>>) => Profile = internal.rename

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
 * @since 0.2.0
 * @category constructors
 */
export const observe = (profile: Profile, headers: HeaderInput): Effect.Effect<Reading> =>
  Effect.map(Clock.currentTimeMillis, (now) => profile.read(headers, now))
