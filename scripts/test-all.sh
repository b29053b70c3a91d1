#!/usr/bin/env bash
# Everything the tests need, then every check: the README's test command and what CI runs.
#   install (frozen lockfile, redis-server, chromium) → index.ts drift → type-check → doc examples → lint → build → all tests
set -euo pipefail
cd "$(dirname "$0")/.."
pnpm() { bash scripts/pnpm.sh "$@"; }

step() { printf '\n== %s ==\n' "$*"; }

step "install"
pnpm install --frozen-lockfile

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

step "type-check"
pnpm run check

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

step "tests"
pnpm run test
