#!/usr/bin/env bash
# The Effect 4 consumer test: the 2.x line as a user outside this repository gets it, on Node 22
# (run it with Node 22 first on PATH: test-all's with22). Packs every package under
# effect4/packages/ (listed, so a package that lands is packed too) and @sluice/core, checks the
# tarballs hold the build, installs them with plain npm beside effect@4.1.0 and the other peers the
# packed manifests name into a scratch app under /tmp (no workspace links, no tsx), compiles a
# library per package whose declarations must name public modules only, then the app and
# effect4/examples/quickstart with a strict tsc, and runs both with node against a
# redis-server started here. Any failing step fails the script; the scratch folder and the
# redis-server are removed on every exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
pnpm() { bash "$root/scripts/pnpm.sh" "$@"; }
step() { printf '\n-- consumer effect4 (%s s): %s --\n' "$((SECONDS - started))" "$*"; }
started=$SECONDS

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 22 ]; then
  echo "consumer test effect4: FAILED: node $(node --version) is first on PATH; run it with Node 22 (PATH=\"\$(bash scripts/node22.sh):\$PATH\")" >&2
  exit 1
fi
# redis is part of what a consumer installs: a missing server fails, never skips
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "consumer test effect4: FAILED: redis-server and redis-cli are needed (scripts/test-all.sh installs them)" >&2
  exit 1
fi

scratch=$(mktemp -d /tmp/sluice-consumer4.XXXXXX)
redis_pid=""
summary=""
cleanup() {
  status=$?
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  tarballs=$(find "$scratch/tarballs" -name '*.tgz' 2>/dev/null | wc -l)
  rm -rf "$scratch"
  if [ "$status" -eq 0 ]; then
    echo "consumer test effect4: passed in $((SECONDS - started)) s ($tarballs tarballs installed with npm, compiled with tsc, run with node $(node --version); $summary)"
  else
    echo "consumer test effect4: FAILED (exit $status); see the step above" >&2
  fi
}
trap cleanup EXIT

