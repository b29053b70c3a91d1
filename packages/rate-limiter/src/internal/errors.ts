/** @internal */
import * as Duration from "effect/Duration"
import type * as RateLimiter from "../RateLimiter.js"

/**
 * Milliseconds as a short human figure: `340ms`, `3.4s`, `2min`, `1d`.
 *
 * @internal
 */
export const formatMillis = (millis: number): string => {
  if (!Number.isFinite(millis)) return "forever"
  const units: ReadonlyArray<readonly [number, string]> = [[86_400_000, "d"], [3_600_000, "h"], [60_000, "min"]]
  for (const [size, unit] of units) {
    if (millis >= size && millis % size === 0) return `${millis / size}${unit}`
  }
  if (millis >= 1000) return `${Number((millis / 1000).toFixed(3))}s`
  return `${Number(millis.toFixed(3))}ms`
}

/**
 * `10 per 1s (burst 1)`, `1000 per 1d (fixed window)`; a named dimension first:
 * `tokens: 200000 per 1min (burst 200000)`.
 *
 * @internal
 */
export const describeLimit = (limit: RateLimiter.ResolvedLimit): string => {
  const window = formatMillis(Duration.toMillis(limit.window))
  const shape = limit.algorithm === "gcra" ? `burst ${limit.burst}` : limit.algorithm.replace("-", " ")
  const dimension = limit.dimension === undefined || limit.dimension === "default" ? "" : `${limit.dimension}: `
  return `${dimension}${limit.limit} per ${window} (${shape})`
}
