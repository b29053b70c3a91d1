// Extracts every ```ts block of docs/**/*.md and of the READMEs into docs/build/examples/, one module
// per block, so that `tsc -p docs` type-checks each example exactly as a reader would paste it.
// A block whose first line is `// not type-checked` is skipped (for fragments, on purpose).
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const out = join(root, "docs", "build", "examples")

const markdown = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === "node_modules" || name.startsWith(".")) return []
    return statSync(path).isDirectory() ? markdown(path) : name.endsWith(".md") ? [path] : []
  })

const sources = [
  join(root, "README.md"),
  ...["packages", "examples"].flatMap((dir) =>
    readdirSync(join(root, dir)).map((pkg) => join(root, dir, pkg, "README.md"))
  ),
  ...markdown(join(root, "docs"))
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
console.log(`extracted ${count} examples from ${sources.length} markdown files into docs/build/examples`)
