/** Helpers shared by the limiter's tests. */
import { assert } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"

/** A name no other test uses, so that tests sharing a store never share state. */
export const uniqueName = (base: string): string => `${base}-${globalThis.crypto.randomUUID().slice(0, 8)}`

/** The defect's message, or a failure of the test when `effect` did not die. */
export const defectOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) return Effect.dieMessage("expected a defect, got a success")
    const defect = Cause.dieOption(exit.cause)
    if (Option.isNone(defect)) return Effect.dieMessage(`expected a defect, got ${Cause.pretty(exit.cause)}`)
    assert(Cause.isIllegalArgumentException(defect.value), "an IllegalArgumentException")
    return Effect.succeed(defect.value.message)
  })
