#!/usr/bin/env bash
# Everything the tests need, then every check: the README's test command and what CI runs.
#   install (frozen lockfile, redis-server, chromium) → index.ts drift → type-check → doc examples → lint → build → all tests;
#   the Effect 4 workspace (effect4/) is installed, type-checked and tested on Node 22 after the root's
set -euo pipefail
cd "$(dirname "$0")/.."
pnpm() { bash scripts/pnpm.sh "$@"; }

step() { printf '\n== %s ==\n' "$*"; }
# the Effect 4 line's steps run on Node >= 22.19, first on PATH for those commands only
# (scripts/node22.sh); each prints its own time
with22() { PATH="$node22:$PATH" "$@"; }
timed() { local t=$SECONDS; "$@"; echo "  ($((SECONDS - t)) s)"; }

step "install"
pnpm install --frozen-lockfile

step "node 22 for the Effect 4 line (the machine's node is $(node --version))"
t=$SECONDS
node22=$(bash scripts/node22.sh)
with22 node --version
echo "  ($((SECONDS - t)) s)"

step "install the Effect 4 workspace (effect4/, Node 22)"
timed with22 pnpm -C effect4 install --frozen-lockfile
# core/ is a member of both workspaces: both must link this folder, and neither may give it a
# node_modules of its own (it has no dependencies)
linked=$(with22 pnpm -C effect4 ls @sluice/core --parseable | tail -n 1)
if [ "$linked" != "$(pwd -P)/core" ] || [ -e core/node_modules ]; then
  echo "effect4 links @sluice/core to '$linked' (expected $(pwd -P)/core), or core/node_modules exists" >&2
  exit 1
fi
echo "  effect4 links @sluice/core to $linked"
# only the root's changesets version the core
if grep -lE "^[\"']?@sluice/core[\"']?[[:space:]]*:" effect4/.changeset/*.md 2>/dev/null | grep -v README.md; then
  echo "the changesets above are under effect4/.changeset/ and name @sluice/core: version it from the root's .changeset/" >&2
  exit 1
fi
# while the 2.x packages are at 2.0.0-beta.N (RFC 0003 step 13): pre mode with tag beta, so that
# `changeset version` gives 2.0.0-beta.N+1, and a changeset naming each package (one without is
# left out of the beta); no network
node --input-type=module - <<'NODE'
import { existsSync, readdirSync, readFileSync } from "node:fs"
const dir = "effect4/.changeset"
const packages = readdirSync("effect4/packages")
  .filter((name) => existsSync(`effect4/packages/${name}/package.json`))
  .map((name) => JSON.parse(readFileSync(`effect4/packages/${name}/package.json`, "utf8")))
  .filter((pkg) => !pkg.private)
const beta = packages.filter((pkg) => /^2\.0\.0-beta\.\d+$/.test(pkg.version))
if (beta.length === 0) {
  console.log(`  effect4/.changeset: no 2.x package is at 2.0.0-beta.N, no pre mode needed`)
  process.exit(0)
}
const problems = []
if (beta.length !== packages.length) {
  const others = packages.filter((pkg) => !beta.includes(pkg)).map((pkg) => `${pkg.name}@${pkg.version}`)
  problems.push(`${beta.length} of ${packages.length} 2.x packages are at 2.0.0-beta.N, not ${others.join(", ")}`)
}
const pre = existsSync(`${dir}/pre.json`) ? JSON.parse(readFileSync(`${dir}/pre.json`, "utf8")) : undefined
if (pre === undefined) {
  problems.push(`${dir}/pre.json is missing: run \`changeset pre enter beta\` in effect4/`)
} else if (pre.mode !== "pre" || pre.tag !== "beta") {
  problems.push(`${dir}/pre.json has mode ${pre.mode} and tag ${pre.tag}, the beta needs mode pre and tag beta`)
}
const named = new Set()
for (const file of readdirSync(dir).filter((file) => file.endsWith(".md") && file !== "README.md")) {
  const front = readFileSync(`${dir}/${file}`, "utf8").split(/^---[ \t]*$/m)[1] ?? ""
  for (const match of front.matchAll(/^[ \t]*["']?([^"':\s]+)["']?[ \t]*:/gm)) named.add(match[1])
}
for (const pkg of packages) {
  if (!named.has(pkg.name)) problems.push(`${pkg.name} (${pkg.version}) is named by no changeset in ${dir}/`)
}
if (problems.length > 0) {
  for (const problem of problems) console.error(problem)
  process.exit(1)
}
console.log(`  effect4/.changeset: pre mode, tag beta; a changeset names each of the ${packages.length} 2.x packages`)
NODE

# The Redis store's tests start their own redis-server on a free loopback port (see
# packages/rate-limiter-redis/vitest.config.ts); a missing server is a failure, never a skip.
step "redis-server"
if ! command -v redis-server >/dev/null 2>&1; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
fi
redis-server --version

# The report's browser test (packages/report/test/browser.test.ts) drives Debian's chromium
# headless; a missing browser is a failure, never a skip.
step "chromium"
if ! command -v chromium >/dev/null 2>&1; then
  as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
chromium --version

step "generated src/index.ts is up to date"
pnpm run codegen:check

step "generated src/index.ts of the Effect 4 line is up to date"
for package in effect4/packages/*/; do (cd "$package" && node ../../../scripts/codegen.mjs); done
git diff --exit-code -- "effect4/packages/*/src/index.ts"

step "type-check"
pnpm run check

step "type-check the Effect 4 workspace (Node 22)"
timed with22 pnpm -C effect4 run check

step "code examples in docs/ and the READMEs type-check"
pnpm run check:docs

step "code examples in the Effect 4 line's READMEs type-check (Node 22)"
timed with22 pnpm -C effect4 run check:docs

step "lint and format"
pnpm run lint

step "build (ESM + .d.ts)"
pnpm run build

# What is published is the build: pack it, install it with npm in a scratch app under /tmp,
# compile that app with a strict tsc and run it with node (scripts/consumer-test.sh).
step "consumer test"
bash scripts/consumer-test.sh

# The 2.x line the same way, on Node 22: its tarballs beside effect 4.1 (scripts/consumer-test-effect4.sh).
step "consumer test of the Effect 4 line (Node 22)"
timed with22 bash scripts/consumer-test-effect4.sh

step "tests"
pnpm run test

step "tests of the Effect 4 workspace, the core's included (Node 22, vitest 5)"
timed with22 pnpm -C effect4 run test
