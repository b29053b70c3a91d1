/**
 * Node child processes for the multi-process tests: each gets its options as one JSON argument,
 * talks in lines over stdin/stdout, and is killed with the scope.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import { pathToFileURL } from "node:url"

const packageDir = path.join(import.meta.dirname, "..")
/** The root workspace's tsx, which both lines' fixtures run on. */
const tsx = path.join(packageDir, "..", "..", "..", "node_modules", "tsx", "dist", "esm", "index.mjs")

export interface Child {
  readonly lines: Array<string>
  readonly nextLine: (timeoutMillis: number) => Promise<string>
  readonly send: (line: string) => void
}

/**
 * A child process running `script` (TypeScript, through tsx) with `options` as its JSON argument,
 * from `cwd` (default this package: the Effect 3 line's fixtures run from their own), killed with
 * the scope whatever happens.
 */
export const childProcess = (script: string, options: unknown, cwd: string = packageDir) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const proc = spawn(process.execPath, ["--import", pathToFileURL(tsx).href, script, JSON.stringify(options)], {
        cwd,
        stdio: ["pipe", "pipe", "pipe"]
      })
      const lines: Array<string> = []
      const waiting: Array<(line: string) => void> = []
      let stderr = ""
      proc.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
      })
      readline.createInterface({ input: proc.stdout }).on("line", (line) => {
        const waiter = waiting.shift()
        if (waiter !== undefined) waiter(line)
        else lines.push(line)
      })
      const handle: Child = {
        lines,
        nextLine: (timeoutMillis) =>
          new Promise<string>((resolve, reject) => {
            const queued = lines.shift()
            if (queued !== undefined) return resolve(queued)
            const timer = setTimeout(
              () => reject(new Error(`child sent nothing within ${timeoutMillis} ms; stderr: ${stderr}`)),
              timeoutMillis
            )
            waiting.push((line) => {
              clearTimeout(timer)
              resolve(line)
            })
          }),
        send: (line) => proc.stdin.write(`${line}\n`)
      }
      return { proc, handle }
    }),
    ({ proc }) => Effect.sync(() => proc.exitCode === null && proc.kill("SIGKILL"))
  ).pipe(Effect.map(({ handle }) => handle))
