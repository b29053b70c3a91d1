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
