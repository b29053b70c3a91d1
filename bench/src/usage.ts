/**
 * `pnpm bench usage`: usage-based limits end to end. The LLM batch example (`examples/llm-batch`)
 * runs as a user runs it, its stand-in OpenAI in a process of its own enforcing requests and tokens
 * per window on the actual usage, and its `--json` figures give, per run:
 *
 * - the achieved share of the binding dimension over the run (target ≥ 97 %);
 * - the stand-in's busiest window per dimension against its limit + burst (server side);
 * - 429s (target 0), the estimate error, and the calls whose usage passed their estimate.
 *
 * Three runs: the defaults (estimate = prompt tokens + max_tokens, which never falls short); the
 * estimates that fall short (`--expected-completion 60`: the debt later callers pay); and too many
 * permits (`--permits 8`, an illustration: reservations queued in the limiter hold estimates whose
 * unused part cannot come back while later starts are booked). The cost of a reserve + settle
 * against a plain take is `pnpm bench reserve`.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { machineLine, markdownTable, textTable, writeSection } from "./lib/report.js"

const exampleDir = Path.resolve(process.cwd(), "..", "examples", "llm-batch")
if (!Fs.existsSync(Path.join(exampleDir, "src", "main.ts"))) {
  throw new Error(`the llm-batch example is not at ${exampleDir}: run this suite from bench/`)
}

/** What a `--json` run prints last (examples/llm-batch/src/Report.ts, `Figures`). */
interface Dimension {
  readonly name: "requests" | "tokens"
  readonly quota: number
  readonly burst: number
  readonly share: number
  readonly server: { readonly busiest: number; readonly rateLimited: number } | undefined
}
interface Figures {
  readonly windowMillis: number
  readonly calls: number
  readonly failed: number
  readonly elapsedMillis: number
  readonly dimensions: ReadonlyArray<Dimension>
  readonly estimate: { readonly error: number; readonly short: number; readonly shortfall: number }
  readonly tooManyRequests: number
  readonly binding: { readonly dimension: "requests" | "tokens"; readonly reason: string }
}

const runCli = (args: ReadonlyArray<string>): Promise<Figures> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", ...args, "--json"], {
      cwd: exampleDir,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`llm-batch ${args.join(" ")} exited ${code}: ${stderr.slice(-2000)}`))
      const last = stdout.trim().split("\n").pop() ?? ""
      resolve((JSON.parse(last) as { readonly figures: Figures }).figures)
    })
  })

const runs: ReadonlyArray<{ readonly label: string; readonly args: ReadonlyArray<string>; readonly held: boolean }> = [
  { label: "defaults (estimate = prompt + max_tokens)", args: [], held: true },
  { label: "estimates that fall short (--expected-completion 60)", args: ["--expected-completion", "60"], held: true },
  { label: "too many permits (--permits 8), illustration", args: ["--permits", "8"], held: false }
]

const percent = (x: number) => `${(x * 100).toFixed(1)} %`
const n = (x: number) => Math.round(x).toLocaleString("en-US")

const loadAtStart = Os.loadavg()[0]
const results: Array<{ readonly label: string; readonly held: boolean; readonly figures: Figures }> = []
for (const run of runs) {
  console.log(`running: ${run.label}`)
  results.push({ label: run.label, held: run.held, figures: await runCli(run.args) })
}

const dimension = (f: Figures, name: "requests" | "tokens") => f.dimensions.find((d) => d.name === name)
const serverCell = (d: Dimension | undefined) =>
  d?.server === undefined ? "-" : `${n(d.server.busiest)} / ${n(d.quota + d.burst)}`
const header = [
  "run",
  "time",
  "binding",
  "binding share",
  "requests share",
  "tokens share",
  "server busiest requests / limit+burst",
  "server busiest tokens / limit+burst",
  "429s",
  "estimate error",
  "calls over estimate (tokens)"
]
const cells = results.map(({ figures: f, label }) => [
  label,
  `${(f.elapsedMillis / 1000).toFixed(1)} s`,
  f.binding.dimension,
  percent(dimension(f, f.binding.dimension)?.share ?? 0),
  percent(dimension(f, "requests")?.share ?? 0),
  percent(dimension(f, "tokens")?.share ?? 0),
  serverCell(dimension(f, "requests")),
  serverCell(dimension(f, "tokens")),
  n(f.tooManyRequests),
  percent(f.estimate.error),
  `${n(f.estimate.short)} (${n(f.estimate.shortfall)})`
])
console.log(`\n${textTable(header, cells)}`)

const held = results.filter((r) => r.held)
const verdict = (ok: boolean) => (ok ? "met" : "NOT met")
const worstShare = Math.min(...held.map((r) => dimension(r.figures, r.figures.binding.dimension)?.share ?? 0))
const all429 = held.reduce((sum, r) => sum + r.figures.tooManyRequests, 0)
const targets = [
  `- target: the binding dimension's achieved share ≥ 97 % — ${verdict(worstShare >= 0.97)}: ${
    percent(worstShare)
  } at worst over the held runs`,
  `- target: 0 429s — ${verdict(all429 === 0)}: ${all429} over the held runs`
]
for (const line of targets) console.log(line)

writeSection(
  "Usage-based limits",
  [
    `Measured by \`pnpm bench usage\` on ${machineLine()}; 1-minute load average ${
      loadAtStart.toFixed(2)
    } when it started.`,
    "",
    "Method: the LLM batch example (`examples/llm-batch`, `--json`) through tsx, as the README runs it: 120 " +
    "prompts of the built-in sample through `@effect/ai-openai` over the provider's HttpClient, against its " +
    "stand-in OpenAI in a child process, which enforces 60 requests and 12,000 tokens per 10 s window (a " +
    "minute's quotas scaled down) on the actual usage (prompt + completion tokens, completions of random " +
    "length) and sends OpenAI's rate-limit headers. The client's limiter has the dimensions `requests` and " +
    "`tokens`, reserves each call's estimate and settles `usage.total_tokens` inside the permit. Achieved share: " +
    "(units − burst) ÷ run time, per window, ÷ quota: the rate a limiter that is never idle reaches. Server " +
    "busiest: the most the stand-in counted in any window, by arrival. Estimate error: (reserved − actual) ÷ " +
    "actual. Each run measured once.",
    "",
    markdownTable(header, cells),
    "",
    ...targets
  ].join("\n")
)
