/**
 * The bound on every wait a server asks for: `Retry-After`'s pause and the resets of its rate-limit
 * headers, in milliseconds. Imports nothing, so that both Effect lines read it unchanged.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export interface RetryAfterBounds {
  /** Used when the header is missing or unreadable. */
  readonly fallbackMillis: number
  /** The shortest pause: a Retry-After of 0 (or a date already past) still backs off this long. */
  readonly minMillis: number
  /** The longest pause: a Retry-After of a day is not obeyed blindly. */
  readonly maxMillis: number
}

/**
 * `millis` within [`min`, `max`]: the one bound on every wait a server asks for, `Retry-After`'s
 * pause and the resets of its rate-limit headers alike.
 *
 * @since 0.1.0
 */
export const clampMillis = (millis: number, min: number, max: number): number => Math.min(max, Math.max(min, millis))

/**
 * The pause a `Retry-After` header asks for, in milliseconds, clamped to `bounds`. The header is
 * either delta-seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`), which is turned
 * into a duration here, once, against `nowMillis` (the receiver's clock): from then on only the
 * duration travels, so no other process compares its clock with this one.
 *
 * @since 0.1.0
 */
export const retryAfterMillis = (header: string | undefined, nowMillis: number, bounds: RetryAfterBounds): number => {
  const clamp = (ms: number) => clampMillis(ms, bounds.minMillis, bounds.maxMillis)
  if (header === undefined) return clamp(bounds.fallbackMillis)
  const value = header.trim()
  if (/^\d+$/.test(value)) return clamp(Number(value) * 1000)
  // RFC 9110 allows only delta-seconds or an HTTP date; anything else (negative, fractional,
  // garbage) is unreadable and gets the fallback
  if (/^[A-Za-z]{3},/.test(value)) {
    const at = Date.parse(value)
    if (Number.isFinite(at)) return clamp(at - nowMillis)
  }
  return clamp(bounds.fallbackMillis)
}
