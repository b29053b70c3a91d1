import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"

/**
 * A value as an error message shows it: strings quoted, NaN and Infinity as themselves (where
 * `JSON.stringify` would print `null`).
 */
export const show = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "bigint") return `${value}n`
  if (Array.isArray(value)) return `[${value.map(show).join(", ")}]`
  return String(value)
}

/** Effect's decoding reads a negative duration as zero; an option refuses it instead. */
const negative = (value: unknown): boolean => {
  if (typeof value === "number") return !(value >= 0)
  if (typeof value === "bigint") return value < 0n
  if (typeof value === "string") return value.trim().startsWith("-")
  if (Array.isArray(value)) return value.some(negative)
  return false
}

/** The milliseconds of a duration option, or why it is refused: `label` names the option. */
export const durationMillis = (
  label: string,
  value: unknown,
  allowZero: boolean
): Either.Either<number, string> => {
  const decoded = negative(value) ? Option.none() : Duration.decodeUnknown(value)
  const ms = Option.match(decoded, { onNone: () => Number.NaN, onSome: Duration.toMillis })
  return (ms > 0 || (allowZero && ms === 0)) && Number.isFinite(ms)
    ? Either.right(ms)
    : Either.left(`${label} must be a finite duration ${allowZero ? "≥ 0" : "> 0"}, got ${show(value)}`)
}

/** A count option: a safe integer ≥ 1, or why it is refused. */
export const positiveInteger = (label: string, value: unknown): Either.Either<number, string> =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 1
    ? Either.right(value)
    : Either.left(`${label} must be an integer ≥ 1, got ${show(value)}`)

/**
 * The origin of an http(s) URL (scheme, host and port: what a pool is kept per), or why `url` has
 * none: only http and https reach an HTTP upstream, and any other scheme has no origin to pool on.
 */
export const httpOrigin = (label: string, url: unknown): Either.Either<string, string> => {
  const refused = (why: string) => Either.left(`${label} must be an absolute http(s) URL, got ${show(url)} (${why})`)
  if (typeof url !== "string") return refused("not a string")
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return refused("not an absolute URL")
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return refused(`its scheme is ${parsed.protocol}`)
  return Either.right(parsed.origin)
}
