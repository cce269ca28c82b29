#!/usr/bin/env bash
# README command 1: install everything, print the demo workspace's merged memory (what Gemini
# CLI's /memory show would show), then serve the demo in a real VS Code (code-server on
# 127.0.0.1) with the Memory Lens extension installed, and print the URL to open.
# Stop it with Ctrl-C. MEMLENS_PORT picks the port (default 8080).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DEMO="$ROOT/examples/demo"
T0=$SECONDS
stage() { echo "== [$1/5] $2 ($((SECONDS - T0)) s so far) =="; }
stage 1 "Python packages into .venv (cached by pyproject.toml's hash)"
bash scripts/bootstrap.sh

stage 2 "memlens show examples/demo (its HOME is examples/demo/.home)"
# --trusted: you trust this checkout's demo folder. Without it, as in Gemini CLI, a folder no
# rule in HOME/.gemini/trustedFolders.json matches is untrusted and loads no project memory.
.venv/bin/memlens show "$DEMO" --home "$DEMO/.home" --trusted
echo
echo "== the same folder as Claude Code reads it (memlens show --agent claude) =="
.venv/bin/memlens show "$DEMO" --home "$DEMO/.home" --agent claude
echo
echo "== memlens check examples/demo =="
.venv/bin/memlens check "$DEMO" --home "$DEMO/.home" --trusted || true
echo

stage 3 "the extension: npm packages, bundle, the server's Python wheels (cached), memlens-0.1.0.vsix"
bash scripts/node-setup.sh
build_log="$ROOT/.vsix-build.log"
set +e
npm run --silent package 2>&1 | tee "$build_log" | grep --line-buffered -e '^bundle-python' -e '^package-vsix'
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" != 0 ]; then
  grep -v nodedir "$build_log" | tail -n 30 >&2
  echo "building the extension failed (full log: $build_log)" >&2
  exit 1
fi
stage 4 "VS Code (code-server 4.139.1, Node 24, playwright: ~820 MB, cached under ~/.cache/memlens)"
bash scripts/vscode/install.sh

stage 5 "starting VS Code on the demo workspace"
MEMLENS_VSIX="$ROOT/memlens-0.1.0.vsix" MEMLENS_PYTHON="$ROOT/.venv/bin/python" \
  GEMINI_CLI_HOME="$DEMO/.home" MEMLENS_KEEP_STATE=0 \
  exec bash scripts/vscode/start.sh "$DEMO" "${MEMLENS_PORT:-8080}"
