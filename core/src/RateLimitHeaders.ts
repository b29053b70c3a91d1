/**
 * Pure: imports nothing from Effect, so that a build for another Effect major reuses it unchanged.
 * Header parsers for the limits a server reports: OpenAI, Anthropic, the IETF RateLimit fields and
 * the de facto X-RateLimit-*. Nothing here throws; a value that cannot be read is left out of the
 * observations and returned as a problem naming the header and the value.
 *
 * @since 0.1.0
 */

import { parseCount, parseGoDuration, parseRfc3339 } from "./internal/rateLimitHeaders/headerValues.js"
import { parseSfList, type SfItem } from "./internal/rateLimitHeaders/structuredFields.js"
import { clampMillis } from "./RetryAfter.js"

/** @since 0.1.0 */
export interface Observation {
  readonly dimension: string
  readonly limit?: number
  readonly remaining?: number
  readonly resetAfterMillis?: number
}

/** @since 0.1.0 */
export interface Problem {
  readonly header: string
  readonly value: string
  readonly reason: string
}

/** @since 0.1.0 */
export interface Reading {
  readonly observations: ReadonlyArray<Observation>
  readonly problems: ReadonlyArray<Problem>
}

/**
 * Header names in any case; a repeated header as an array (joined with ", ", as HTTP combines them).
 *
 * @since 0.1.0
 */
export type HeaderInput = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/**
 * `read` bounds every reset that comes with nothing remaining by `maxResetMillis` (absent:
 * `DEFAULT_MAX_RESET_MILLIS`).
 *
 * @since 0.1.0
 */
export interface Profile {
  readonly name: string
  readonly read: (headers: HeaderInput, nowMillis: number, maxResetMillis?: number) => Reading
}

/**
 * The longest reset with nothing remaining that a profile passes on by default: one hour, the
 * longest of the usual per-minute and per-hour quotas (a daily quota's reset is obeyed an hour at a
 * time: the server says so again). Like `Retry-After`'s bound, a server's word is not obeyed
 * blindly: `x-ratelimit-reset-tokens: 87600h` would hold the dimension for ten years, in every
 * process sharing the limiter.
 *
 * @since 0.1.0
 */
export const DEFAULT_MAX_RESET_MILLIS = 3_600_000

/**
 * A reset with nothing remaining of its dimension, the one case in which a limiter reads it, within
 * [0, `max`]: one beyond is read as `max` and reported, naming the header and the value. With units
 * left it is the server's figure, unchanged.
 */
const bounded = (
  header: string,
  value: string,
  millis: number,
  max: number,
  remaining: number | undefined,
  problems: Array<Problem>
): number => {
  if (remaining !== 0 || millis <= max) return millis
  problems.push({
    header,
    value,
    reason: `a reset ${millis} ms away with nothing remaining is beyond the maximum of ${max} ms: read as ${max} ms`
  })
  return clampMillis(millis, 0, max)
}

/** @since 0.1.0 */
export const lowercased = (headers: HeaderInput): ReadonlyMap<string, string> => {
  const map = new Map<string, string>()
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    const text = typeof value === "string" ? value : value.join(", ")
    const key = name.toLowerCase()
    const previous = map.get(key)
    map.set(key, previous === undefined ? text : `${previous}, ${text}`)
  }
  return map
}

/** Builds an observation without the fields that are undefined (exactOptionalPropertyTypes). */
const observation = (
  dimension: string,
  limit: number | undefined,
  remaining: number | undefined,
  resetAfterMillis: number | undefined
): Observation | undefined => {
  if (limit === undefined && remaining === undefined && resetAfterMillis === undefined) return undefined
  return {
    dimension,
    ...(limit === undefined ? {} : { limit }),
    ...(remaining === undefined ? {} : { remaining }),
    ...(resetAfterMillis === undefined ? {} : { resetAfterMillis })
  }
}

// ---------------------------------------------------------------------------------------------
// Triplet profiles: a limit, a remaining and a reset header per dimension

interface Triplet {
  readonly dimension: string
  readonly limit: string
  readonly remaining: string
  readonly reset: string
}

