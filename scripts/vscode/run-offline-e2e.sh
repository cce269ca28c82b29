#!/usr/bin/env bash
# The "installs and works offline" end-to-end test (issue 13,
# docs/reference.md "The VS Code extension"): the packaged .vsix installed into a clean code-server
# profile with a fresh, empty HOME, everything run inside a network namespace with only loopback
# (`unshare -n`, then `ip link set lo up`), the server run by a plain system python3 that has none
# of the server's dependencies (so what runs is the bundle inside the .vsix, and no pip could have
# helped). tests/e2e/startup.mjs then opens GEMINI.md of a copy of the demo and waits for memlens
# diagnostics in the Problems panel (screenshot artifacts/e2e/offline.png, timings
# artifacts/e2e/timings-offline.json). Last, the installed extension's folder must hold no
# byte-code, environment or lock file.
#
#   bash scripts/vscode/run-offline-e2e.sh
#
# Environment: MEMLENS_VSIX (default memlens-<version>.vsix at the root), MEMLENS_OFFLINE_PYTHON
# (default /usr/bin/python3; must not have pydantic), MEMLENS_E2E_ARTIFACTS.
# Needs root or unprivileged user namespaces for `unshare -n`, and the cached code-server
# (scripts/vscode/install.sh, run here first, with the network). Last line: "e2e-offline: passed"
# or "e2e-offline: FAILED"; exit status 0 only when passed.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"

fail() { echo "run-offline-e2e: $*" >&2; echo "e2e-offline: FAILED"; exit 1; }

version="$(node -p 'require("./package.json").version' 2>/dev/null || sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json)"
VSIX="${MEMLENS_VSIX:-$ROOT/memlens-$version.vsix}"
[ -f "$VSIX" ] || fail "no $VSIX (npm run package)"
PY="${MEMLENS_OFFLINE_PYTHON:-/usr/bin/python3}"
[ -x "$PY" ] || fail "no $PY (set MEMLENS_OFFLINE_PYTHON to a plain CPython 3.11+)"
if env -u PYTHONPATH "$PY" -c 'import pydantic' 2>/dev/null; then
  fail "$PY has pydantic installed: it would not prove the bundle runs (MEMLENS_OFFLINE_PYTHON)"
fi
unshare -n true 2>/dev/null || fail "'unshare -n' is not permitted here (needs root or user namespaces)"

# With the network: the cached code-server, Node 24, playwright (quick when cached).
eval "$(bash "$HERE/install.sh" --env)"

RUN="$(mktemp -d "${TMPDIR:-/tmp}/memlens-offline.XXXXXX")"
RUN="$(cd "$RUN" && pwd -P)"
trap 'rm -rf "$RUN"' EXIT
ARTIFACTS="${MEMLENS_E2E_ARTIFACTS:-$ROOT/artifacts/e2e}"
mkdir -p "$ARTIFACTS" "$RUN/home" "$RUN/bin" "$RUN/user-data/User" "$RUN/extensions"
cp -a examples/demo "$RUN/demo"
rm -rf "$RUN/demo/.home"   # the fresh HOME is the only one: nothing of the demo's
# `python3` on PATH is the plain interpreter: the extension's default, no setting, no
# MEMLENS_PYTHON.
ln -s "$PY" "$RUN/bin/python3"
cat >"$RUN/config.yaml" <<CFG
auth: none
cert: false
CFG
cat >"$RUN/user-data/User/settings.json" <<'JSON'
{
  "chat.disableAIFeatures": true,
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "update.mode": "none",
  "workbench.enableExperiments": false,
  "security.workspace.trust.enabled": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "git.openRepositoryInParentFolders": "never"
}
JSON
LOG="$ARTIFACTS/code-server-offline.log"
echo "run-offline-e2e: $VSIX into a clean profile, HOME=$RUN/home, python3=$PY ($("$PY" --version 2>&1)), no network"

