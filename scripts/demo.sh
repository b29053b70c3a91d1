#!/usr/bin/env bash
# Installs the workspace (frozen lockfile) and runs the demo: the README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/pnpm.sh install --frozen-lockfile --reporter=silent
bash scripts/pnpm.sh --silent demo
