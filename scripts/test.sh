#!/usr/bin/env bash
# README command 2: install everything, then lint, type-check and run every test suite:
# Python (ruff, mypy --strict, pytest incl. the pytest-lsp suite), TypeScript (the generated
# protocol types are current, tsc --strict, bundle, vsix), the grammars
# (vscode-tmgrammar-test) and the end-to-end suite in a real VS Code (code-server + Chromium,
# installed and cached by scripts/vscode/install.sh), then the packaged .vsix offline
# (scripts/vscode/run-offline-e2e.sh: unshare -n, system python3).
# Then the conformance suite: the real agents (Gemini CLI, Claude Code, Codex from the npm
# registry, cached by scripts/agents/install.sh) run offline against a fake model and what
# they send is compared with memlens (tests/conformance; MEMLENS_SKIP_CONFORMANCE=1 skips it).
# MEMLENS_SKIP_E2E=1 skips the real-VS-Code part (for quick local runs).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time, printed last (also on failure): where CI's minutes go.
stage_names=() stage_seconds=() stage_started=$SECONDS
stage() {  # stage NAME: the stage NAME starts now
  stage_names+=("$1"); stage_seconds+=("$SECONDS")
}
stage_times() {
  local i end
  echo "== stage times (s) =="
  for i in "${!stage_names[@]}"; do
    end="${stage_seconds[$((i + 1))]:-$SECONDS}"
    printf '%6d  %s\n' "$((end - stage_seconds[i]))" "${stage_names[$i]}"
  done
  printf '%6d  total\n' "$((SECONDS - stage_started))"
}
trap stage_times EXIT
stage "install (bootstrap, node, neovim)"
bash scripts/bootstrap.sh
bash scripts/node-setup.sh
# Neovim for tests/test_neovim.py (Debian's package; the test skips, saying so, without it)
bash scripts/editors/install-neovim.sh || true

stage "lint, types, contracts, bundle"
echo "== ruff =="
.venv/bin/ruff check server tests bench
echo "== mypy --strict (engine) =="
.venv/bin/mypy
echo "== layering contracts (import-linter; pyproject.toml, docs/architecture.md) =="
if ! contracts="$(PYTHONPATH=server .venv/bin/lint-imports --no-cache 2>&1)"; then
  echo "$contracts" | sed -n '/^Contracts$/,$p' >&2
  exit 1
fi
echo "$contracts" | grep "^Contracts:"
echo "== the extension's protocol types match the server's models =="
.venv/bin/python scripts/gen_types.py --check
echo "== tsc --strict, esbuild bundle, vsix =="
npm run --silent package 2>&1 | grep -v "nodedir" | tail -3
if [ "${MEMLENS_SKIP_CONFORMANCE:-}" != 1 ]; then
  # before pytest: tests/test_agent_versions.py::test_the_real_installs reads these installs
  stage "agents install"
  echo "== the real agents: install or reuse the cache (scripts/agents/install.sh) =="
  bash scripts/agents/install.sh >/dev/null
fi
stage "pytest"
# The unit and LSP suites on every CPU (pytest-xdist; each worker has its own fork server,
# tests/lsp/fork_server.py): CPU-bound, they took one core of CI's two for ~15 minutes.
# MEMLENS_TEST_WORKERS=0 runs them in this one process.
workers="${MEMLENS_TEST_WORKERS:-$(nproc 2>/dev/null || echo 2)}"
[ "$workers" -gt 4 ] && workers=4
echo "== pytest ($workers workers) =="
if [ "$workers" -gt 1 ]; then
  .venv/bin/pytest -q -p no:cacheprovider --durations=25 -n "$workers" "$@"
else
  .venv/bin/pytest -q -p no:cacheprovider --durations=25 "$@"
fi
if [ "${MEMLENS_SKIP_CONFORMANCE:-}" = 1 ]; then
  echo "== conformance with the real agents skipped (MEMLENS_SKIP_CONFORMANCE=1) =="
else
  stage "conformance"
  echo "== conformance: the real agents (installed above by scripts/agents/install.sh) =="
  # The real repositories `memlens verify` is tested on (test_verify.py skips them without)
  bash scripts/agents/verify-repos.sh || echo "(verify-repos.sh failed: those tests skip)"
  .venv/bin/pytest -q -p no:cacheprovider --durations=25 -m conformance tests/conformance
fi

if [ "${MEMLENS_SKIP_E2E:-}" = 1 ]; then
  echo "== grammar and end-to-end suites skipped (MEMLENS_SKIP_E2E=1) =="
  exit 0
fi
stage "code-server install, grammar"
echo "== real VS Code (code-server) and Chromium: install or reuse the cache =="
bash scripts/vscode/install.sh >/dev/null
echo "== grammar tests (vscode-tmgrammar-test) =="
npm run --silent test:grammar 2>&1 | grep -v "nodedir"
stage "end-to-end"
echo "== end-to-end suite in code-server =="
e2e=0
MEMLENS_VSIX="$PWD/memlens-0.1.0.vsix" MEMLENS_PYTHON="$PWD/.venv/bin/python" \
  GEMINI_CLI_HOME="$PWD/examples/demo/.home" bash scripts/vscode/run-e2e.sh || e2e=$?
stage "chat oracle"
echo "== VS Code's own chat vs the vscode-chat profile (the chat oracle: a recording model) =="
.venv/bin/python tests/e2e/vscode-chat-oracle/trees.py || e2e=1
stage "vsix offline"
echo "== the .vsix offline: clean profile, fresh HOME, no network, system python3 =="
MEMLENS_VSIX="$PWD/memlens-0.1.0.vsix" bash scripts/vscode/run-offline-e2e.sh || e2e=1
exit "$e2e"
