#!/usr/bin/env bash
# The README's first command: installs the workspace (frozen lockfile) and runs the geocoding demo
# offline: stand-in providers on loopback, about 20 seconds. It ends with the report's path: one
# HTML file, plots per provider, readable offline in any browser.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/pnpm.sh install --frozen-lockfile --reporter=silent
bash scripts/pnpm.sh --silent demo
