#!/usr/bin/env bash
# Everything the tests need, then every check: the README's test command and what CI runs.
#   install (frozen lockfile) → index.ts drift → type-check → lint → build → all tests
set -euo pipefail
cd "$(dirname "$0")/.."
pnpm() { bash scripts/pnpm.sh "$@"; }

step() { printf '\n== %s ==\n' "$*"; }

step "install"
pnpm install --frozen-lockfile

step "generated src/index.ts is up to date"
pnpm run codegen:check

step "type-check"
pnpm run check

step "lint and format"
pnpm run lint

step "build (ESM + .d.ts)"
pnpm run build

step "tests"
pnpm run test
