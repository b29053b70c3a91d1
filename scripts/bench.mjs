// Runs one benchmark suite (or all of them) from bench/src/<suite>.ts in a fresh Node process each,
// so that one suite's heap and JIT state never colour another's figures.
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const suitesDir = join(root, "bench", "src")
const available = readdirSync(suitesDir)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => f.slice(0, -3))
  .sort()

const requested = process.argv.slice(2)
const unknown = requested.filter((s) => !available.includes(s))
if (unknown.length > 0) {
  console.error(`unknown bench suite(s): ${unknown.join(", ")}; available: ${available.join(", ")}`)
  process.exit(2)
}
const suites = requested.length > 0 ? requested : available

for (const suite of suites) {
  console.log(`\n== bench ${suite} ==`)
  const tsx = join(root, "node_modules", ".bin", "tsx")
  const result = spawnSync(tsx, [join(suitesDir, `${suite}.ts`)], {
    cwd: join(root, "bench"),
    stdio: "inherit",
    env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --expose-gc`.trim() }
  })
  if (result.status !== 0) process.exit(result.status ?? 1)
}
