import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Offline from "../harness/Offline.js"
import type * as Run from "../src/Run.js"
import type * as Child from "../stand-ins/Child.js"

export const exampleDir = Path.join(import.meta.dirname, "..")

export const tempDir = () => Fs.mkdtempSync(Path.join(Os.tmpdir(), "sluice-geocoding-"))

export const baseConfig = (overrides: Partial<Offline.Config> = {}): Offline.Config => ({
  providers: ["opencage", "photon", "nominatim"],
  rates: {},
  latencies: {},
  permits: {},
  urls: {},
  faults: {},
  periodQuotas: {},
  quotaPeriod: "1 day",
  // 10 %, not the CLI's 2 %: here the stand-ins share one event loop with the client, and the
  // other test files run beside this one on the same cores. A stall of that loop delays reading
  // what was sent before it, and a window's arrivals then hold rate × stall more (2 spare arrivals
  // at 98/s of a 100/s quota cover 20 ms; 11 at 90/s cover 122 ms). The bench measures the 429s of
  // the default margin (bench/RESULTS.md, "Geocoding").
  margin: 0.1,
  bursts: {},
  headroom: 2,
  contact: "tests@example.com",
  apiKey: undefined,
  redis: undefined,
  seed: 42,
  ...overrides
})

export const runInProcess = (config: Offline.Config, batch: Partial<Run.BatchConfig> & { readonly output: string }) =>
  Offline.run(config, {
    input: undefined,
    rows: 1_000,
    fresh: true,
    workers: undefined,
    cache: 10_000,
    progress: false,
    progressEvery: 5,
    ...batch
  }, { json: true, quiet: true }).pipe(Effect.provide(NodeContext.layer), Effect.runPromise)

/** The CLI's entry through tsx: what `run` starts its stand-ins' process from. */
export const testEntry: Child.Entry = {
  file: Path.join(exampleDir, "harness", "main.ts"),
  execArgv: ["--import", "tsx"]
}

/** Whether a process is still running (signal 0 checks without sending anything). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * The CLI in a child process, through tsx, as a user runs it. `detached`: in a process group of its
 * own, as a shell starts a job, so that a signal to the group (`process.kill(-pid)`) is what a
 * Ctrl-C at a terminal sends.
 */
export const spawnCli = (
  args: ReadonlyArray<string>,
  options: { readonly detached?: boolean; readonly env?: NodeJS.ProcessEnv } = {}
): ChildProcess =>
  spawn(process.execPath, ["--import", "tsx", "harness/main.ts", ...args], {
    cwd: exampleDir,
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false,
    env: { ...process.env, ...options.env }
  })

/** Polls `condition` every 50 ms until it holds; fails, saying what it waited for, after `timeoutMillis`. */
export const waitFor = async (what: string, condition: () => boolean, timeoutMillis = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMillis
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMillis / 1000} s for ${what}`)
    await sleep(50)
  }
}

/** The stand-ins' process, as the CLI names it in its introduction. */
export const standInsPid = (stdout: string): number | undefined => {
  const match = /stand-in \(process (\d+)\)/.exec(stdout)
  return match === null ? undefined : Number(match[1])
}

/** The ids of an output file, in order, and their statuses. */
export const readOutput = (path: string): ReadonlyArray<{ readonly id: string; readonly status: string }> =>
  Fs.readFileSync(path, "utf8").split("\n").filter((line) => line !== "").map((line) =>
    JSON.parse(line) as { id: string; status: string }
  )

/** A batch of distinct queries (no answer is shared), `rows` long, as JSONL. */
export const distinctInput = (path: string, rows: number): ReadonlyArray<string> => {
  const ids = Array.from({ length: rows }, (_, i) => `r${i}`)
  Fs.writeFileSync(path, ids.map((id, i) => JSON.stringify({ id, query: `Place ${i}` })).join("\n") + "\n")
  return ids
}

export const collect = (child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk) => (stdout += chunk))
    child.stderr?.on("data", (chunk) => (stderr += chunk))
    child.once("exit", (code) => resolve({ code, stdout, stderr }))
  })

export const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

export const lineCount = (path: string): number =>
  Fs.existsSync(path) ? Fs.readFileSync(path, "utf8").split("\n").filter((line) => line !== "").length : 0

/** The CLI in a child process, run to its end; killed with the scope if it is still running (a failed or interrupted test). */
export const runCliScoped = (args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => spawnCli(args)),
    (child) =>
      Effect.sync(() => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      })
  ).pipe(Effect.flatMap((child) => Effect.promise(() => collect(child))))

/** A running CLI's output so far, and its end: code, or the signal that ended it. */
export interface Tracked {
  readonly child: ChildProcess
  readonly output: { stdout: string; stderr: string }
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly hasExited: () => boolean
}

export const track = (child: ChildProcess): Tracked => {
  const output = { stdout: "", stderr: "" }
  child.stdout?.on("data", (chunk) => (output.stdout += chunk))
  child.stderr?.on("data", (chunk) => (output.stderr += chunk))
  let done = false
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      done = true
      resolve({ code, signal })
    })
  )
  return { child, output, exited, hasExited: () => done }
}

/** The CLI run to its end, killed (and the wait failed) if it has not ended within `timeoutMillis`. */
export const runCli = async (
  args: ReadonlyArray<string>,
  timeoutMillis = 90_000
): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> => {
  const run = track(spawnCli(args))
  try {
    await waitFor(`the CLI (${args.join(" ")}) to exit`, run.hasExited, timeoutMillis)
  } finally {
    if (!run.hasExited()) run.child.kill("SIGKILL")
  }
  const { code } = await run.exited
  return { code, ...run.output }
}

/** `run` on a file, each provider's quota given (requests per second), without progress lines. */
export const runArgs = (
  input: string,
  output: string,
  rates: { readonly opencage: number; readonly photon: number; readonly nominatim: number },
  extra: ReadonlyArray<string> = []
): ReadonlyArray<string> => [
  "run",
  "--input",
  input,
  "--output",
  output,
  ...Object.entries(rates).flatMap(([name, rate]) => ["--rate", `${name}=${rate}`]),
  "--no-progress",
  ...extra
]
