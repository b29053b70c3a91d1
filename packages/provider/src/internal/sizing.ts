/** @internal */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Api from "../Sizing.js"

/** @internal */
export class InvalidSizing extends Data.TaggedError("InvalidSizing")<{
  readonly field: "rate" | "medianLatency" | "headroom"
  readonly value: unknown
  readonly message: string
}> {}

/** Rounds away float noise (0.1 × 3 = 0.30000000000000004) before it reaches the text or a ceiling. */
const clean = (n: number): number => Number(n.toPrecision(12))

const figure = (n: number): string => String(clean(n))

const latencyText = (millis: number): string => millis >= 1000 ? `${figure(millis / 1000)} s` : `${figure(millis)} ms`

const invalid = (field: InvalidSizing["field"], value: unknown, expected: string) =>
  Either.left(
    new InvalidSizing({ field, value, message: `Sizing.permits: ${field} must be ${expected}, got ${String(value)}` })
  )

/** @internal */
export const permits = (options: Api.Options): Either.Either<Api.Sizing, InvalidSizing> => {
  const { headroom = 2, medianLatency, rate } = options
  if (typeof rate !== "number" || !Number.isFinite(rate) || rate <= 0) {
    return invalid("rate", rate, "a finite number of calls per second > 0")
  }
  const negative = typeof medianLatency === "number" && !(medianLatency >= 0)
  const decoded = negative ? Option.none() : Duration.decodeUnknown(medianLatency)
  const latencyMillis = Option.isSome(decoded) ? Duration.toMillis(decoded.value) : Number.NaN
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
  return Either.right({ permits, required, derivation })
}
