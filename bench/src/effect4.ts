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
import { type WorkloadName, workloadNames } from "./lib/lineWorkloads.js"
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

const groups = [...new Set(workloadNames.map((n) => n.split("/")[0]!))]
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

console.log(textTable(header, rows))
writeSection(
  "Effect 3 and Effect 4",
  [
    `${machineLine().replace(/^Node [^,]+/, `Node ${nodeVersion} for both lines`)}; ${ROUNDS} rounds per figure, median,`,
    "each in a fresh process (`pnpm bench effect4`). Cost per guarded call: a free permit taken one call",
    "after another (uncontended); 64 callers on 16 permits, each yielding once while it holds one",
    "(in-flight-64); 4,000 fibers submitted at once on 16 permits (fan-out). A ratio below 1 means",
    "the first column is faster. Effect 4's `Semaphore` is first-fit, not FIFO",
    "([comparison](../docs/guides/comparison.md)).",
    "",
    markdownTable(header, rows)
  ].join("\n")
)
