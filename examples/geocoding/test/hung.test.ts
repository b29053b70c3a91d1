/**
 * A hung host: the stand-ins' process stopped (SIGSTOP) in the middle of a run. Every wait on it is
 * bounded, so the run still ends: with its table, a line saying that the stand-ins did not answer,
 * and a non-zero exit with the count of rows that failed. Those rows are not done: the same command
 * run again, against stand-ins that answer, tries them again and the output ends with every row once.
 */
import * as Path from "node:path"
import { expect, it } from "vitest"
import {
  collect,
  distinctInput,
  isAlive,
  lineCount,
  readOutput,
  runArgs,
  spawnCli,
  standInsPid,
  tempDir,
  track,
  waitFor
} from "./utils.js"

const ROWS = 600

it(
  "ends with its table and says what did not answer when the stand-ins' process hangs; resume retries the failed rows",
  async () => {
    const dir = tempDir()
    const input = Path.join(dir, "in.jsonl")
    const output = Path.join(dir, "out.jsonl")
    const ids = distinctInput(input, ROWS)
    // 105 lookups per second: the batch is still running when the stand-ins stop
    const args = runArgs(input, output, { opencage: 60, photon: 30, nominatim: 15 })
    const run = track(spawnCli(args, { detached: true }))
    let standIns: number | undefined
    try {
      await waitFor("60 results", () => lineCount(output) >= 60 || run.hasExited(), 60_000)
      expect(run.hasExited(), run.output.stderr).toBe(false)
      standIns = standInsPid(run.output.stdout)
      expect(standIns).toBeTypeOf("number")
      process.kill(standIns!, "SIGSTOP")
      // before: every row written, then no table and no exit while the process stayed stopped
      await waitFor("the CLI to exit", run.hasExited, 60_000)
      const exit = await run.exited
      expect(exit, run.output.stderr).toEqual({ code: 1, signal: null })
      expect(run.output.stdout).toMatch(/binding bound, per provider:/)
      expect(run.output.stdout).toMatch(
        new RegExp(
          `what the stand-ins saw: unknown, the stand-ins' process ${standIns} did not answer \\(its figures\\)`
        )
      )
      const failed = readOutput(output).filter((record) => record.status === "failed").length
      expect(failed).toBeGreaterThan(0)
      expect(run.output.stderr).toContain(`error: ${failed} of ${ROWS} rows failed`)
      // stopped, it could not take SIGTERM: the run's end killed it
      await waitFor("the stand-ins' process to exit", () => !isAlive(standIns!), 10_000)
    } finally {
      if (standIns !== undefined && isAlive(standIns)) {
        process.kill(standIns, "SIGKILL")
      }
      if (!run.hasExited() && run.child.pid !== undefined) process.kill(-run.child.pid, "SIGKILL")
    }

    const again = await collect(spawnCli([...args, "--json"]))
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout + again.stderr).toMatch(/rows written as failed are tried again/)
    const records = readOutput(output)
    expect(records.length).toBe(ROWS)
    expect(new Set(records.map((record) => record.id))).toEqual(new Set(ids))
    expect(records.filter((record) => record.status === "failed")).toEqual([])
  },
  180_000
)
