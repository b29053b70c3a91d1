/** @internal */
import * as Duration from "effect/Duration"

/**
 * A duration as a short figure (`2s`, `1s 500ms`, `0ms`).
 *
 * @internal
 */
export const formatDuration = (d: Duration.Duration): string => Duration.format(d) || "0ms"

/** @internal */
export const plural = (n: number, word: string, words = `${word}s`): string => `${n} ${n === 1 ? word : words}`

/**
 * A value as an error message shows it: strings quoted, NaN and ±Infinity by name (JSON would say
 * `null`), durations formatted.
 *
 * @internal
 */
export const show = (u: unknown): string => {
  if (typeof u === "string") return JSON.stringify(u)
  if (typeof u === "number" || typeof u === "bigint") return String(u)
  if (Duration.isDuration(u)) return Duration.format(u)
  if (u === undefined) return "undefined"
  try {
    return JSON.stringify(u, (_, v: unknown) => typeof v === "number" && !Number.isFinite(v) ? String(v) : v) ??
      String(u)
  } catch {
    return String(u)
  }
}
