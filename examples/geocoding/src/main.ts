/**
 * The entry point: `tsx src/main.ts [run|serve|tune] [options]`; `run` with no arguments geocodes
 * the built-in sample offline against stand-in providers.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { cli } from "./Cli.js"

cli(process.argv).pipe(
  // the errors a user can fix are one line naming the provider, the file or the flag
  Effect.catchTags({
    UsageError: (error) => Effect.zipRight(Console.error(`error: ${error.message}`), Effect.fail(error)),
    ProviderUnreachable: (error) => Effect.zipRight(Console.error(`error: ${error.message}`), Effect.fail(error)),
    InputError: (error) => Effect.zipRight(Console.error(`error: ${error.message}`), Effect.fail(error)),
    OutputError: (error) => Effect.zipRight(Console.error(`error: ${error.message}`), Effect.fail(error))
  }),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false })
)
