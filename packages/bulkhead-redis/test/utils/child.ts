/** Child processes for the multi-process tests, killed with the scope whatever happens. */
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import type { LaneWorkerOptions } from "../fixtures/laneWorker.js"
import type { WorkerOptions } from "../fixtures/worker.js"

const packageDir = path.join(import.meta.dirname, "..", "..")
const workerScript = path.join(import.meta.dirname, "..", "fixtures", "worker.ts")
const laneWorkerScript = path.join(import.meta.dirname, "..", "fixtures", "laneWorker.ts")

export interface Child {
  readonly proc: ChildProcess
  /**
   * Resolves with the first line (from now on, or already received from line `from` on, default
   * the first) that satisfies `match`.
   */
  readonly lineMatching: (match: (line: string) => boolean, what: string, from?: number) => Effect.Effect<string>
  /** How many lines it has printed so far: a `from` for the reply to a command sent next. */
  readonly received: () => number
  readonly send: (line: string) => Effect.Effect<void>
}

export const worker = (options: WorkerOptions) => spawned(workerScript, options)

/** A child with a bulkhead with lanes (`fixtures/laneWorker.ts`). */
export const laneWorker = (options: LaneWorkerOptions) => spawned(laneWorkerScript, options)

const spawned = (script: string, options: unknown) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const proc = spawn(process.execPath, ["--import", "tsx", script, JSON.stringify(options)], {
        cwd: packageDir,
        stdio: ["pipe", "pipe", "pipe"]
      })
      const lines: Array<string> = []
      const listeners = new Set<() => void>()
      let stderr = ""
      proc.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      readline.createInterface({ input: proc.stdout! }).on("line", (line) => {
        lines.push(line)
        for (const listener of listeners) listener()
      })
      const child: Child = {
        proc,
        received: () => lines.length,
        lineMatching: (match, what, start = 0) =>
          Effect.async<string>((resume) => {
            let from = start
            const check = () => {
              for (; from < lines.length; from++) {
                if (match(lines[from])) {
                  listeners.delete(check)
                  proc.off("exit", check)
                  resume(Effect.succeed(lines[from]))
                  return
                }
              }
              if (proc.exitCode !== null) {
                listeners.delete(check)
                resume(Effect.dieMessage(`the worker exited before ${what}; stderr: ${stderr}`))
              }
            }
            listeners.add(check)
            proc.once("exit", check)
            check()
            return Effect.sync(() => {
              listeners.delete(check)
              proc.off("exit", check)
            })
          }),
        send: (line) => Effect.sync(() => proc.stdin?.write(`${line}\n`))
      }
      return child
    }),
    (child) => Effect.sync(() => child.proc.exitCode === null && child.proc.kill("SIGKILL"))
  )
