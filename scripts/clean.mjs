// Removes build output and incremental type-check state from every workspace package.
import { readdirSync, rmSync } from "node:fs"
import { join } from "node:path"

const roots = ["packages", "examples"].flatMap((dir) => readdirSync(dir).map((name) => join(dir, name)))
for (const pkg of [...roots, "bench", "test-utils"]) {
  for (const out of ["build", ".tsbuildinfo"]) rmSync(join(pkg, out), { recursive: true, force: true })
}
