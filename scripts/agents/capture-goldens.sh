#!/usr/bin/env bash
# Re-captures the conformance goldens (tests/conformance/captured/<agent>-<version>/<id>.json):
# what each pinned real agent sends its model for every scenario, run offline against the
# fake model (docs/reference.md "Conformance with the real agents"). Installs the agents first
# (cached). Arguments go to the capture tool, e.g. --only gemini@0.61.0, --jobs 3, --reextract (no
# agent runs: re-read the last requests).
#
#   bash scripts/agents/capture-goldens.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
python=".venv/bin/python"
[ -x "$python" ] || python=python3
bash scripts/agents/install.sh >/dev/null
PYTHONPATH="$PWD:$PWD/server${PYTHONPATH:+:$PYTHONPATH}" "$python" -m tests.conformance.capture \
  --regenerate "$@"
