/**
 * The entry point: `tsx src/main.ts [run] --input FILE [options]` geocodes the file across the
 * providers, each at its `--url`, else at the real service. The offline demo's entry, with
 * stand-ins, `serve` and `tune`, is harness/main.ts.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { cli } from "./Cli.js"
import * as Program from "./Program.js"

Program.runMain(
  cli(process.argv).pipe(
    // the errors a user can fix are one line naming the provider, the file or the flag
    Effect.catchTags({
      UsageError: Program.oneLine,
      ProviderUnreachable: Program.oneLine,
      InputError: Program.oneLine,
      OutputError: Program.oneLine,
      InvalidSizing: Program.oneLine,
      RowsFailed: Program.oneLine,
      ReportError: Program.oneLine
    }),
    Program.reportUnexpected,
    Effect.provide(NodeContext.layer)
  )
)
