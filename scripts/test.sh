#!/usr/bin/env bash
# README command 2: install everything, lint, type-check and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
echo "== ruff =="
.venv/bin/ruff check server tests bench
echo "== mypy --strict (engine) =="
.venv/bin/mypy
echo "== pytest =="
.venv/bin/pytest -q -p no:cacheprovider "$@"
