// Writes a package's src/index.ts: one `export * as X from "./X.js"` per public module src/X.ts,
// under the module's leading doc comment, in name order. Run from the package's folder
// (`pnpm codegen` runs it in each package); CI fails when the committed index.ts differs.
// Our own, because build-utils' prepare-v3 insists on a `repository` field, which these packages
// have no real value for.
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const src = join(process.cwd(), "src")
const modules = readdirSync(src)
  .filter((name) => name.endsWith(".ts") && name !== "index.ts" && /^[A-Z]/.test(name))
  .sort()

const sections = modules.map((file) => {
  const name = file.slice(0, -".ts".length)
  const doc = /^\s*(\/\*\*[\s\S]*?\*\/)/.exec(readFileSync(join(src, file), "utf8"))
  if (doc === null) throw new Error(`src/${file} has no leading doc comment for src/index.ts`)
  return `${doc[1]}\nexport * as ${name} from "./${name}.js"\n`
})

writeFileSync(join(src, "index.ts"), sections.join("\n"))
