/**
 * The entry point: `tsx src/main.ts [serve] [options]`; with no arguments, the built-in sample
 * against a stand-in OpenAI, offline. Started with `Child.ROLE_VARIABLE` set, it serves the
 * stand-in instead (see stand-in/Child.ts).
 */
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { defaultTeardown, type Teardown } from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Child from "./stand-in/Child.js"

/** The errors a user can fix: one line, exit code 1. */
const oneLine = (error: { readonly message: string }) =>
  Effect.zipRight(
    Console.error(`error: ${error.message}`),
    Effect.sync(() => {
      process.exitCode = 1
    })
  )

const program = process.env[Child.ROLE_VARIABLE] !== undefined
  ? Child.serveParent
  // imported here, not above: the stand-in's process needs none of the client (the OpenAI client's
  // generated module alone takes seconds to load)
  : Effect.flatMap(Effect.promise(() => import("./Cli.js")), ({ cli }) => cli(process.argv)).pipe(
    Effect.catchTags({
      UsageError: oneLine,
      InputError: oneLine,
      StandInFailed: oneLine,
      PoolTooSmall: oneLine,
      RedisUnreachable: oneLine,
      CallsFailed: oneLine,
      ReportError: oneLine
    }),
    Effect.tapErrorCause((cause) =>
      Cause.isInterruptedOnly(cause) || Option.exists(Cause.failureOption(cause), ValidationError.isValidationError)
        ? Effect.void
        : Effect.logError(cause)
    ),
    Effect.provide(NodeContext.layer)
  )

/**
 * `runMain` interrupts the program on the first SIGINT or SIGTERM (the batch then prints what it
 * did, and its scope stops the stand-in) and leaves the next signal to Node, which ends the process
 * at once. The exit code says which signal stopped the run, as a shell reports it: 130 for SIGINT,
 * 143 for SIGTERM (the geocoding example does the same).
 */
const signals = { SIGINT: 130, SIGTERM: 143 } as const
let stoppedBy: number | undefined
const record = (signal: keyof typeof signals) => {
  stoppedBy ??= signals[signal]
  process.off("SIGINT", onSigint)
  process.off("SIGTERM", onSigterm)
}
const onSigint = () => record("SIGINT")
const onSigterm = () => record("SIGTERM")
if (process.env[Child.ROLE_VARIABLE] === undefined) {
  process.on("SIGINT", onSigint)
  process.on("SIGTERM", onSigterm)
}

const teardown: Teardown = (exit, onExit) =>
  Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) && stoppedBy !== undefined
    ? onExit(stoppedBy)
    : defaultTeardown(exit, onExit)

NodeRuntime.runMain(program, { disableErrorReporting: true, teardown })
