#!/usr/bin/env bash
# Serves WORKSPACE in a real VS Code (code-server, docs/reference.md "Set-up in detail") on
# 127.0.0.1:PORT and stays in the foreground until code-server exits or this script is signalled
# (background it with `&` or `setsid`, and stop it by killing its process group).
#
#   bash scripts/vscode/start.sh WORKSPACE [PORT]        (PORT: default $MEMLENS_PORT, else 8080)
#
# Environment:
#   MEMLENS_VSIX            a .vsix to install first (--install-extension ... --force)
#   MEMLENS_STATE_DIR       folder for config.yaml, user-data/ and extensions/; reused if it
#                           exists (default: a fresh folder under ${TMPDIR:-/tmp}, removed
#                           when this script ends unless MEMLENS_KEEP_STATE=1)
#   MEMLENS_VSCODE_SETTINGS a JSON object merged into user-data/User/settings.json last
#   MEMLENS_START_TIMEOUT   seconds to wait for the HTTP endpoint (default 120)
#   MEMLENS_WORKSPACE_TRUST 1: workspace trust on (no --disable-workspace-trust, and
#                           security.workspace.trust.enabled true, no start-up prompt): a
#                           folder opens in Restricted Mode until trusted (default: off)
#   MEMLENS_SERVER_LOG      a file for code-server's own output (default: this terminal), so
#                           that the URL and how to stop stay the last lines a user sees
# Every other variable in the environment reaches code-server and so the extension host
# (e.g. the project's Python, a fake Gemini server's URL).
# Once ready it prints "memlens/vscode: URL <url>" and writes STATE/url and STATE/pid.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 WORKSPACE [PORT]" >&2
  exit 2
fi
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ ! -d "$1" ]; then
  echo "memlens/vscode: workspace '$1' is not a folder" >&2
  exit 2
fi
WORKSPACE="$(cd "$1" && pwd -P)"
PORT="${2:-${MEMLENS_PORT:-8080}}"
case "$PORT" in
  ''|*[!0-9]*) echo "memlens/vscode: bad port '$PORT'" >&2; exit 2 ;;
esac

t0=$(date +%s.%N)
elapsed() { awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }

# Paths of the cached install (installs it first if needed; quick when it is there).
if ! install_env="$(bash "$HERE/install.sh" --env)"; then
  echo "memlens/vscode: the VS Code install failed (its message is above); nothing was started" >&2
  exit 1
fi
eval "$install_env"
NODE="$MEMLENS_NODE"
ENTRY="$MEMLENS_CODE_SERVER_ENTRY"

if [ -n "${MEMLENS_STATE_DIR:-}" ]; then
  STATE="$MEMLENS_STATE_DIR"
  mkdir -p "$STATE"
  STATE="$(cd "$STATE" && pwd -P)"
else
  STATE="$(mktemp -d "${TMPDIR:-/tmp}/memlens-vscode.XXXXXX")"
  FRESH_STATE=1   # removed on exit unless MEMLENS_KEEP_STATE=1
fi
cleanup_state() {
  if [ "${FRESH_STATE:-0}" = 1 ] && [ "${MEMLENS_KEEP_STATE:-0}" != 1 ]; then rm -rf "$STATE"; fi
}
trap cleanup_state EXIT
USER_DATA="$STATE/user-data"
EXTENSIONS="$STATE/extensions"
CONFIG="$STATE/config.yaml"
mkdir -p "$USER_DATA/User" "$EXTENSIONS"

# Refuse a port that is taken, rather than let code-server die with EADDRINUSE later.
if ! "$NODE" -e '
  const s = require("net").createServer();
  s.once("error", e => { console.error(e.code); process.exit(1); });
  s.listen(+process.argv[1], "127.0.0.1", () => s.close());' "$PORT" 2>/dev/null; then
  echo "memlens/vscode: 127.0.0.1:$PORT is already in use; pass another PORT" >&2
  exit 1
fi

cat >"$CONFIG" <<EOF
bind-addr: 127.0.0.1:$PORT
auth: none
cert: false
EOF

# settings.json: keep what a reused state folder has, force the keys the demo and the tests
# rely on (VS Code's own AI chat would otherwise open beside ours), then the caller's extras.
"$NODE" -e '
  const fs = require("fs");
  const [file, extra] = process.argv.slice(1);
  let settings = {};
  if (fs.existsSync(file)) {
    try { settings = JSON.parse(fs.readFileSync(file, "utf8")); }
    catch (e) { console.error(`memlens/vscode: ${file} is not plain JSON (${e.message}); rewriting it`); }
  }
  Object.assign(settings, {
    "chat.disableAIFeatures": true,
    "workbench.startupEditor": "none",
    "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "extensions.ignoreRecommendations": true,
    "update.mode": "none",
    "workbench.enableExperiments": false,
    "security.workspace.trust.enabled": process.env.MEMLENS_WORKSPACE_TRUST === "1",
    "security.workspace.trust.startupPrompt": "never",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "git.openRepositoryInParentFolders": "never",
  });
  if (extra) Object.assign(settings, JSON.parse(extra));
  fs.writeFileSync(file, JSON.stringify(settings, null, 2) + "\n");
