#!/usr/bin/env bash
# Runs end-to-end tests against a real VS Code: installs (cached), starts code-server on a free
# loopback port in its own process group, runs each test file with the cached Node 24 and
# playwright-core, then stops code-server (the whole process group).
#
#   bash scripts/vscode/run-e2e.sh [TEST.mjs ...]      (default: tests/e2e/smoke.mjs)
#
# Environment: MEMLENS_WORKSPACE (default examples/demo), MEMLENS_VSIX, MEMLENS_VSCODE_SETTINGS
# and anything else start.sh takes (it all reaches the extension host too);
# MEMLENS_E2E_ARTIFACTS (default artifacts/e2e; code-server's log goes there).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"

WORKSPACE="$(cd "${MEMLENS_WORKSPACE:-examples/demo}" && pwd -P)"
ARTIFACTS="${MEMLENS_E2E_ARTIFACTS:-$ROOT/artifacts/e2e}"
mkdir -p "$ARTIFACTS"
if [ $# -gt 0 ]; then TESTS=("$@"); else TESTS=(tests/e2e/smoke.mjs); fi

install_env="$(bash "$HERE/install.sh" --env)"
eval "$install_env"

PORT="$("$MEMLENS_NODE" -e '
  const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')"
STATE="$(mktemp -d "${TMPDIR:-/tmp}/memlens-e2e.XXXXXX")"
LOG="$ARTIFACTS/code-server.log"

t0=$(date +%s.%N)
MEMLENS_STATE_DIR="$STATE" setsid bash "$HERE/start.sh" "$WORKSPACE" "$PORT" >"$LOG" 2>&1 &
SPID=$!
cleanup() {
  kill -TERM -- "-$SPID" 2>/dev/null || true
  wait "$SPID" 2>/dev/null || true
  rm -rf "$STATE"
}
trap cleanup EXIT

# start.sh writes STATE/url once the server answers.
deadline=$(( $(date +%s) + ${MEMLENS_START_TIMEOUT:-120} + 30 ))
until [ -s "$STATE/url" ]; do
  if ! kill -0 "$SPID" 2>/dev/null; then
    tail -n 40 "$LOG" >&2
    echo "run-e2e: code-server did not start (log: $LOG)" >&2
    exit 1
  fi
  if [ "$(date +%s)" -gt "$deadline" ]; then
    tail -n 40 "$LOG" >&2
    echo "run-e2e: code-server not ready in time (log: $LOG)" >&2
    exit 1
  fi
  sleep 0.2
done
URL="$(cat "$STATE/url")"
echo "run-e2e: code-server ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s at $URL"

passed=0; failed=0
for t in "${TESTS[@]}"; do
  echo "run-e2e: == $t"
  if MEMLENS_VSCODE_URL="$URL" MEMLENS_WORKSPACE="$WORKSPACE" MEMLENS_E2E_ARTIFACTS="$ARTIFACTS" \
     NODE_PATH="$MEMLENS_PLAYWRIGHT_NODE_PATH${NODE_PATH:+:$NODE_PATH}" \
     "$MEMLENS_NODE" "$t"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "e2e: $passed passed, $failed failed"
[ "$failed" = 0 ]
