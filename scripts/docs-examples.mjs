// Extracts every ```ts block of docs/**/*.md and of the READMEs into docs/build/examples/, one module
// per block, so that `tsc -p docs` type-checks each example exactly as a reader would paste it.
// A block whose first line is `// not type-checked` is skipped (for fragments, on purpose).
// With `--tree effect4`: the READMEs of effect4/packages/* and effect4/examples/* into
// effect4/docs/build/examples/, checked by `tsc -p effect4/docs` against the Effect 4 line.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const repository = join(dirname(fileURLToPath(import.meta.url)), "..")
const tree = process.argv.includes("--tree") ? process.argv[process.argv.indexOf("--tree") + 1] : undefined
if (tree !== undefined && tree !== "effect4") throw new Error(`unknown --tree ${tree}: only effect4`)
const root = tree === undefined ? repository : join(repository, tree)
const out = join(root, "docs", "build", "examples")

const markdown = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === "node_modules" || name.startsWith(".")) return []
    return statSync(path).isDirectory() ? markdown(path) : name.endsWith(".md") ? [path] : []
  })

const sources = [
  ...(tree === undefined ? [join(root, "README.md")] : []),
  ...["packages", "examples"].flatMap((dir) =>
    readdirSync(join(root, dir)).map((pkg) => join(root, dir, pkg, "README.md"))
  ),
  ...(tree === undefined ? markdown(join(root, "docs")) : [])
].filter((path) => {
  try {
    return statSync(path).isFile()
  } catch {
    return false
  }
})

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
let count = 0
for (const source of sources) {
  const text = readFileSync(source, "utf8")
  const blocks = [...text.matchAll(/^```ts\n([\s\S]*?)^```/gm)]
  blocks.forEach((match, i) => {
    const code = match[1]
    if (code.startsWith("// not type-checked")) return
    const line = text.slice(0, match.index).split("\n").length
    const name = `${relative(root, source).replace(/[/.]/g, "_")}_${i + 1}.ts`
    writeFileSync(join(out, name), `// ${relative(root, source)}:${line}\nexport {}\n${code}`)
    count++
  })
}
console.log(`extracted ${count} examples from ${sources.length} markdown files into ${relative(repository, out)}`)