const tripletProfile = (
  name: string,
  triplets: ReadonlyArray<Triplet>,
  reset: { readonly expected: string; readonly millis: (value: string, nowMillis: number) => number | undefined }
): Profile => ({
  name,
  read: (headers, nowMillis, maxResetMillis = DEFAULT_MAX_RESET_MILLIS) => {
    const map = lowercased(headers)
    const observations: Array<Observation> = []
    const problems: Array<Problem> = []
    const count = (header: string): number | undefined => {
      const value = map.get(header)
      if (value === undefined) return undefined
      const n = parseCount(value)
      if (n === undefined) problems.push({ header, value, reason: "not a non-negative integer" })
      return n
    }
    for (const triplet of triplets) {
      const limit = count(triplet.limit)
      const remaining = count(triplet.remaining)
      const resetValue = map.get(triplet.reset)
      let resetAfterMillis: number | undefined
      if (resetValue !== undefined) {
        const millis = reset.millis(resetValue, nowMillis)
        if (millis === undefined) problems.push({ header: triplet.reset, value: resetValue, reason: reset.expected })
        else resetAfterMillis = bounded(triplet.reset, resetValue, millis, maxResetMillis, remaining, problems)
      }
      const seen = observation(triplet.dimension, limit, remaining, resetAfterMillis)
      if (seen !== undefined) observations.push(seen)
    }
    return { observations, problems }
  }
})

/** @since 0.1.0 */
export const openai: Profile = tripletProfile(
  "openai",
  ["requests", "tokens"].map((dimension) => ({
    dimension,
    limit: `x-ratelimit-limit-${dimension}`,
    remaining: `x-ratelimit-remaining-${dimension}`,
    reset: `x-ratelimit-reset-${dimension}`
  })),
  {
    expected: "not a non-negative Go duration (such as 1s, 6m0s, 20ms)",
    millis: (value) => {
      const millis = parseGoDuration(value)
      // Rounded up: waiting a fraction of a millisecond longer is the safe side
      return millis === undefined || millis < 0 ? undefined : Math.ceil(millis)
    }
  }
)

/** @since 0.1.0 */
export const anthropic: Profile = tripletProfile(
  "anthropic",
  ["requests", "tokens", "input-tokens", "output-tokens"].map((dimension) => ({
    dimension,
    limit: `anthropic-ratelimit-${dimension}-limit`,
    remaining: `anthropic-ratelimit-${dimension}-remaining`,
    reset: `anthropic-ratelimit-${dimension}-reset`
  })),
  {
    expected: "not an RFC 3339 date-time (such as 2025-08-21T12:40:59Z)",
    // The instant becomes a duration here, once, on the receiver's clock: from then on only the
    // duration travels. An instant already past means the quota is already back: 0.
    millis: (value, nowMillis) => {
      const at = parseRfc3339(value)
      return at === undefined ? undefined : Math.max(0, at - nowMillis)
    }
  }
)

/**
 * Epoch seconds from 10^9 (September 2001) on: no window lasts 31 years, and no epoch seconds of
 * this century are below it. Epoch milliseconds from 10^12 (the same instant, in ms) on.
 */
const EPOCH_SECONDS_FROM = 1e9
const EPOCH_MILLIS_FROM = 1e12

/** @since 0.1.0 */
export const genericResetMillis = (value: string, nowMillis: number): number | undefined => {
  const text = value.trim()
  if (!/^\d+(?:\.\d+)?$/.test(text)) return undefined
  const n = Number(text)
  if (!Number.isFinite(n)) return undefined
  if (n >= EPOCH_MILLIS_FROM) return Math.max(0, Math.ceil(n - nowMillis))
  if (n >= EPOCH_SECONDS_FROM) return Math.max(0, Math.ceil(n * 1000 - nowMillis))
  return Math.ceil(n * 1000)
}

/** @since 0.1.0 */
export const generic: Profile = tripletProfile(
  "generic",
  [{
    dimension: "default",
    limit: "x-ratelimit-limit",
    remaining: "x-ratelimit-remaining",
    reset: "x-ratelimit-reset"
  }],
  { expected: "not seconds, epoch seconds or epoch milliseconds", millis: genericResetMillis }
)

// ---------------------------------------------------------------------------------------------
// The IETF fields: items named by policy, with parameters

const policyName = (item: SfItem): string | undefined =>
  item.value.type === "string" || item.value.type === "token" ? item.value.value : undefined

