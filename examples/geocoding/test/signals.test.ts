/**
 * Stopping a run: Ctrl-C (SIGINT to the CLI's process group, as a terminal sends it) and SIGTERM
 * stop admitting rows, write what completed, stop the stand-ins' process and exit 130 / 143 with a
 * one-line summary; the output then resumes with nothing lost or duplicated. A second Ctrl-C ends
 * the process at once. Every wait is for a condition (lines written, a process gone), bounded.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
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
  type Tracked,
  waitFor
} from "./utils.js"

const ROWS = 600

// 105 lookups per second: the batch lasts long enough to be stopped in the middle
const argsFor = (input: string, output: string, extra: ReadonlyArray<string> = []) =>
  runArgs(input, output, { opencage: 60, photon: 30, nominatim: 15 }, extra)

/** Starts the CLI in a group of its own and waits until it has written `lines` results. */
const startRun = async (args: ReadonlyArray<string>, output: string, lines: number): Promise<Tracked> => {
  const run = track(spawnCli(args, { detached: true }))
  try {
    await waitFor(`${lines} results in ${output}`, () => lineCount(output) >= lines || run.hasExited(), 60_000)
  } catch (error) {
    run.child.kill("SIGKILL")
    throw error
  }
  expect(run.hasExited(), run.output.stderr).toBe(false)
  return run
}

/** Ends the run if the test failed before it did. */
const killGroup = (run: Tracked) => {
  if (!run.hasExited() && run.child.pid !== undefined) process.kill(-run.child.pid, "SIGKILL")
}

/** Whether a signal is caught by the process (Linux: the `SigCgt` mask of /proc/PID/status). */
const catches = (pid: number, signal: number): boolean => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)
  return mask !== null && (BigInt(`0x${mask[1]}`) & (1n << BigInt(signal - 1))) !== 0n
}

const expectResumesWhole = async (args: ReadonlyArray<string>, output: string, ids: ReadonlyArray<string>) => {
  const second = await collect(spawnCli([...args, "--json"]))
  expect(second.code, second.stderr).toBe(0)
  const records = readOutput(output)
  expect(records.length).toBe(ids.length)
  expect(new Set(records.map((record) => record.id))).toEqual(new Set(ids))
  // a lookup the stop abandoned is not written as failed: it is done again on resume
  expect(records.filter((record) => record.status === "failed")).toEqual([])
}

describe.sequential("stopping a run", () => {
  for (const [signal, code, toGroup] of [["SIGINT", 130, true], ["SIGTERM", 143, false]] as const) {
    it(
      `${signal}${
        toGroup ? " to the process group (Ctrl-C)" : ""
      }: writes what completed, exits ${code}, resumes whole`,
      async () => {
        const dir = tempDir()
        const input = Path.join(dir, "in.jsonl")
        const output = Path.join(dir, "out.jsonl")
        const ids = distinctInput(input, ROWS)
        const args = argsFor(input, output)
        const run = await startRun(args, output, 60)
        try {
          const standIns = standInsPid(run.output.stdout)
          expect(standIns).toBeTypeOf("number")
          const pid = run.child.pid!
          process.kill(toGroup ? -pid : pid, signal)
          await waitFor("the CLI to exit", run.hasExited, 20_000)
          const exit = await run.exited
          expect(exit, run.output.stderr).toEqual({ code, signal: null })
          const summary = run.output.stderr.split("\n").filter((line) => line.startsWith("interrupted:"))
          expect(summary.length, run.output.stderr).toBe(1)
          expect(summary[0]).toMatch(
            new RegExp(`^interrupted: [\\d,]+ results written to ${output} in this run, [\\d,]+ in all of 600 rows`)
          )
          expect(summary[0]).toMatch(/run the same command again to resume$/)
          // no stack trace, no log record: the summary is the whole report
          expect(run.output.stderr + run.output.stdout).not.toMatch(/^\s+at /m)
          await waitFor("the stand-ins' process to exit", () => !isAlive(standIns!), 10_000)
          const written = lineCount(output)
          expect(written).toBeLessThan(ROWS)
          // every line whole: the stop waited for the writer
          expect(Fs.readFileSync(output, "utf8").endsWith("\n")).toBe(true)
          await expectResumesWhole(args, output, ids)
        } finally {
          killGroup(run)
        }
      },
      120_000
    )
  }

  it("a second Ctrl-C ends the process at once, and the run still resumes whole", async () => {
    const dir = tempDir()
    const input = Path.join(dir, "in.jsonl")
    const output = Path.join(dir, "out.jsonl")
    const ids = distinctInput(input, ROWS)
    // photon never answers: the first stop waits out its grace for those lookups
    const args = argsFor(input, output, ["--hang", "photon=1"])
    const run = await startRun(args, output, 30)
    try {
      const standIns = standInsPid(run.output.stdout)
      const pid = run.child.pid!
      process.kill(-pid, "SIGINT")
      // the first signal handled: the CLI no longer catches SIGINT, and Node's default applies
      await waitFor("the CLI to let SIGINT go", () => run.hasExited() || !catches(pid, 2), 10_000)
      expect(run.hasExited()).toBe(false)
      process.kill(-pid, "SIGINT")
      await waitFor("the CLI to exit", run.hasExited, 10_000)
      expect(await run.exited).toEqual({ code: null, signal: "SIGINT" })
      // its channel closed with it: the stand-ins' process exits too
      await waitFor("the stand-ins' process to exit", () => !isAlive(standIns!), 10_000)
      await expectResumesWhole(argsFor(input, output), output, ids)
    } finally {
      killGroup(run)
    }
  }, 120_000)
})
