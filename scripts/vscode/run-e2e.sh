#!/usr/bin/env bash
# Runs end-to-end tests against a real VS Code: installs (cached), starts the fake Gemini server
# (tests/e2e/fake_gemini_server.py) and then ONE code-server on a free loopback port in its own
# process group, runs each test file with the cached Node 24 and playwright-core (each test
# opens its own browser window, so it gets its own extension host and language server; a test
# may open another folder, e.g. a copy of the demo, through the same code-server), then stops
# code-server (the whole process group) and the fake server.
#
#   bash scripts/vscode/run-e2e.sh [TEST.mjs ...]      (default: every tests/e2e/*.mjs)
#
# Nothing committed is written to: the default workspace, examples/demo, is served from a
# per-run copy (without the state earlier runs left in its .home: .gemini/tmp, history,
# projects.json), and HOME is a per-run copy too, since the tests and the chat write there.
#
# Environment: MEMLENS_WORKSPACE (default examples/demo, copied per run; another folder is
# served as it is), MEMLENS_VSIX (default: the packaged memlens-<version>.vsix at the project
# root, when it exists), MEMLENS_PYTHON (default: the project's .venv/bin/python, when it
# exists; it also runs the fake Gemini server), GEMINI_CLI_HOME (default: WORKSPACE/.home when
# it exists, as the demo has; the tests and code-server get a per-run copy of it: the
# corresponding folder of the workspace copy when it lies in the demo, else a copy of its
# .gemini and .agents folders), MEMLENS_VSCODE_SETTINGS and anything else start.sh takes (it
# all reaches the extension host too); MEMLENS_E2E_ARTIFACTS (default artifacts/e2e; the
# screenshots, code-server's and the fake server's logs go there);
# CODE_SERVER_RECONNECTION_GRACE_TIME (default 10: the extension host of a closed test window
# goes away 10 s later, not after 3 hours).
# The chat talks to the fake Gemini server: code-server (so the language server) and the tests
# get MEMLENS_GEMINI_BASE_URL (its URL; tests script it through its /__fake/ endpoints) and
# the tests MEMLENS_FAKE_GEMINI_KEY (default e2e-fake-gemini-key, the only key it takes), which
# the chat test stores with the panel's "Set Gemini API Key". No key reaches code-server's
# environment (GEMINI_API_KEY, GOOGLE_API_KEY and GOOGLE_GENAI_USE_VERTEXAI are removed), so
# the views test sees the "set your key" state and a real key is never sent anywhere. If the
# fake cannot start, the run goes on without it (with a warning) and the chat test fails
# saying so.
# The last line is "e2e: N passed, N failed"; the exit status is 0 only when none failed.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"

