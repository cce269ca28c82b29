#!/usr/bin/env bash
# README command 1: install everything, then show the demo workspace's merged memory.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
demo=examples/demo
echo "== memlens show $demo (HOME = $demo/.home) =="
.venv/bin/memlens show "$demo" --home "$demo/.home"
echo
echo "== memlens check $demo =="
.venv/bin/memlens check "$demo" --home "$demo/.home" || true
