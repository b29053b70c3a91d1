/**
 * `pnpm bench effect4`: the same workloads on the Effect 3 line (effect 3, sluice 0.x) and the
 * Effect 4 line (effect 4, sluice 2.x), in one run, both under Node 22 so that only the line
 * differs. Each line's half is bundled on its own (its `effect` resolved from its own workspace)
 * and every workload runs in a fresh child process, five rounds, the median kept.
 *
 * The workloads (`lib/lineWorkloads.ts`): a free permit taken one call after another; 64 callers
 * on 16 permits; 4,000 fibers submitted at once (Effect 3's Semaphore wakes every waiter on a
 * release, so a larger fan-out would time its quadratic cost alone). Each beside the same line's `Semaphore`.
 */
import { build } from "esbuild"
import { execFileSync, spawnSync } from "node:child_process"
import { join, resolve } from "node:path"
import { PRECISION, type WorkloadName, workloadNames } from "./lib/lineWorkloads.js"
import { formatNs, formatRatio, machineLine, markdownTable, median, textTable, writeSection } from "./lib/report.js"

const ROUNDS = 5
// scripts/bench.mjs runs every suite from bench/
const root = resolve(process.cwd(), "..")

/** Workspace packages inlined from source, everything else resolved beside the bundle. */
const bundle = async (entry: string, outfile: string): Promise<string> => {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    logLevel: "warning",
    plugins: [{
      name: "external-peers",
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith("@sluice/") ? undefined : { external: true }))
      }
    }]
  })
  return outfile
}

const node22 = join(execFileSync("bash", [join(root, "scripts", "node22.sh")], { encoding: "utf8" }).trim(), "node")
const nodeVersion = execFileSync(node22, ["--version"], { encoding: "utf8" }).trim()

// each bundle sits in its own workspace, so that `effect` resolves to that line's
const lines = {
  "Effect 3": await bundle(join(root, "bench/src/lib/linesEffect3.ts"), join(root, "bench/build/lines-effect3.mjs")),
  "Effect 4": await bundle(
    join(root, "effect4/bench/src/lines.ts"),
    join(root, "effect4/bench/build/lines-effect4.mjs")
  )
}
type LineName = keyof typeof lines

const measure = (line: LineName, name: WorkloadName): number => {
  const child = spawnSync(
    node22,
    ["--max-old-space-size=16384", lines[line], "--workload", name, String(ROUNDS)],
    { encoding: "utf8", maxBuffer: 1 << 20 }
  )
  if (child.status !== 0) throw new Error(`${line} ${name} failed:\n${child.stderr}`)
  const { times } = JSON.parse(child.stdout.trim().split("\n").pop() ?? "") as { times: Array<number> }
  const ns = median(times)
  process.stderr.write(`  ${line} ${name}: ${formatNs(ns)}/call\n`)
  return ns
}

const figures = new Map<string, number>()
for (const name of workloadNames) {
  for (const line of Object.keys(lines) as Array<LineName>) figures.set(`${line} ${name}`, measure(line, name))
}
const get = (line: LineName, name: WorkloadName) => figures.get(`${line} ${name}`)!

const groups = [...new Set(workloadNames.filter((n) => n.endsWith("/sluice")).map((n) => n.split("/")[0]!))]
const header = [
  "workload",
  "sluice, Effect 3",
  "sluice, Effect 4",
  "Effect 4 / Effect 3",
  "Semaphore, Effect 3",
  "Semaphore, Effect 4",
  "sluice / Semaphore, Effect 4"
]
const rows = groups.map((group) => {
  const s3 = get("Effect 3", `${group}/sluice` as WorkloadName)
  const s4 = get("Effect 4", `${group}/sluice` as WorkloadName)
  const m3 = get("Effect 3", `${group}/effect-semaphore` as WorkloadName)
  const m4 = get("Effect 4", `${group}/effect-semaphore` as WorkloadName)
  return [group, formatNs(s3), formatNs(s4), formatRatio(s4 / s3), formatNs(m3), formatNs(m4), formatRatio(s4 / m4)]
})

