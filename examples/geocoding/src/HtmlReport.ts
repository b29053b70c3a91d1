/**
 * `--report FILE.html`: the run's providers, from their recordings, in one self-contained page
 * (`@sluice/report`), with what the stand-ins saw beside them when they ran here.
 */
import { Report } from "@sluice/report"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import type * as Pipeline from "./Pipeline.js"

/** What a stand-in counted (stand-ins/StandIn.ts `Stats`, with its name and bounds). */
export interface ServerFigures {
  readonly name: string
  readonly limit: number
  readonly burst: number
  readonly requests: number
  readonly rateLimited: number
  readonly concurrencyLimited: number
  readonly peakInWindow: number
  readonly arrivals?: Report.ServerSide["arrivals"]
}

export const input = (
  summary: Pipeline.Summary,
  servers: ReadonlyArray<ServerFigures>,
  notes: ReadonlyArray<string>
): Report.Input => ({
  title: `sluice geocoding run: ${summary.rows.toLocaleString("en-US")} rows in ${
    (summary.durationMillis / 1000).toFixed(1)
  } s`,
  notes: [
    `${summary.ok} ok, ${summary.notFound} not found, ${summary.failed} failed; ${summary.lookups} lookups sent, ${summary.deduplicated} rows answered by the dedup cache`,
    ...notes
  ],
  providers: summary.providers.flatMap((p) => {
    if (p.recording === undefined) return []
    const server = servers.find((s) => s.name === p.name)
    return [{
      recording: p.recording,
      verdict: p.verdict,
      quotaPerSecond: p.quota,
      server: server === undefined ? undefined : {
        requests: server.requests,
        rateLimited: server.rateLimited + server.concurrencyLimited,
        peakInWindow: server.peakInWindow,
        admitsPerWindow: server.limit + server.burst,
        arrivals: server.arrivals
      }
    }]
  })
})

/** Writes the report and prints its path (to stderr under `--json`, whose stdout is one line of JSON). */
export const write = (
  path: string,
  summary: Pipeline.Summary,
  servers: ReadonlyArray<ServerFigures>,
  notes: ReadonlyArray<string>,
  json: boolean
) =>
  Effect.zipRight(
    Report.write(path, input(summary, servers, notes)),
    (json ? Console.error : Console.log)(`report: ${Path.resolve(path)}`)
  )