/** A parameter that must be a non-negative integer, when present. */
const integerParam = (
  item: SfItem,
  key: string,
  header: string,
  value: string,
  problems: Array<Problem>
): number | undefined | "invalid" => {
  const param = item.params.get(key)
  if (param === undefined) return undefined
  if (param.type === "integer" && param.value >= 0) return param.value
  problems.push({
    header,
    value,
    reason: `policy ${JSON.stringify(policyName(item))}: ${key} must be a non-negative integer`
  })
  return "invalid"
}

interface Seen {
  limit?: number
  remaining?: number
  resetAfterMillis?: number
}

/**
 * The IETF profile: `RateLimit-Policy` gives each policy's quota (`q`), `RateLimit` its remaining
 * units (`r`) and the seconds until more are available (`t`); they are joined by policy name, which
 * becomes the observation's dimension. `w` (the window) and `qu` (the unit) describe the policy and
 * are not observations. `r` is REQUIRED by §4.1, but the draft's own Appendix B.3.1 sends
 * `RateLimit: quota;t=1`; an item without it gives its reset alone.
 *
 * @since 0.1.0
 */
export const ietf: Profile = {
  name: "ietf",
  read: (headers, _nowMillis, maxResetMillis = DEFAULT_MAX_RESET_MILLIS) => {
    const map = lowercased(headers)
    const problems: Array<Problem> = []
    const byName = new Map<string, Seen>()
    const entry = (name: string): Seen => {
      const existing = byName.get(name)
      if (existing !== undefined) return existing
      const created: Seen = {}
      byName.set(name, created)
      return created
    }
    const field = (header: string, each: (item: SfItem, name: string, value: string) => void) => {
      const value = map.get(header.toLowerCase())
      if (value === undefined) return
      const parsed = parseSfList(value)
      if (typeof parsed === "string") {
        problems.push({ header, value, reason: `not a structured field list: ${parsed}` })
        return
      }
      for (const item of parsed) {
        const name = policyName(item)
        if (name === undefined) {
          problems.push({ header, value, reason: "a policy name must be a string or a token" })
          continue
        }
        each(item, name, value)
      }
    }
    field("RateLimit-Policy", (item, name, value) => {
      const q = integerParam(item, "q", "RateLimit-Policy", value, problems)
      if (q === undefined) {
        problems.push({ header: "RateLimit-Policy", value, reason: `policy ${JSON.stringify(name)}: q is required` })
      } else if (q !== "invalid") {
        entry(name).limit = q
      }
    })
    field("RateLimit", (item, name, value) => {
      const r = integerParam(item, "r", "RateLimit", value, problems)
      const t = integerParam(item, "t", "RateLimit", value, problems)
      if (r === "invalid" || t === "invalid") return // the item is malformed: all of it is ignored
      const current = entry(name)
      if (r !== undefined) current.remaining = r
      if (t !== undefined) current.resetAfterMillis = bounded("RateLimit", value, t * 1000, maxResetMillis, r, problems)
    })
    const observations: Array<Observation> = []
    for (const [name, seen] of byName) {
      const made = observation(name, seen.limit, seen.remaining, seen.resetAfterMillis)
      if (made !== undefined) observations.push(made)
    }
    return { observations, problems }
  }
}

/**
 * The profile with its dimensions renamed (`{ "input-tokens": "input" }`); names not mapped stay.
 *
 * @since 0.1.0
 */
export const rename = (profile: Profile, names: Readonly<Record<string, string>>): Profile => ({
  name: profile.name,
  read: (headers, nowMillis, maxResetMillis) => {
    const reading = profile.read(headers, nowMillis, maxResetMillis)
    return {
      observations: reading.observations.map((seen) =>
        Object.hasOwn(names, seen.dimension) ? { ...seen, dimension: names[seen.dimension] } : seen
      ),
      problems: reading.problems
    }
  }
})

/**
 * The profile with its resets bounded by `maxResetMillis` instead of the default (an outer bound
 * given to `read` wins).
 *
 * @since 0.1.0
 */
export const withMaxReset = (profile: Profile, maxResetMillis: number): Profile => ({
  name: profile.name,
  read: (headers, nowMillis, outer) => profile.read(headers, nowMillis, outer ?? maxResetMillis)
})