# Everything of this run (workspace and HOME copies, code-server's state) lives in RUN.
RUN="$(mktemp -d "${TMPDIR:-/tmp}/memlens-e2e.XXXXXX")"
RUN="$(cd "$RUN" && pwd -P)"
SPID=""; FAKE_PID=""
cleanup() {
  if [ -n "$SPID" ]; then
    kill -TERM -- "-$SPID" 2>/dev/null || true
    wait "$SPID" 2>/dev/null || true
  fi
  if [ -n "$FAKE_PID" ]; then
    kill -TERM "$FAKE_PID" 2>/dev/null || true
    wait "$FAKE_PID" 2>/dev/null || true
  fi
  rm -rf "$RUN"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

DEMO="$(cd examples/demo && pwd -P)"
SOURCE="$(cd "${MEMLENS_WORKSPACE:-$DEMO}" && pwd -P)"
# Gemini CLI's per-project state, which runs write into a HOME: never part of a fixture.
strip_home_state() {
  rm -rf "$1/.gemini/tmp" "$1/.gemini/history"
  rm -rf "$1/.gemini/projects.json" "$1/.gemini/projects.json".*
}
if [ "$SOURCE" = "$DEMO" ]; then
  cp -a "$DEMO" "$RUN/demo"
  [ -d "$RUN/demo/.home" ] && strip_home_state "$RUN/demo/.home"
  WORKSPACE="$RUN/demo"
else
  WORKSPACE="$SOURCE"
fi
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
    if [ -n "$(find extension/src extension/webview package.json server scripts/bundle_python.py -newer "$MEMLENS_VSIX" -not -path "*/__pycache__*" -print -quit 2>/dev/null)" ]; then
      echo "run-e2e: warning: $MEMLENS_VSIX is older than the extension's sources (npm run package)" >&2
    fi
  else
    echo "run-e2e: warning: MEMLENS_VSIX not set and no memlens-*.vsix built: the extension is not installed" >&2
  fi
fi
if [ -z "${MEMLENS_PYTHON:-}" ] && [ -x "$ROOT/.venv/bin/python" ]; then
  export MEMLENS_PYTHON="$ROOT/.venv/bin/python"
fi
# HOME: a per-run copy. In the copied demo (its .home, or any folder of it): the same folder
# of the copy; elsewhere: a copy of what Gemini CLI reads there (.gemini, .agents).
SOURCE_HOME="${GEMINI_CLI_HOME:-}"
if [ -z "$SOURCE_HOME" ] && [ -d "$SOURCE/.home" ]; then
  SOURCE_HOME="$SOURCE/.home"
fi
if [ -n "$SOURCE_HOME" ]; then
  if [ ! -d "$SOURCE_HOME" ]; then
    echo "run-e2e: GEMINI_CLI_HOME=$SOURCE_HOME is not a folder" >&2
    exit 2
  fi
  SOURCE_HOME="$(cd "$SOURCE_HOME" && pwd -P)"
  if [ "$WORKSPACE" != "$SOURCE" ] && { [ "$SOURCE_HOME" = "$SOURCE" ] || [ "${SOURCE_HOME#"$SOURCE"/}" != "$SOURCE_HOME" ]; }; then
    GEMINI_CLI_HOME="$WORKSPACE${SOURCE_HOME#"$SOURCE"}"
  else
    GEMINI_CLI_HOME="$RUN/home"
    mkdir -p "$GEMINI_CLI_HOME"
    for d in .gemini .agents; do
      if [ -e "$SOURCE_HOME/$d" ]; then cp -a "$SOURCE_HOME/$d" "$GEMINI_CLI_HOME/"; fi
    done
  fi
  export GEMINI_CLI_HOME
fi
export CODE_SERVER_RECONNECTION_GRACE_TIME="${CODE_SERVER_RECONNECTION_GRACE_TIME:-10}"
# The extension appends its start-up milestones here (one JSON line each, every window);
# tests/e2e/startup.mjs turns them into ARTIFACTS/timings.json.
export MEMLENS_TIMINGS_FILE="${MEMLENS_TIMINGS_FILE:-$RUN/timings.jsonl}"
echo "run-e2e: ${#TESTS[@]} test(s); workspace: $WORKSPACE; vsix: ${MEMLENS_VSIX:-none}; python: ${MEMLENS_PYTHON:-default}; HOME: ${GEMINI_CLI_HOME:-default}"

install_env="$(bash "$HERE/install.sh" --env)"
eval "$install_env"

t0=$(date +%s.%N)
# The fake Gemini server, before code-server: its URL must be in code-server's environment.
FAKE_LOG="$ARTIFACTS/fake-gemini.log"
FAKE_PORT_FILE="$RUN/fake-gemini.url"
"${MEMLENS_PYTHON:-python3}" "$ROOT/tests/e2e/fake_gemini_server.py" --port-file "$FAKE_PORT_FILE" \
  --key "${MEMLENS_FAKE_GEMINI_KEY:-e2e-fake-gemini-key}" --exit-with-pid "$$" >"$FAKE_LOG" 2>&1 &
FAKE_PID=$!
deadline=$(( $(date +%s) + 30 ))
until [ -s "$FAKE_PORT_FILE" ] || ! kill -0 "$FAKE_PID" 2>/dev/null || [ "$(date +%s)" -gt "$deadline" ]; do
  sleep 0.1
done
unset GEMINI_API_KEY GOOGLE_API_KEY GOOGLE_GENAI_USE_VERTEXAI
export MEMLENS_FAKE_GEMINI_KEY="${MEMLENS_FAKE_GEMINI_KEY:-e2e-fake-gemini-key}"
if [ -s "$FAKE_PORT_FILE" ]; then
  export MEMLENS_GEMINI_BASE_URL
  MEMLENS_GEMINI_BASE_URL="$(cat "$FAKE_PORT_FILE")"
  echo "run-e2e: fake Gemini server at $MEMLENS_GEMINI_BASE_URL"
else
  tail -n 20 "$FAKE_LOG" >&2 || true
  kill -TERM "$FAKE_PID" 2>/dev/null || true
  wait "$FAKE_PID" 2>/dev/null || true
  FAKE_PID=""
  unset MEMLENS_GEMINI_BASE_URL
  echo "run-e2e: warning: the fake Gemini server did not start (log: $FAKE_LOG); the chat test will fail" >&2
fi

PORT="$("$MEMLENS_NODE" -e '
  const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });')"
STATE="$RUN/code-server"
LOG="$ARTIFACTS/code-server.log"

MEMLENS_STATE_DIR="$STATE" setsid bash "$HERE/start.sh" "$WORKSPACE" "$PORT" >"$LOG" 2>&1 &
SPID=$!

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
