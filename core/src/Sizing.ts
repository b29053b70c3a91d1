/**
 * How many permits a bulkhead needs, from Little's law (calls in flight = rate × time in the
 * system), on plain numbers: the figures, their derivation as text, and the message of a bad input.
 * The binding decodes the median latency into milliseconds and carries the refusal as its error.
 *
 * @since 0.1.0
 */

/**
 * What to size from: `medianLatency` as given (for the message), and its decoding in milliseconds
 * (`NaN` when it is no duration).
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly rate: unknown
  readonly medianLatency: unknown
  readonly medianLatencyMillis: number
  /** Default 2. */
  readonly headroom?: unknown
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Sizing {
  /** `required × headroom`, rounded up. */
  readonly permits: number
  /** `rate × medianLatency`, rounded up, at least 1. */
  readonly required: number
  /** `rate 50/s × median 200 ms = 10, ×2 headroom = 20` */
  readonly derivation: string
}

/**
 * The input refused: `field` names it, `message` says what was expected and what was given.
 *
 * @since 0.1.0
 * @category models
 */
export interface Invalid {
  readonly _tag: "Invalid"
  readonly field: "rate" | "medianLatency" | "headroom"
  readonly value: unknown
  readonly message: string
}

/**
 * @since 0.1.0
 * @category models
 */
export type Outcome = { readonly _tag: "Sized"; readonly sizing: Sizing } | Invalid

/** Rounds away float noise (0.1 × 3 = 0.30000000000000004) before it reaches the text or a ceiling. */
const clean = (n: number): number => Number(n.toPrecision(12))

const figure = (n: number): string => String(clean(n))

const latencyText = (millis: number): string => millis >= 1000 ? `${figure(millis / 1000)} s` : `${figure(millis)} ms`

const invalid = (field: Invalid["field"], value: unknown, expected: string): Invalid => ({
  _tag: "Invalid",
  field,
  value,
  message: `Sizing.permits: ${field} must be ${expected}, got ${String(value)}`
})

/**
 * Permits from rate × median latency with headroom, checked in that order: the rate a finite
 * number > 0, the latency a finite duration > 0, the headroom a finite number ≥ 1.
 *
 * @since 0.1.0
 * @category constructors
 */
export const permits = (input: Input): Outcome => {
  const { headroom = 2, medianLatency, medianLatencyMillis: latencyMillis, rate } = input
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate <= 0) {
    return invalid("rate", rate, "a finite number of calls per second > 0")
  }
  if (!Number.isFinite(latencyMillis) || latencyMillis <= 0) {
    return invalid("medianLatency", medianLatency, "a finite duration > 0")
  }
  if (typeof headroom !== "number" || !Number.isFinite(headroom) || headroom < 1) {
    return invalid("headroom", headroom, "a finite number ≥ 1")
  }
  // Little's law: calls in flight = arrival rate × time in the system
  const exact = clean(rate * latencyMillis / 1000)
  const required = Math.max(1, Math.ceil(exact))
  const permits = Math.max(1, Math.ceil(clean(required * headroom)))
  const rounded = exact === required ? "" : `, rounded up to ${required}`
  const derivation = `rate ${figure(rate)}/s × median ${latencyText(latencyMillis)} = ${figure(exact)}${rounded}, ×${
    figure(headroom)
  } headroom = ${permits}`
  return { _tag: "Sized", sizing: { permits, required, derivation } }
}
