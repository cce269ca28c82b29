#!/usr/bin/env bash
# Runs end-to-end tests against a real VS Code: installs (cached), starts ONE code-server on a
# free loopback port in its own process group, runs each test file with the cached Node 24 and
# playwright-core (each test opens its own browser window, so it gets its own extension host
# and language server; a test may open another folder, e.g. a copy of the demo, through the
# same code-server), then stops code-server (the whole process group).
#
#   bash scripts/vscode/run-e2e.sh [TEST.mjs ...]      (default: every tests/e2e/*.mjs)
#
# Environment: MEMLENS_WORKSPACE (default examples/demo), MEMLENS_VSIX (default: the packaged
# memlens-<version>.vsix at the project root, when it exists), MEMLENS_PYTHON (default: the
# project's .venv/bin/python, when it exists), GEMINI_CLI_HOME (default: WORKSPACE/.home when
# it exists, as the demo has), MEMLENS_VSCODE_SETTINGS and anything else start.sh takes (it
# all reaches the extension host too); MEMLENS_E2E_ARTIFACTS (default artifacts/e2e; the
# screenshots and code-server's log go there); CODE_SERVER_RECONNECTION_GRACE_TIME (default
# 10: the extension host of a closed test window goes away 10 s later, not after 3 hours).
# The last line is "e2e: N passed, N failed"; the exit status is 0 only when none failed.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"

WORKSPACE="$(cd "${MEMLENS_WORKSPACE:-examples/demo}" && pwd -P)"
ARTIFACTS="${MEMLENS_E2E_ARTIFACTS:-$ROOT/artifacts/e2e}"
mkdir -p "$ARTIFACTS"
rm -f "$ARTIFACTS"/*-failure.png
if [ $# -gt 0 ]; then
  TESTS=("$@")
else
  TESTS=()
  while IFS= read -r t; do TESTS+=("$t"); done < <(find tests/e2e -maxdepth 1 -name '*.mjs' -type f | LC_ALL=C sort)
fi
if [ "${#TESTS[@]}" = 0 ]; then
  echo "run-e2e: no tests found" >&2
  echo "e2e: 0 passed, 0 failed"
  exit 1
fi

# Defaults that make a bare run test this checkout (each only when not set and present).
if [ -z "${MEMLENS_VSIX:-}" ]; then
  version="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -n 1)"
  if [ -n "$version" ] && [ -f "$ROOT/memlens-$version.vsix" ]; then
    export MEMLENS_VSIX="$ROOT/memlens-$version.vsix"
    if [ -n "$(find extension/src package.json -newer "$MEMLENS_VSIX" -print -quit 2>/dev/null)" ]; then
      echo "run-e2e: warning: $MEMLENS_VSIX is older than the extension's sources (npm run package)" >&2
    fi
  else
    echo "run-e2e: warning: MEMLENS_VSIX not set and no memlens-*.vsix built: the extension is not installed" >&2
  fi
fi
if [ -z "${MEMLENS_PYTHON:-}" ] && [ -x "$ROOT/.venv/bin/python" ]; then
  export MEMLENS_PYTHON="$ROOT/.venv/bin/python"
fi
if [ -z "${GEMINI_CLI_HOME:-}" ] && [ -d "$WORKSPACE/.home" ]; then
  export GEMINI_CLI_HOME="$WORKSPACE/.home"
fi
export CODE_SERVER_RECONNECTION_GRACE_TIME="${CODE_SERVER_RECONNECTION_GRACE_TIME:-10}"
echo "run-e2e: ${#TESTS[@]} test(s); vsix: ${MEMLENS_VSIX:-none}; python: ${MEMLENS_PYTHON:-default}; HOME: ${GEMINI_CLI_HOME:-default}"

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

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
passed=0; failed=0; failed_tests=(); timings=()
for t in "${TESTS[@]}"; do
  echo "run-e2e: == $t"
  ts=$(now)
  if MEMLENS_VSCODE_URL="$URL" MEMLENS_WORKSPACE="$WORKSPACE" MEMLENS_E2E_ARTIFACTS="$ARTIFACTS" \
     NODE_PATH="$MEMLENS_PLAYWRIGHT_NODE_PATH${NODE_PATH:+:$NODE_PATH}" \
     "$MEMLENS_NODE" "$t"; then
    passed=$((passed + 1)); result=passed
  else
    failed=$((failed + 1)); result=FAILED; failed_tests+=("$t")
  fi
  timings+=("$(printf '%-32s %-6s %5s s' "$(basename "$t")" "$result" "$(since "$ts")")")
done
echo "run-e2e: timings"
printf '  %s\n' "${timings[@]}"
echo "run-e2e: total $(since "$t0") s (code-server start included); screenshots in $ARTIFACTS"
if [ "$failed" -gt 0 ]; then
  echo "run-e2e: failed: ${failed_tests[*]} (code-server log: $LOG)"
fi
echo "e2e: $passed passed, $failed failed"
[ "$failed" = 0 ]
