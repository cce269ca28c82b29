#!/usr/bin/env bash
# Installs the extension's Node packages (npm ci from the lockfile; quick when up to date).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "Memory Lens's extension needs Node 20+ and npm on PATH" >&2
  exit 1
fi
stamp=node_modules/.memlens-installed
want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
