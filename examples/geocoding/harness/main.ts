/**
 * The offline demo's entry point: `tsx harness/main.ts [run|serve|tune] [options]`; `run` with no
 * arguments geocodes the built-in sample against stand-in providers. Started with
 * `Child.ROLE_VARIABLE` set (by `run` or `tune`, see stand-ins/Child.ts), it serves their
 * stand-ins instead.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Program from "../src/Program.js"
import * as Child from "../stand-ins/Child.js"
import { cli } from "./Cli.js"

Program.runMain(
  process.env[Child.ROLE_VARIABLE] !== undefined
    ? Program.reportUnexpected(Child.serveParent)
    : cli(process.argv).pipe(
      // the errors a user can fix are one line naming the provider, the file, the flag or the process
      Effect.catchTags({
        UsageError: Program.oneLine,
        ProviderUnreachable: Program.oneLine,
        InputError: Program.oneLine,
        OutputError: Program.oneLine,
        StandInsFailed: Program.oneLine,
        ListenFailed: Program.oneLine,
        InvalidSizing: Program.oneLine,
        RowsFailed: Program.oneLine,
        ReportError: Program.oneLine
      }),
      Program.reportUnexpected,
      Effect.provide(NodeContext.layer)
    )
)
