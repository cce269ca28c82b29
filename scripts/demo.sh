#!/usr/bin/env bash
# README command 1: install everything, print the demo workspace's merged memory (what Gemini
# CLI's /memory show would show), then serve the demo in a real VS Code (code-server on
# 127.0.0.1) with the Memory Lens extension installed, and print the URL to open.
# Stop it with Ctrl-C. MEMLENS_PORT picks the port (default 8080).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
DEMO="$ROOT/examples/demo"
bash scripts/bootstrap.sh

echo "== memlens show examples/demo (its HOME is examples/demo/.home) =="
# --trusted: you trust this checkout's demo folder. Without it, as in Gemini CLI, a folder no
# rule in HOME/.gemini/trustedFolders.json matches is untrusted and loads no project memory.
.venv/bin/memlens show "$DEMO" --home "$DEMO/.home" --trusted
echo
echo "== the same folder as Claude Code reads it (memlens show --dialect claude) =="
.venv/bin/memlens show "$DEMO" --home "$DEMO/.home" --dialect claude
echo
echo "== memlens check examples/demo =="
.venv/bin/memlens check "$DEMO" --home "$DEMO/.home" --trusted || true
echo

echo "== building the extension (memlens-0.1.0.vsix) =="
bash scripts/node-setup.sh
npm run --silent package 2>&1 | grep -v "nodedir" | tail -1
echo "== installing or reusing VS Code (code-server) =="
bash scripts/vscode/install.sh >/dev/null

echo "== starting VS Code on the demo workspace =="
MEMLENS_VSIX="$ROOT/memlens-0.1.0.vsix" MEMLENS_PYTHON="$ROOT/.venv/bin/python" \
  GEMINI_CLI_HOME="$DEMO/.home" MEMLENS_KEEP_STATE=0 \
  exec bash scripts/vscode/start.sh "$DEMO" "${MEMLENS_PORT:-8080}"