' "$USER_DATA/User/settings.json" "${MEMLENS_VSCODE_SETTINGS:-}"

COMMON=(--config "$CONFIG" --user-data-dir "$USER_DATA" --extensions-dir "$EXTENSIONS")

if [ -n "${MEMLENS_VSIX:-}" ]; then
  if [ ! -f "$MEMLENS_VSIX" ]; then
    echo "memlens/vscode: MEMLENS_VSIX=$MEMLENS_VSIX does not exist" >&2
    exit 1
  fi
  echo "memlens/vscode: installing extension $MEMLENS_VSIX"
  if ! "$NODE" "$ENTRY" "${COMMON[@]}" --install-extension "$MEMLENS_VSIX" --force; then
    echo "memlens/vscode: FAILED: installing $MEMLENS_VSIX into code-server (its message is above)" >&2
    echo "memlens/vscode: what to do: rebuild the package (npm run package) and start again" >&2
    exit 1
  fi
fi

TRUST_FLAG=(--disable-workspace-trust)
if [ "${MEMLENS_WORKSPACE_TRUST:-0}" = 1 ]; then TRUST_FLAG=(); fi
echo "memlens/vscode: starting code-server on 127.0.0.1:$PORT for $WORKSPACE (state: $STATE)"
SERVER_LOG="${MEMLENS_SERVER_LOG:-/dev/stdout}"
if [ -n "${MEMLENS_SERVER_LOG:-}" ]; then
  : >"$SERVER_LOG"
  echo "memlens/vscode: code-server's own log: $SERVER_LOG"
fi
"$NODE" "$ENTRY" "${COMMON[@]}" \
  --bind-addr "127.0.0.1:$PORT" --auth none \
  --disable-telemetry --disable-update-check "${TRUST_FLAG[@]}" \
  --disable-getting-started-override --ignore-last-opened \
  "$WORKSPACE" >>"$SERVER_LOG" 2>&1 &
CS_PID=$!
echo "$CS_PID" >"$STATE/pid"

stop() {
  trap - TERM INT HUP
  kill -TERM "$CS_PID" 2>/dev/null || true
  wait "$CS_PID" 2>/dev/null || true
  cleanup_state
  exit 143
}
trap stop TERM INT HUP

# Wait until the HTTP endpoint answers (event-driven on code-server's side: /healthz answers
# as soon as the server listens), or code-server dies, or the time-out runs out.
URL="$("$NODE" -e 'process.stdout.write(`http://127.0.0.1:${process.argv[1]}/?folder=${encodeURIComponent(process.argv[2])}`)' "$PORT" "$WORKSPACE")"
if ! "$NODE" -e '
  const [port, pid, timeout] = process.argv.slice(1).map(Number);
  const deadline = Date.now() + timeout * 1000;
  (async () => {
    for (;;) {
      try { process.kill(pid, 0); } catch { console.error("memlens/vscode: code-server exited before it was ready"); process.exit(1); }
      try {
        const r = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (r.ok) process.exit(0);
      } catch {}
      if (Date.now() > deadline) { console.error(`memlens/vscode: no answer on 127.0.0.1:${port} after ${timeout} s`); process.exit(1); }
      await new Promise(r => setTimeout(r, 100));
    }
  })();' "$PORT" "$CS_PID" "${MEMLENS_START_TIMEOUT:-120}"; then
  kill -TERM "$CS_PID" 2>/dev/null || true
  wait "$CS_PID" 2>/dev/null || true
  if [ -n "${MEMLENS_SERVER_LOG:-}" ]; then tail -n 20 "$SERVER_LOG" >&2; fi
  cleanup_state
  echo "memlens/vscode: what to do: read code-server's lines above (a port in use: pass another PORT or MEMLENS_PORT; slow start: raise MEMLENS_START_TIMEOUT)" >&2
  exit 1
fi
echo "$URL" >"$STATE/url"
echo "memlens/vscode: ready in $(elapsed) s"
echo "memlens/vscode: URL $URL"
cat <<EOF

  Memory Lens is running in VS Code. Open this in a browser:

      $URL

  Stop it: Ctrl-C here.
  Your own folder instead: bash scripts/vscode/start.sh /path/to/your/repo [PORT]
    (with MEMLENS_VSIX=\$PWD/memlens-0.1.0.vsix to install the extension; docs/install.md)

EOF

set +e
wait "$CS_PID"
rc=$?
echo "memlens/vscode: code-server exited ($rc)"
cleanup_state
exit "$rc"
