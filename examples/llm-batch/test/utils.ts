import { type ChildProcess, spawn } from "node:child_process"
import * as Path from "node:path"
import type * as Report from "../src/Report.js"
import type * as Child from "../src/stand-in/Child.js"

export const exampleDir = Path.join(import.meta.dirname, "..")

/** The CLI's entry through tsx: what a run starts its stand-in's process from. */
export const testEntry: Child.Entry = { file: Path.join(exampleDir, "src", "main.ts"), execArgv: ["--import", "tsx"] }

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The CLI in a child process, through tsx, as a user runs it; killed if it has not ended within `timeoutMillis`. */
export const runCli = (args: ReadonlyArray<string>, timeoutMillis = 150_000): Promise<Ran> =>
  new Promise((resolve) => {
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args], {
      cwd: exampleDir,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk) => (stdout += chunk))
    child.stderr?.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMillis)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** The figures a `--json` run prints last. */
export const jsonOf = (ran: Ran) =>
  JSON.parse(ran.stdout.trim().split("\n").pop() ?? "") as {
    readonly figures: Report.Figures
    readonly calls: number
  }

/** A 5 s window (the demo's 10 s halved, the quotas too): 60 prompts fill about two windows of tokens. */
export const QUOTAS = {
  windowMillis: 5_000,
  requests: { limit: 30, burst: 2 },
  tokens: { limit: 6_000, burst: 1_000 }
} as const
export const MAX_TOKENS = 256

export const quotaArgs = (quotas: typeof QUOTAS = QUOTAS) => [
  "--window",
  `${quotas.windowMillis} millis`,
  "--requests",
  String(quotas.requests.limit),
  "--requests-burst",
  String(quotas.requests.burst),
  "--tokens",
  String(quotas.tokens.limit),
  "--tokens-burst",
  String(quotas.tokens.burst),
  "--max-tokens",
  String(MAX_TOKENS)
]
