/** Helpers shared by the limiter's tests. */
import { assert } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"

/** A name no other test uses, so that tests sharing a store never share state. */
export const uniqueName = (base: string): string => `${base}-${globalThis.crypto.randomUUID().slice(0, 8)}`

/** The defect's message, or a failure of the test when `effect` did not die. */
export const defectOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.exit(effect), (exit) => {
    if (Exit.isSuccess(exit)) return Effect.die("expected a defect, got a success")
    const defect = exit.cause.reasons.find(Cause.isDieReason)
    if (defect === undefined) return Effect.die(`expected a defect, got ${Cause.pretty(exit.cause)}`)
    assert(Cause.isIllegalArgumentError(defect.defect), "an IllegalArgumentError")
    return Effect.succeed(defect.defect.message)
  })

/**
 * One run of a property on a TestClock of its own, as `it.effect.prop` gave each run on Effect 3:
 * fast-check itself drives the runs (fast-check 3.23.2 on both lines, so a seed replays on both).
 */
export const effectProperty = <A>(
  arbitrary: fc.Arbitrary<A>,
  run: (input: A) => Effect.Effect<void, unknown>,
  parameters: fc.Parameters<[A]>
) =>
  Effect.promise(() =>
    fc.assert(
      fc.asyncProperty(arbitrary, (input) => Effect.runPromise(run(input).pipe(Effect.provide(TestClock.layer())))),
      parameters
    )
  )
