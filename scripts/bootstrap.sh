#!/usr/bin/env bash
# Installs everything the Python side needs into ./.venv (idempotent, quick when up to date).
# A failure says what failed and what to do; pip's progress shows every 10 s (scripts/lib/steps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS_PREFIX="bootstrap"
. scripts/lib/steps.sh
PYTHON="${PYTHON:-python3}"
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  fail "no '$PYTHON' on PATH: Memory Lens needs Python 3.11 or newer" \
    "install it (Debian/Ubuntu: apt-get install python3 python3-venv), or point PYTHON at one"
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  fail "Memory Lens needs Python 3.11 or newer (found: $("$PYTHON" --version 2>&1 || true))" \
    "install a newer Python and run PYTHON=/path/to/python3.X bash scripts/bootstrap.sh"
fi
if [ ! -x .venv/bin/python ]; then
  if ! venv_error=$("$PYTHON" -m venv .venv 2>&1); then
    rm -rf .venv
    fail "'$PYTHON -m venv .venv' failed: $venv_error" \
      "install the venv module (Debian/Ubuntu: apt-get install python3-venv), then run this again"
  fi
fi
stamp=.venv/.memlens-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log=.venv/pip-install.log
  : >"$log"
  started=$SECONDS
  hint="check that pip reaches its package index (pip config list shows where it looks; PIP_INDEX_URL overrides it), then run bash scripts/bootstrap.sh again"
  run_step --what "pip: upgrade pip in .venv" --log "$log" --hint "$hint" -- \
    .venv/bin/python -m pip install --disable-pip-version-check --upgrade pip
  run_step --what "pip: install memlens and its dev packages into .venv" --log "$log" \
    --hint "$hint" --folder .venv -- \
    .venv/bin/python -m pip install --disable-pip-version-check -e '.[dev]'
  echo "  Python packages installed in $((SECONDS - started)) s"
  echo "$want" > "$stamp"
fi
