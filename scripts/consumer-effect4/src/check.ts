// What every package file of the app uses: a check that fails the run with what it saw.
import { Data, Effect } from "effect"

export class CheckFailed extends Data.TaggedError("CheckFailed")<{ readonly message: string }> {}

/** Fails with `what` and the value seen when `ok` is false. */
export const check = (ok: boolean, what: string, seen?: unknown): Effect.Effect<void, CheckFailed> =>
  ok ? Effect.void : Effect.fail(new CheckFailed({ message: `${what}; got ${JSON.stringify(seen)}` }))

/** What a package file exports: the checks of its package, run by main.ts when it was packed. */
export type Checks = Effect.Effect<void, unknown>
