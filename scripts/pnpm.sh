#!/usr/bin/env bash
# Runs the pinned pnpm through npx, so that a fresh machine needs nothing but Node and npm.
# (Corepack's signature check fails against some registries; npx needs no signature keys.)
set -euo pipefail
exec npx --yes "pnpm@10.34.8" "$@"
