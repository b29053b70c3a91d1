// Runs one benchmark suite (or all of them) from bench/src/<suite>.ts, each in a fresh Node process
// so that one suite's heap and JIT state never colour another's figures.
//
// The suite is first bundled with esbuild, the workspace packages inlined as plain JavaScript and
// every other package left to Node. Running the TypeScript through tsx instead would wrap each
// closure of ours in esbuild's `__name` helper (a defineProperty per closure created), a cost our
// users never pay and Effect's prebuilt dist never pays either: it made sluice look 2x slower.
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const suitesDir = join(root, "bench", "src")
const outDir = join(root, "bench", "build")
const available = readdirSync(suitesDir)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => f.slice(0, -3))
  .sort()

// a suite is named by its file (redisBulkhead) or in kebab case (redis-bulkhead)
const requested = process.argv.slice(2).map((s) => s.replace(/-([a-z])/g, (_, c) => c.toUpperCase()))
const unknown = requested.filter((s) => !available.includes(s))
if (unknown.length > 0) {
  console.error(`unknown bench suite(s): ${unknown.join(", ")}; available: ${available.join(", ")}`)
  process.exit(2)
}
const suites = requested.length > 0 ? requested : available

/** Workspace packages are bundled from source; everything else is imported from node_modules. */
const externalPeers = {
  name: "external-peers",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith("@sluice/") ? undefined : { external: true }))
  }
}

for (const suite of suites) {
  console.log(`\n== bench ${suite} ==`)
  const outfile = join(outDir, `${suite}.mjs`)
  await build({
    entryPoints: [join(suitesDir, `${suite}.ts`)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    keepNames: false,
    sourcemap: "linked",
    logLevel: "warning",
    plugins: [externalPeers]
  })
  const result = spawnSync(process.execPath, ["--expose-gc", "--enable-source-maps", outfile], {
    cwd: join(root, "bench"),
    stdio: "inherit",
    env: { ...process.env, SLUICE_BENCH_RESULTS: join(root, "bench", "RESULTS.md") }
  })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