const providerHeader = ["provider.call, one after another", "Effect 3", "Effect 4", "Effect 4 / Effect 3"]
const providerRows = [
  ["a bulkhead only", "provider/provider-bulkhead"],
  ["all features (limiter, budgets, retries, breaker), none binding", "provider/provider-all"]
].map(([label, name]) => {
  const p3 = get("Effect 3", name as WorkloadName)
  const p4 = get("Effect 4", name as WorkloadName)
  return [label!, formatNs(p3), formatNs(p4), formatRatio(p4 / p3)]
})

interface Precision {
  readonly worst1s: number
  readonly worst10ms: number
  readonly achievedPerSecond: number
  readonly completed: number
}
const PRECISION_RUNS = 3
/** `PRECISION_RUNS` runs of one limiter, each in a fresh process; the medians. */
const precision = (line: LineName, limiter: string): Precision => {
  const runs = Array.from({ length: PRECISION_RUNS }, () => {
    const child = spawnSync(node22, [lines[line], "--precision", limiter], { encoding: "utf8", maxBuffer: 1 << 20 })
    if (child.status !== 0) throw new Error(`${line} ${limiter} precision failed:\n${child.stderr}`)
    return JSON.parse(child.stdout.trim().split("\n").pop() ?? "") as Precision
  })
  const of = (f: (p: Precision) => number) => median(runs.map(f))
  const result = {
    worst1s: of((p) => p.worst1s),
    worst10ms: of((p) => p.worst10ms),
    achievedPerSecond: of((p) => p.achievedPerSecond),
    completed: of((p) => p.completed)
  }
  process.stderr.write(`  ${line} ${limiter}: worst 1 s ${result.worst1s}, worst 10 ms ${result.worst10ms}\n`)
  return result
}
const limiterRows: Array<[string, LineName, string]> = [
  ["sluice, Effect 3", "Effect 3", "sluice"],
  ["sluice, Effect 4", "Effect 4", "sluice"],
  ["Effect 4's RateLimiter (token bucket, memory)", "Effect 4", "effect-ratelimiter"]
]
const precisionHeader = ["limiter", "starts", "achieved /s", "worst 1 s", "worst 10 ms"]
const precisionRows = limiterRows.map(([label, line, limiter]) => {
  const p = precision(line, limiter)
  return [label, String(p.completed), p.achievedPerSecond.toFixed(1), String(p.worst1s), String(p.worst10ms)]
})

console.log(textTable(header, rows))
console.log(textTable(providerHeader, providerRows))
console.log(textTable(precisionHeader, precisionRows))
writeSection(
  "Effect 3 and Effect 4",
  [
    `${
      machineLine().replace(/^Node [^,]+/, `Node ${nodeVersion} for both lines`)
    }; ${ROUNDS} rounds per figure, median,`,
    "each in a fresh process (`pnpm bench effect4`). Cost per guarded call: a free permit taken one call",
    "after another (uncontended); 64 callers on 16 permits, each yielding once while it holds one",
    "(in-flight-64); 4,000 fibers submitted at once on 16 permits (fan-out). A ratio below 1 means",
    "the first column is faster. Effect 4's `Semaphore` is first-fit, not FIFO",
    "([comparison](../docs/guides/comparison.md)).",
    "",
    markdownTable(header, rows),
    "",
    "### Provider",
    "",
    "`provider.call(Effect.succeed(1))`, 20,000 calls one after another, 16 permits, on each line.",
    "",
    markdownTable(providerHeader, providerRows),
    "",
    `### Limiter precision`,
    "",
    `${PRECISION.takers.toLocaleString("en-US")} takers submitted at once on ${
      PRECISION.limit.toLocaleString("en-US")
    } starts a second (sluice: GCRA, burst ${PRECISION.burst};`,
    "Effect's token bucket has no burst apart from its limit), real clock, the most starts in any",
    `sliding 1 s and 10 ms window of their instants; median of ${PRECISION_RUNS} runs, each in a fresh process.`,
    `An upstream counting per second allows ${
      PRECISION.limit + PRECISION.burst
    } in 1 s (sluice's bound: limit + burst) and`,
    `${(PRECISION.limit * 10) / 1000 + PRECISION.burst} in 10 ms (its even share plus the burst).`,
    "",
    markdownTable(precisionHeader, precisionRows)
  ].join("\n")
)
