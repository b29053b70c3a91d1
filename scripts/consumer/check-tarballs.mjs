// Reads every packed tarball as npm would install it: the manifest must point at built code,
// carry real semver ranges, and the files must be the build, the sources for the maps, README and
// LICENSE, nothing else. Usage: node check-tarballs.mjs DIR [NAMES] (DIR: the `pnpm pack` destination;
// NAMES: the packages expected there, comma-separated without the scope, default the Effect 3 line's).
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: node check-tarballs.mjs <dir with the .tgz files> [names]")
const tarballs = fs.readdirSync(dir).filter((f) => f.endsWith(".tgz")).sort()
const expected = process.argv[3]?.split(",").sort() ?? [
  "bulkhead",
  "bulkhead-redis",
  "core",
  "http",
  "options",
  "provider",
  "rate-limiter",
  "rate-limiter-redis",
  "redis",
  "report"
]
const problems = []
if (tarballs.length !== expected.length) {
  problems.push(`expected ${expected.length} tarballs (${expected.join(", ")}), found ${tarballs.length}: ${tarballs}`)
}

// Every target of an exports map, with the condition path that leads to it.
const targets = (value, at) =>
  typeof value === "string"
    ? [[at, value]]
    : value === null
    ? []
    : Object.entries(value).flatMap(([k, v]) => targets(v, `${at} ${k}`))

for (const tarball of tarballs) {
  const file = path.join(dir, tarball)
  const files = execFileSync("tar", ["-tzf", file], { encoding: "utf8" }).split("\n").filter(Boolean)
    .map((f) => f.replace(/^package\//, ""))
  const manifest = JSON.parse(execFileSync("tar", ["-xzOf", file, "package/package.json"], { encoding: "utf8" }))
  const name = `${manifest.name}@${manifest.version} (${tarball})`
  const before = problems.length
  const fail = (what) => problems.push(`${name}: ${what}`)

  for (const required of ["package.json", "README.md", "LICENSE", "build/esm/index.js", "build/dts/index.d.ts"]) {
    if (!files.includes(required)) fail(`missing ${required}`)
  }
  for (const f of files) {
    const allowed = f === "package.json" || f === "README.md" || f === "LICENSE" || f === "CHANGELOG.md" ||
      /^build\/esm\/.+\.js(\.map)?$/.test(f) || /^build\/dts\/.+\.d\.ts(\.map)?$/.test(f) || /^src\/.+\.ts$/.test(f)
    if (!allowed) fail(`ships ${f} (only build/, src/ for the source maps, README, LICENSE, CHANGELOG)`)
  }
  // each built module has its declarations and its maps, and every map names a source it ships
  for (const f of files.filter((f) => /^build\/esm\/.+\.js$/.test(f))) {
    const stem = f.slice("build/esm/".length, -".js".length)
    for (const sibling of [`${f}.map`, `build/dts/${stem}.d.ts`, `build/dts/${stem}.d.ts.map`, `src/${stem}.ts`]) {
      if (!files.includes(sibling)) fail(`${f} has no ${sibling}`)
    }
  }
  const unpacked = fs.mkdtempSync(path.join(dir, "unpacked-"))
  execFileSync("tar", ["-xzf", file, "-C", unpacked])
  for (const map of files.filter((f) => f.endsWith(".map"))) {
    const { sources } = JSON.parse(fs.readFileSync(path.join(unpacked, "package", map), "utf8"))
    for (const source of sources) {
      const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(map), source))
      if (!resolved.startsWith("src/") || !files.includes(resolved)) {
        fail(`${map} names ${source}, not a shipped src/ file`)
      }
    }
  }
  fs.rmSync(unpacked, { recursive: true, force: true })

  for (const [at, target] of targets(manifest.exports ?? {}, "exports")) {
    if (target === "./package.json") continue
    const ok = at.endsWith(" types")
      ? /^\.\/build\/dts\/.+\.d\.ts$/.test(target)
      : /^\.\/build\/esm\/.+\.js$/.test(target)
    if (!ok) fail(`${at} -> ${target} does not point at build/`)
  }
  const internal = manifest.exports?.["./internal/*"]
  if (internal === undefined || Object.keys(internal ?? {}).join() !== "types") {
    fail(`exports["./internal/*"] must resolve for types only, got ${JSON.stringify(internal)}`)
  }
  if (!/^\.\/build\/esm\/.+\.js$/.test(manifest.main ?? "")) fail(`main is ${manifest.main}`)
  if (!/^\.\/build\/dts\/.+\.d\.ts$/.test(manifest.types ?? "")) fail(`types is ${manifest.types}`)
  for (const field of ["dependencies", "peerDependencies", "optionalDependencies"]) {
    for (const [dep, range] of Object.entries(manifest[field] ?? {})) {
      if (/^(workspace|file|link):/.test(range)) fail(`${field}.${dep} is "${range}", not a registry range`)
    }
  }
  if (manifest.engines?.node === undefined) fail("no engines.node")
  if (manifest.license !== "MIT") fail(`license is ${manifest.license}`)
  if (JSON.stringify(manifest.repository ?? "").includes("example.invalid")) fail("placeholder repository")
  if (problems.length === before) {
    console.log(
      `ok ${name}: ${files.length} files, exports -> build/, peers ${JSON.stringify(manifest.peerDependencies)}`
    )
  }
}

if (problems.length > 0) {
  for (const p of problems) console.error(`FAIL ${p}`)
  process.exit(1)
}
