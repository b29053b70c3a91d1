/** @internal */
import * as Core from "@sluice/core/Sizing"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Api from "../Sizing.js"

/** @internal */
export class InvalidSizing extends Data.TaggedError("InvalidSizing")<{
  readonly field: Core.Invalid["field"]
  readonly value: unknown
  readonly message: string
}> {}

/** @internal */
export const permits = (options: Api.Options): Result.Result<Api.Sizing, InvalidSizing> => {
  const { medianLatency } = options
  const negative = typeof medianLatency === "number" && !(medianLatency >= 0)
  const decoded = negative ? Option.none() : Duration.fromInput(medianLatency)
  const outcome = Core.permits({
    rate: options.rate,
    medianLatency,
    medianLatencyMillis: Option.isSome(decoded) ? Duration.toMillis(decoded.value) : Number.NaN,
    headroom: options.headroom
  })
  return outcome._tag === "Sized"
    ? Result.succeed(outcome.sizing)
    : Result.fail(new InvalidSizing({ field: outcome.field, value: outcome.value, message: outcome.message }))
}