packages=()
for dir in effect4/packages/*/; do
  [ -f "$dir/package.json" ] && packages+=("$(basename "$dir")")
done
[ "${#packages[@]}" -gt 0 ] || { echo "no packages under effect4/packages/" >&2; exit 1; }

step "pack @sluice/core and effect4/packages/* (${packages[*]}); prepack builds each"
(cd effect4 && pnpm -r --filter "./packages/*" --filter @sluice/core pack --pack-destination "$scratch/tarballs") \
  >"$scratch/pack.log" 2>&1 || { cat "$scratch/pack.log"; exit 1; }
names=$(printf '%s\n' core "${packages[@]}" | sort | paste -sd, -)
node scripts/consumer/check-tarballs.mjs "$scratch/tarballs" "$names"

step "a scratch app in $scratch/app, installed with npm from the tarballs"
app="$scratch/app"
mkdir -p "$app/quickstart"
cp -R scripts/consumer-effect4/src scripts/consumer-effect4/lib scripts/consumer-effect4/tsconfig.json "$app/"
cp effect4/examples/quickstart/src/main.ts "$app/quickstart/main.ts"
# every tarball a dependency, and every peer their manifests name: effect and @effect/* at 4.1.0
# (the line's pin), any other at the range the manifest asks for
node --input-type=module - "$scratch/tarballs" "$app/package.json" <<'NODE'
import { execFileSync } from "node:child_process"
import fs from "node:fs"
import path from "node:path"
const [dir, out] = process.argv.slice(2)
const dependencies = {}
const peers = {}
for (const tarball of fs.readdirSync(dir).filter((f) => f.endsWith(".tgz")).sort()) {
  const file = path.join(dir, tarball)
  const manifest = JSON.parse(execFileSync("tar", ["-xzOf", file, "package/package.json"], { encoding: "utf8" }))
  dependencies[manifest.name] = `file:${file}`
  // the 2.x line, for Effect 4: a port that kept the 0.x version or peer would install beside effect 3
  const effect = manifest.peerDependencies?.effect
  if (manifest.name !== "@sluice/core" && (!manifest.version.startsWith("2.") || !/^\^4\./.test(effect ?? ""))) {
    throw new Error(`${manifest.name}@${manifest.version} peers on effect ${effect}: expected 2.x on ^4.x`)
  }
  for (const [peer, range] of Object.entries(manifest.peerDependencies ?? {})) peers[peer] = range
}
for (const [peer, range] of Object.entries(peers)) {
  if (peer in dependencies) continue
  dependencies[peer] = peer === "effect" || peer.startsWith("@effect/") ? "4.1.0" : range
}
if (dependencies.effect !== "4.1.0") throw new Error("no packed package peers on effect")
const app = {
  name: "sluice-consumer-effect4",
  private: true,
  type: "module",
  dependencies,
  devDependencies: { "@types/node": "^22.19.0", typescript: "~5.9.3" }
}
fs.writeFileSync(out, JSON.stringify(app, null, 2) + "\n")
console.log(`  dependencies: ${Object.entries(dependencies).map(([n, r]) => r.startsWith("file:") ? n : `${n}@${r}`).join(", ")}`)
NODE
(cd "$app" && npm install --prefer-offline --no-audit --no-fund --loglevel=error)
# an installed tarball is a copy: a link back into the workspace would test the workspace
if find "$app/node_modules/@sluice" -mindepth 1 -maxdepth 1 -type l | grep -q .; then
  echo "@sluice packages are linked, not installed:" >&2
  ls -l "$app/node_modules/@sluice" >&2
  exit 1
fi
(cd "$app" && npm ls --depth=0)
# one effect in the tree: a second copy would make two of every service key
(cd "$app" && npm ls --all effect | grep -o 'effect@[0-9][^ ]*' | sort -u) >"$scratch/effects"
if [ "$(cat "$scratch/effects")" != "effect@4.1.0" ]; then
  echo "the app's tree holds $(paste -sd' ' "$scratch/effects"), not effect@4.1.0 alone" >&2
  exit 1
fi

step "tsc: a library per package (lib/<name>.ts) that emits declarations naming sluice's types"
for file in "$app"/lib/*.ts; do
  name=$(basename "$file" .ts)
  printf '%s\n' "${packages[@]}" | grep -qx "$name" ||
    { echo "scripts/consumer-effect4/lib/$name.ts: @sluice/$name was not packed (renamed or removed?)" >&2; exit 1; }
done
(cd "$app" && npx tsc -p lib/tsconfig.json)
grep -ho 'import("@sluice/[^"]*")' "$app"/lib/dist/*.d.ts | sort -u | sed 's/^/  its declarations name /' || true
# every package declares its public types in public modules: an internal path here is one the
# package blocks (in the workspace) or may move, and the library's own users get TS2307
if grep -o '@sluice/[^"'"'"']*/internal/[^"'"'"']*' "$app"/lib/dist/*.d.ts | sort -u | grep .; then
  echo "lib/dist/*.d.ts name the internal paths above: declare those types in a public module" >&2
  exit 1
fi

step "tsc: the app, the quickstart and the libraries' declarations (strict, NodeNext, exactOptionalPropertyTypes, noUncheckedIndexedAccess, erasableSyntaxOnly, skipLibCheck false)"
(cd "$app" && npx tsc -p tsconfig.json)

step "node refuses the internal modules at run time"
if (cd "$app" && node --input-type=module -e 'await import("@sluice/bulkhead/internal/bulkhead")') 2>"$scratch/internal.log"; then
  echo "node loaded @sluice/bulkhead/internal/bulkhead: internals must be types only" >&2
  exit 1
fi
grep -q ERR_PACKAGE_PATH_NOT_EXPORTED "$scratch/internal.log" ||
  { cat "$scratch/internal.log" >&2; exit 1; }
echo "  ERR_PACKAGE_PATH_NOT_EXPORTED, as it should"

step "redis-server on a free loopback port"
port=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$scratch" >"$scratch/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 1 50); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.1
done
redis-cli -p "$port" ping >/dev/null || { cat "$scratch/redis.log" >&2; exit 1; }
echo "  redis-server $(redis-server --version | grep -o 'v=[^ ]*') on 127.0.0.1:$port"

step "node: effect4/examples/quickstart"
(cd "$app" && node dist/quickstart/main.js)

step "node: the app (src/packages/<name>.js of each packed package)"
(cd "$app" && REDIS_URL="redis://127.0.0.1:$port" node dist/src/main.js "${packages[@]}") | tee "$scratch/app.log"
summary=$(tail -n 1 "$scratch/app.log")
