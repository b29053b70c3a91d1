/**
 * Validation of options and per-call arguments: a bad value is a defect whose message names the
 * bulkhead and the value as written.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

/** @internal */
export const illegal = (message: string): Cause.IllegalArgumentException => new Cause.IllegalArgumentException(message)

/**
 * Safe integers only: past 2^53 - 1 a count is no longer exact, so `permits: 2 ** 60` is refused.
 *
 * @internal
 */
export const isPositiveInteger = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 1

/**
 * A value as the user wrote it, for messages: NaN and Infinity as such (`JSON.stringify` prints
 * them as `null`), strings quoted, arrays element by element.
 *
 * @internal
 */
export const show = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "bigint") return `${u}n`
  if (Array.isArray(u)) return `[${u.map(show).join(", ")}]`
  if (Duration.isDuration(u)) return `Duration(${Duration.format(u) || "0ms"})`
  if (typeof u === "object" && u !== null) {
    try {
      return JSON.stringify(u)
    } catch {
      return String(u)
    }
  }
  return String(u)
}

/**
 * The reason a whole number was refused when it is past 2^53 - 1, which the number alone hides.
 *
 * @internal
 */
export const unsafe = (n: unknown): string =>
  typeof n === "number" && Number.isInteger(n) && !Number.isSafeInteger(n)
    ? " (not a safe integer: above 2^53 - 1)"
    : ""

/**
 * Decodes a duration option. Effect's `Duration` maps negative and NaN inputs to zero; a budget
 * written as `-5` or `NaN` is a mistake, so it is refused here instead of meaning "do not wait".
 *
 * @internal
 */
export const decodeMaxWait = (
  name: string,
  input: Duration.DurationInput | undefined,
  what: string
): Duration.Duration => {
  if (input === undefined) return Duration.infinity
  const negative = (typeof input === "number" && !(input >= 0)) ||
    (typeof input === "bigint" && input < BigInt(0)) ||
    (typeof input === "string" && input.trim().startsWith("-")) ||
    (Array.isArray(input) && !(Number(input[0]) >= 0 && Number(input[1]) >= 0))
  const decoded = negative ? undefined : Option.getOrUndefined(Duration.decodeUnknown(input))
  if (decoded === undefined) {
    throw illegal(`bulkhead "${name}": ${what} must be a duration ≥ 0, got ${show(input)}`)
  }
  return decoded
}
