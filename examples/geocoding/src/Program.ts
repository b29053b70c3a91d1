/**
 * The CLI as a process: a failure a user can fix is one line on stderr and a non-zero exit,
 * anything else is logged whole, and a run stopped by a signal exits as a shell reports it.
 */
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { defaultTeardown, type Teardown } from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"

/** A failure already told the user in one line: the exit code says the rest. */
class Reported extends Data.TaggedError("Reported")<{ readonly error: { readonly message: string } }> {}

/** For `Effect.catchTags`: the error's message as one line, `error: …`, then a non-zero exit. */
export const oneLine = <E extends { readonly message: string }>(error: E) =>
  Effect.zipRight(Console.error(`error: ${error.message}`), Effect.fail(new Reported({ error })))

/**
 * Anything else that ends the program in failure is logged whole, with its trace; an interruption
 * is not a failure, and @effect/cli prints its own usage errors.
 */
export const reportUnexpected = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.tapErrorCause(effect, (cause) =>
    Cause.isInterruptedOnly(cause) ||
      Option.exists(Cause.failureOption(cause), (e) => e instanceof Reported || ValidationError.isValidationError(e))
      ? Effect.void
      : Effect.logError(cause))

/**
 * Runs `program` as the process. `runMain` interrupts it on the first SIGINT or SIGTERM (the run
 * then stops admitting rows, writes what completed, and the scopes close) and leaves the next
 * signal to Node, which ends the process at once. The exit code says which signal stopped the run,
 * as a shell reports it: 128 + its number (130 for SIGINT, 143 for SIGTERM). Which one arrived is
 * all this listener records; it leaves with the first signal, so that the second is Node's again.
 */
export const runMain = <E>(program: Effect.Effect<void, E>): void => {
  const signals = { SIGINT: 130, SIGTERM: 143 } as const
  let stoppedBy: number | undefined
  const record = (signal: keyof typeof signals) => {
    stoppedBy ??= signals[signal]
    process.off("SIGINT", onSigint)
    process.off("SIGTERM", onSigterm)
  }
  const onSigint = () => record("SIGINT")
  const onSigterm = () => record("SIGTERM")
  process.on("SIGINT", onSigint)
  process.on("SIGTERM", onSigterm)

  const teardown: Teardown = (exit, onExit) =>
    Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) && stoppedBy !== undefined
      ? onExit(stoppedBy)
      : defaultTeardown(exit, onExit)

  NodeRuntime.runMain(program, { disableErrorReporting: true, teardown })
}
