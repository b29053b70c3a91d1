/**
 * The entry point: `tsx src/main.ts [run|serve|tune] [options]`; `run` with no arguments geocodes
 * the built-in sample offline against stand-in providers. Started with `Child.ROLE_VARIABLE` set
 * (by `run` or `tune`, see stand-ins/Child.ts), it serves their stand-ins instead.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { cli } from "./Cli.js"
import * as Child from "./stand-ins/Child.js"

const oneLine = <E extends { readonly message: string }>(error: E) =>
  Effect.zipRight(Console.error(`error: ${error.message}`), Effect.fail(error))

const program = process.env[Child.ROLE_VARIABLE] !== undefined
  ? Child.serveParent
  : cli(process.argv).pipe(
    // the errors a user can fix are one line naming the provider, the file, the flag or the process
    Effect.catchTags({
      UsageError: oneLine,
      ProviderUnreachable: oneLine,
      InputError: oneLine,
      OutputError: oneLine,
      StandInsFailed: oneLine,
      ListenFailed: oneLine
    }),
    Effect.provide(NodeContext.layer)
  )

NodeRuntime.runMain(program, { disableErrorReporting: false })
