/**
 * The stand-ins' process never outlives the CLI: the CLI is killed with SIGKILL at random instants
 * of its start-up (before it starts its stand-ins' process, and while that process loads its
 * modules and the gazetteer, before it listens), and after each kill no process of that run is
 * left. The CLI's processes are found by a marker in their environment, which the stand-ins inherit.
 */
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import { expect, it } from "vitest"
import { ROLE_VARIABLE } from "../stand-ins/Child.js"
import { sleep, spawnCli, track, waitFor } from "./utils.js"

const MARKER = "SLUICE_GEOCODING_TEST_RUN"
/** Kills before the stand-ins' process appears, then kills while it loads, at a random instant each. */
const EARLY_KILLS = 2
const LOADING_KILLS = 4
const EARLY_WINDOW_MILLIS = 3_000
const LOADING_WINDOW_MILLIS = 2_000

/** The pids of the stand-ins' processes whose environment carries `MARKER=run` (Linux: /proc/PID/environ). */
const standInsOf = (run: string): ReadonlyArray<number> =>
  Fs.readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).filter((pid) => {
    try {
      const environ = Fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")
      return environ.includes(`${MARKER}=${run}`) && environ.some((entry) => entry.startsWith(`${ROLE_VARIABLE}=`))
    } catch {
      return false // gone, or not ours to read
    }
  }).map(Number)

it("leaves no stand-ins' process after a kill -9 of the CLI at any instant of its start-up", async () => {
  const left: Array<string> = []
  try {
    for (let i = 0; i < EARLY_KILLS + LOADING_KILLS; i++) {
      const run = randomUUID()
      left.push(run)
      const cli = track(spawnCli(["run", "--rows", "200", "--no-progress"], { env: { [MARKER]: run } }))
      let phase = "after its start"
      if (i >= EARLY_KILLS) {
        await waitFor("the stand-ins' process to start", () => standInsOf(run).length > 0 || cli.hasExited(), 60_000)
        phase = "after its stand-ins' process started"
      }
      const at = Math.random() * (i < EARLY_KILLS ? EARLY_WINDOW_MILLIS : LOADING_WINDOW_MILLIS)
      await sleep(at)
      cli.child.kill("SIGKILL")
      await cli.exited
      await waitFor(
        `the stand-ins' process of a CLI killed ${Math.round(at)} ms ${phase} to exit`,
        () => standInsOf(run).length === 0,
        10_000
      )
    }
  } finally {
    for (const run of left) for (const pid of standInsOf(run)) process.kill(pid, "SIGKILL")
  }
  expect(left.every((run) => standInsOf(run).length === 0)).toBe(true)
}, 180_000)
