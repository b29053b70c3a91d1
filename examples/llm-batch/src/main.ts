/**
 * The entry point: `tsx src/main.ts [serve] [options]`; with no arguments, the built-in sample
 * against a stand-in OpenAI, offline. Started with `Child.ROLE_VARIABLE` set, it serves the
 * stand-in instead (see stand-in/Child.ts).
 */
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
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
    Effect.catchTags({ UsageError: oneLine, InputError: oneLine, StandInFailed: oneLine, PoolTooSmall: oneLine }),
    Effect.tapErrorCause((cause) =>
      Cause.isInterruptedOnly(cause) || Option.exists(Cause.failureOption(cause), ValidationError.isValidationError)
        ? Effect.void
        : Effect.logError(cause)
    ),
    Effect.provide(NodeContext.layer)
  )

NodeRuntime.runMain(program, { disableErrorReporting: true })
