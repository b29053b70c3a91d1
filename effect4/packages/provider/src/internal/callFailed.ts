/** @internal */
import * as Cause from "effect/Cause"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"

/**
 * A failure of the call itself, kept apart from the provider's own refusals until the call ends:
 * the call's errors may carry the same tags (a nested provider's `CallTimeout`, say).
 *
 * @internal
 */
export class CallFailed {
  constructor(readonly error: unknown) {}
}

/** @internal */
export const wrap = (error: unknown): CallFailed => new CallFailed(error)

/** @internal */
export const unwrap = (error: unknown): unknown => error instanceof CallFailed ? error.error : error

/**
 * `Exit.mapError(unwrap)` as the caller sees it: a failure becomes its first error, unwrapped.
 *
 * @internal
 */
export const unwrapExit = <A>(exit: Exit.Exit<A, unknown>): Exit.Exit<A, unknown> => {
  if (Exit.isSuccess(exit)) return exit
  const failure = Cause.findError(exit.cause)
  return Result.isSuccess(failure) && failure.success instanceof CallFailed ? Exit.fail(failure.success.error) : exit
}