# Everything below runs in a new network namespace: loopback only.
set +e
env -i PATH="$RUN/bin:/usr/bin:/bin" HOME="$RUN/home" TMPDIR="$RUN" LANG=C.UTF-8 \
  RUN="$RUN" VSIX="$VSIX" LOG="$LOG" ROOT="$ROOT" ARTIFACTS="$ARTIFACTS" \
  MEMLENS_NODE="$MEMLENS_NODE" ENTRY="$MEMLENS_CODE_SERVER_ENTRY" \
  MEMLENS_PLAYWRIGHT_NODE_PATH="$MEMLENS_PLAYWRIGHT_NODE_PATH" MEMLENS_CHROMIUM="$MEMLENS_CHROMIUM" \
  MEMLENS_E2E_TIMEOUT_MS="${MEMLENS_E2E_TIMEOUT_MS:-120000}" \
  unshare -n bash -c '
  set -euo pipefail
  ip link set lo up
  if "$MEMLENS_NODE" -e "
      const s = require(\"net\").connect({ host: \"pypi.org\", port: 443, timeout: 3000 });
      s.on(\"connect\", () => process.exit(0)); s.on(\"error\", () => process.exit(1));
      s.on(\"timeout\", () => process.exit(1));"; then
    echo "run-offline-e2e: pypi.org:443 answers inside the namespace: not offline" >&2; exit 1
  fi
  echo "run-offline-e2e: network namespace up (loopback only; pypi.org:443 unreachable)"
  COMMON=(--config "$RUN/config.yaml" --user-data-dir "$RUN/user-data" --extensions-dir "$RUN/extensions")
  "$MEMLENS_NODE" "$ENTRY" "${COMMON[@]}" --install-extension "$VSIX" >"$LOG" 2>&1
  sleep 1; touch "$RUN/installed.stamp"
  PORT=$("$MEMLENS_NODE" -e "const s=require(\"net\").createServer().listen(0,\"127.0.0.1\",()=>{console.log(s.address().port);s.close()})")
  export MEMLENS_TIMINGS_FILE="$RUN/timings.jsonl" CODE_SERVER_RECONNECTION_GRACE_TIME=10
  setsid "$MEMLENS_NODE" "$ENTRY" "${COMMON[@]}" --bind-addr "127.0.0.1:$PORT" --auth none \
    --disable-telemetry --disable-update-check --disable-workspace-trust \
    --disable-getting-started-override --ignore-last-opened "$RUN/demo" >>"$LOG" 2>&1 &
  CS=$!
  trap "kill -TERM -- -$CS 2>/dev/null || kill -TERM $CS 2>/dev/null; wait $CS 2>/dev/null" EXIT
  for _ in $(seq 1 600); do
    "$MEMLENS_NODE" -e "fetch(\"http://127.0.0.1:$PORT/healthz\").then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" && break
    kill -0 $CS 2>/dev/null || { tail -n 30 "$LOG" >&2; echo "run-offline-e2e: code-server exited" >&2; exit 1; }
    sleep 0.2
  done
  URL="http://127.0.0.1:$PORT/?folder=$RUN/demo"
  echo "run-offline-e2e: code-server at $URL"
  MEMLENS_VSCODE_URL="$URL" MEMLENS_WORKSPACE="$RUN/demo" MEMLENS_E2E_ARTIFACTS="$ARTIFACTS" \
    MEMLENS_STARTUP_NAME=offline MEMLENS_STARTUP_ROUNDS=cold \
    NODE_PATH="$MEMLENS_PLAYWRIGHT_NODE_PATH" "$MEMLENS_NODE" "$ROOT/tests/e2e/startup.mjs"
'
rc=$?
set -e
[ "$rc" = 0 ] || { tail -n 20 "$LOG" >&2; fail "the offline test failed (code-server log: $LOG)"; }
ext="$(find "$RUN/extensions" -maxdepth 1 -type d -name 'memlens.memlens-*' | head -n 1)"
[ -n "$ext" ] || fail "the extension is not in $RUN/extensions"
# The package ships byte-code (__pycache__ beside the sources): what the server wrote is what is
# newer than the installation (a new .pyc also makes its folder newer), or a venv or a lock.
written="$(find "$ext" \( -name 'venv*' -o -name '*.lock' -o -newer "$RUN/installed.stamp" \) -print | head -n 5)"
[ -z "$written" ] || fail "the server wrote into the extension's folder: $written"
echo "run-offline-e2e: the extension folder is as installed ($(du -sh "$ext" | cut -f1))"
echo "e2e-offline: passed"
