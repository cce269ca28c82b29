#!/usr/bin/env bash
# README command 1: install everything, print the demo workspace's merged memory (what Gemini
# CLI's /memory show would show), then serve the demo in a real VS Code (code-server on
# 127.0.0.1) with the Memory Lens extension installed, and print the URL to open.
# Stop it with Ctrl-C. MEMLENS_PORT picks the port (default 8080).
# Every step says what it does and how far it is; a failure says which step failed, why, and
# what to do; Ctrl-C or a failure leaves no install running (scripts/lib/steps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DEMO="$ROOT/examples/demo"
STEPS_PREFIX="demo"
. scripts/lib/steps.sh
T0=$SECONDS
STAGE=""
stage() { STAGE="[$1/5] $2"; echo "== $STAGE ($((SECONDS - T0)) s so far) =="; }
failed() {  # a part failed: it said why above; say which step, and how to go on
  fail "step $STAGE failed (its message is above)" \
    "fix what it says, then run bash scripts/demo.sh again: the finished steps are cached"
}

stage 1 "Python packages into .venv (cached by pyproject.toml's hash)"
run_part bash scripts/bootstrap.sh || failed

stage 2 "memlens show examples/demo (its HOME is examples/demo/.home)"
# --trusted: you trust this checkout's demo folder. Without it, as in Gemini CLI, a folder no
# rule in HOME/.gemini/trustedFolders.json matches is untrusted and loads no project memory.
# Without --agent, every agent whose files the demo holds, each in a section of its own.
.venv/bin/memlens show "$DEMO" --home "$DEMO/.home" --trusted || failed
echo
echo "== which agent reads which file (memlens report --markdown -) =="
.venv/bin/memlens report "$DEMO" --home "$DEMO/.home" --trusted --markdown - || failed
echo
echo "== memlens check examples/demo (exit 1: the demo's errors are on purpose) =="
rc=0
.venv/bin/memlens check "$DEMO" --home "$DEMO/.home" --trusted || rc=$?
[ "$rc" -le 1 ] || failed
echo

stage 3 "the extension: npm packages, bundle, the server's Python wheels (cached), memlens-0.1.0.vsix"
run_part bash scripts/node-setup.sh || failed
: >"$ROOT/.vsix-build.log"
run_step --what "npm run package (tsc, esbuild, the wheels, vsce package)" \
  --log "$ROOT/.vsix-build.log" \
  --hint "read the lines above; run npm run package alone to retry this step" -- \
  npm run --silent package
{ grep -e '^package-vsix: memlens' "$ROOT/.vsix-build.log" || true; } | tail -n 1

stage 4 "VS Code (code-server 4.139.1, Node 24, playwright: ~820 MB, cached under ~/.cache/memlens)"
run_part bash scripts/vscode/install.sh || failed

stage 5 "starting VS Code on the demo workspace"
trap - EXIT INT TERM
MEMLENS_VSIX="$ROOT/memlens-0.1.0.vsix" MEMLENS_PYTHON="$ROOT/.venv/bin/python" \
  GEMINI_CLI_HOME="$DEMO/.home" MEMLENS_KEEP_STATE=0 MEMLENS_SERVER_LOG="$ROOT/.vscode-server.log" \
  exec bash scripts/vscode/start.sh "$DEMO" "${MEMLENS_PORT:-8080}"
