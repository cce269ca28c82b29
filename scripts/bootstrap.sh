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
  { .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip &&
    .venv/bin/python -m pip install --disable-pip-version-check -e '.[dev]'; } >"$log" 2>&1 &
  pid=$!; started=$SECONDS
  # Every 5 s: how many packages pip has collected so far and what it is doing.
  while kill -0 "$pid" 2>/dev/null; do
    for _ in 1 2 3 4 5; do kill -0 "$pid" 2>/dev/null && sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "  ... $((SECONDS - started)) s, $(grep -c '^Collecting' "$log" 2>/dev/null || echo 0) packages collected" \
        "($(tail -n 1 "$log" | tr -cd '[:print:]' | cut -c1-60))"
    fi
  done
  if ! wait "$pid"; then
    tail -n 30 "$log" >&2
    echo "pip install failed (full log: $log)" >&2
    exit 1
  fi
  echo "  Python packages installed in $((SECONDS - started)) s"
  echo "$want" > "$stamp"
fi
