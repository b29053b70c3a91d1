#!/usr/bin/env bash
# The consumer test: sluice as a user outside this repository gets it. Builds and packs every
# package, installs the tarballs with plain npm into a scratch app under /tmp (no workspace links,
# no tsx), compiles the app, a library that emits declarations and that library's own consumer with
# a strict tsc, then runs the app and examples/quickstart with node against a loopback upstream and
# a redis-server started here, and two apps of Effect's own AI SDKs (@effect/ai-openai and
# @effect/ai-anthropic, installed from the registry beside the tarballs) through sluice's
# middleware against loopback stand-ins. Any failing step fails the script; the scratch folder and the
# redis-server are removed on every exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
pnpm() { bash "$root/scripts/pnpm.sh" "$@"; }
step() { printf '\n-- consumer (%s s): %s --\n' "$((SECONDS - started))" "$*"; }
started=$SECONDS

# The Redis store is part of what a consumer installs: a missing server fails, never skips.
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  echo "consumer test: FAILED: redis-server and redis-cli are needed (scripts/test-all.sh installs them)" >&2
  exit 1
fi

scratch=$(mktemp -d /tmp/sluice-consumer.XXXXXX)
redis_pid=""
cleanup() {
  status=$?
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  tarballs=$(find "$scratch/tarballs" -name '*.tgz' 2>/dev/null | wc -l)
  rm -rf "$scratch"
  if [ "$status" -eq 0 ]; then
    echo "consumer test: passed in $((SECONDS - started)) s ($tarballs tarballs installed with npm, compiled with tsc, run with node)"
  else
    echo "consumer test: FAILED (exit $status); see the step above" >&2
  fi
}
trap cleanup EXIT

step "build"
pnpm run build

step "pack every package"
pnpm -r --filter ./core --filter "./packages/*" pack --pack-destination "$scratch/tarballs" >"$scratch/pack.log" 2>&1 ||
  { cat "$scratch/pack.log"; exit 1; }
node scripts/consumer/check-tarballs.mjs "$scratch/tarballs"

step "a scratch app in $scratch/app, installed with npm from the tarballs"
app="$scratch/app"
mkdir -p "$app/quickstart"
cp -R scripts/consumer/src scripts/consumer/ai scripts/consumer/lib scripts/consumer/lib-user scripts/consumer/tsconfig.json "$app/"
cp examples/quickstart/src/main.ts "$app/quickstart/main.ts"
# @sluice/core is listed like @sluice/options: only a dependency of the packages, installed from its
# tarball here since it is not on the registry yet
tarball() { ls "$scratch/tarballs"/sluice-"$1"-[0-9]*.tgz; }
cat >"$app/package.json" <<EOF
{
  "name": "sluice-consumer",
  "private": true,
  "type": "module",
  "dependencies": {
    "@sluice/core": "file:$(tarball core)",
    "@sluice/bulkhead": "file:$(tarball bulkhead)",
    "@sluice/bulkhead-redis": "file:$(tarball bulkhead-redis)",
    "@sluice/options": "file:$(tarball options)",
    "@sluice/rate-limiter": "file:$(tarball rate-limiter)",
    "@sluice/rate-limiter-redis": "file:$(tarball rate-limiter-redis)",
    "@sluice/redis": "file:$(tarball redis)",
    "@sluice/provider": "file:$(tarball provider)",
    "@sluice/http": "file:$(tarball http)",
    "@sluice/report": "file:$(tarball report)",
    "effect": "~3.22.4",
    "@effect/platform": "~0.97.2",
    "@effect/platform-node": "~0.108.2",
    "@effect/ai": "~0.37.0",
    "@effect/ai-openai": "~0.41.0",
    "@effect/ai-anthropic": "~0.27.0",
    "@effect/experimental": "~0.61.1",
    "ioredis": "^5.9.2"
  },
  "devDependencies": {
    "@types/node": "^20.19.0",
    "@types/ws": "^8.5.0",
    "typescript": "~5.9.3"
  }
}
EOF
(cd "$app" && npm install --prefer-offline --no-audit --no-fund --loglevel=error)
# an installed tarball is a copy: a link back into the workspace would test the workspace
if find "$app/node_modules/@sluice" -mindepth 1 -maxdepth 1 -type l | grep -q .; then
  echo "@sluice packages are linked, not installed:" >&2
  ls -l "$app/node_modules/@sluice" >&2
  exit 1
fi
(cd "$app" && npm ls --depth=0 @sluice/core @sluice/options @sluice/bulkhead @sluice/rate-limiter @sluice/redis @sluice/provider @effect/ai-openai @effect/ai-anthropic effect typescript)

step "tsc: a library that emits declarations naming sluice's types"
(cd "$app" && npx tsc -p lib/tsconfig.json)
grep -ho 'import("@sluice/[^"]*")' "$app/lib/dist/index.d.ts" | sort -u | sed 's/^/  its declarations name /' || true
# every package declares its public types in public modules: an internal path here is one the
# package blocks (in the workspace) or may move, and the library's own users get TS2307
if grep -o '@sluice/[^"'"'"']*/internal/[^"'"'"']*' "$app/lib/dist/index.d.ts" | sort -u | grep .; then
  echo "lib/dist/index.d.ts names the internal paths above: declare those types in a public module" >&2
  exit 1
fi

step "tsc: the app, the quickstart and the library's own consumer (strict, NodeNext, exactOptionalPropertyTypes, noUncheckedIndexedAccess, erasableSyntaxOnly, skipLibCheck false)"
# skipLibCheck false checks every declaration, Effect's too: @effect/platform's name DOM types
# (Storage, Transferable) and @effect/platform-node's name ws, hence lib DOM and @types/ws.
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

step "node: examples/quickstart"
(cd "$app" && node dist/quickstart/main.js)

step "node: the app"
(cd "$app" && REDIS_URL="redis://127.0.0.1:$port" node dist/src/main.js)

step "node: @effect/ai-openai through the provider's HttpClient (Middleware.layer)"
(cd "$app" && node dist/ai/openai.js)

step "node: @effect/ai-anthropic through the provider's HttpClient (Middleware.layer)"
(cd "$app" && node dist/ai/anthropic.js)
