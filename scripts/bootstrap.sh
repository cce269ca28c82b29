#!/usr/bin/env bash
# Installs everything the Python side needs into ./.venv (idempotent, quick when up to date).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Memory Lens needs Python 3.11 or newer (found: $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.memlens-installed
want=$(cat pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log=.venv/pip-install.log
  echo "Installing Memory Lens's Python packages into .venv (log: $log)"
  if ! { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip &&
         .venv/bin/python -m pip install --disable-pip-version-check -e '.[dev]'; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "pip install failed (full log: $log)" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi
