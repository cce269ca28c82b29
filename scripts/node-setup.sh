#!/usr/bin/env bash
# Installs the extension's Node packages (npm ci from the lockfile; quick when up to date).
# A failure says what failed and what to do; npm's progress shows every 10 s (scripts/lib/steps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS_PREFIX="node-setup"
. scripts/lib/steps.sh
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  fail "Memory Lens's extension needs Node 20+ and npm on PATH (found: node $(command -v node || echo none), npm $(command -v npm || echo none))" \
    "install Node.js 20 or newer with npm (Debian/Ubuntu: apt-get install nodejs npm, or your usual Node installer), then run this again"
fi
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 20 ]; then
  fail "Memory Lens's extension needs Node 20+ (found $(node --version 2>&1 || true))" \
    "install Node.js 20 or newer, then run this again"
fi
stamp=node_modules/.memlens-installed
want=$(cat package.json package-lock.json | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log="$PWD/.npm-install.log"
  : >"$log"
  run_step --what "npm ci (the extension's packages)" --log "$log" --folder node_modules \
    --hint "check that npm reaches its registry (npm ping; npm config get registry), then run bash scripts/node-setup.sh again" -- \
    npm ci --no-audit --no-fund --no-update-notifier --loglevel=warn
  echo "$want" > "$stamp"
fi
