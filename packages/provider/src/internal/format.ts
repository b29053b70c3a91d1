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
 * Whose policy refused: its own name, and the provider that used it (`undefined` for a breaker or
 * a budget used on its own).
 *
 * @internal
 */
export interface Owner {
  readonly name: string
  readonly provider: string | undefined
}
