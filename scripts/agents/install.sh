#!/usr/bin/env bash
# Installs the reference agents (docs/reference.md "Conformance with the real agents") from the npm
# registry into a per-user cache keyed by version, as scripts/vscode/install.sh caches code-server,
# and prints one line per agent: NAME@VERSION<TAB>path of its binary. Idempotent; silent apart from
# those lines when everything is cached.
#
#   bash scripts/agents/install.sh                       # the pinned set below
#   bash scripts/agents/install.sh gemini@0.61.0 codex@0.169.0
#
# NAME is gemini, claude, codex, copilot, opencode or pi (or the npm package name). Cache layout:
#   CACHE_ROOT/agents/<name>-<version>/node_modules/...   the npm install (--prefix)
#   CACHE_ROOT/agents/<name>-<version>/.complete           stamp, written last
# CACHE_ROOT = ${XDG_CACHE_HOME:-$HOME/.cache}/memlens. Installs of one version are serialised
# with flock, so parallel test runs share one install.
set -euo pipefail
STEPS_PREFIX="memlens/agents"
STEPS_SAY=say_err
say_err() { echo "$*" >&2; }  # stdout carries only the NAME@VERSION<TAB>path lines
# shellcheck source=../lib/steps.sh
. "$(dirname "$0")/../lib/steps.sh"
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  fail "the agents install with npm: node and npm must be on PATH" \
    "install Node.js 20 or newer with npm, then run bash scripts/agents/install.sh again"
fi

DEFAULT_AGENTS=(gemini@0.61.0 gemini@0.43.0 claude@2.1.330 claude@2.1.332 codex@0.169.0 copilot@1.0.102 opencode@1.18.33 pi@0.73.1)
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/memlens/agents"
mkdir -p "$CACHE_ROOT"

package_of() {  # short name -> npm package
  case "$1" in
    gemini | @google/gemini-cli) echo "@google/gemini-cli" ;;
    claude | @anthropic-ai/claude-code) echo "@anthropic-ai/claude-code" ;;
    codex | @openai/codex) echo "@openai/codex" ;;
    copilot | @github/copilot) echo "@github/copilot" ;;
    opencode | opencode-ai) echo "opencode-ai" ;;
    pi | @mariozechner/pi-coding-agent) echo "@mariozechner/pi-coding-agent" ;;
    *) echo "memlens/agents: unknown agent '$1' (gemini, claude, codex, copilot, opencode or pi)" >&2; return 1 ;;
  esac
}

short_of() {  # npm package -> short name
  case "$1" in
    @google/gemini-cli) echo gemini ;;
    @anthropic-ai/claude-code) echo claude ;;
    @openai/codex) echo codex ;;
    @github/copilot) echo copilot ;;
    opencode-ai) echo opencode ;;
    @mariozechner/pi-coding-agent) echo pi ;;
  esac
}

binary_of() {  # folder, package -> the agent's entry point (the npm bin the package declares)
  local folder="$1" package="$2"
  echo "$folder/node_modules/.bin/$(short_of "$package")"
}

install_one() {
  local spec="$1" name version package folder
  name="${spec%@*}"
  version="${spec##*@}"
  if [ -z "$version" ] || [ "$version" = "$spec" ]; then
    echo "memlens/agents: '$spec' needs a version (NAME@VERSION)" >&2
    return 1
  fi
  package=$(package_of "$name")
  name=$(short_of "$package")
  folder="$CACHE_ROOT/$name-$version"
  local stamp="$folder/.complete" want="$package@$version arch=$(uname -m)"
  if ! { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }; then
    exec 9>"$CACHE_ROOT/.$name-$version.lock"
    flock 9
    if ! { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; }; then
      local log="$CACHE_ROOT/install-$name-$version.log" started=$SECONDS
      echo "memlens/agents: installing $package@$version into $folder" >&2
      rm -rf "$folder"
      mkdir -p "$folder"
      # npm 11 gates install scripts behind allowScripts: approve the agent's own (Claude
      # Code puts its native binary in place in its postinstall).
      printf '{ "private": true, "allowScripts": { "%s": true } }\n' "$package" >"$folder/package.json"
      : >"$log"
      run_step --what "npm install $package@$version" --log "$log" --folder "$folder" \
        --hint "check that npm reaches its registry (npm ping; npm config get registry), then run bash scripts/agents/install.sh again" -- \
        npm install --prefix "$folder" --no-audit --no-fund --no-update-notifier \
          --loglevel=warn "$package@$version"
      if [ "$name" = claude ]; then
        # The postinstall may not have run (allowScripts, --ignore-scripts in a user's
        # npmrc): redo it; it is idempotent.
        (cd "$folder/node_modules/$package" && node install.cjs) >>"$log" 2>&1 || {
          tail -n 20 "$log" >&2
          echo "memlens/agents: Claude Code's install.cjs failed (log: $log)" >&2
          return 1
        }
      fi
      local bin got
      bin=$(binary_of "$folder" "$package")
      # pi prints its version on stderr: read both streams.
      if ! got=$(timeout 60 "$bin" --version </dev/null 2>&1); then
        printf '%s\n' "$got" >>"$log"
        tail -n 20 "$log" >&2
        echo "memlens/agents: $bin --version failed (log: $log)" >&2
        return 1
      fi
      case "$got" in
        *"$version"*) ;;
        *) echo "memlens/agents: $bin --version says '$got', expected $version" >&2; return 1 ;;
      esac
      echo "$want" >"$stamp"
      echo "memlens/agents: $package@$version installed in $((SECONDS - started)) s" >&2
    fi
    exec 9>&-
  fi
  printf '%s@%s\t%s\n' "$name" "$version" "$(binary_of "$folder" "$package")"
}

if [ "$#" = 0 ]; then set -- "${DEFAULT_AGENTS[@]}"; fi
for spec in "$@"; do install_one "$spec"; done
# The sandbox `memlens verify` runs the agents in (memlens/verify/sandbox.py): bubblewrap.
# Without it verify refuses (unless told --unsafe-no-sandbox), so say why on stderr.
bash "$(dirname "$0")/../lib/install-debian-package.sh" bubblewrap bwrap \
  "memlens verify runs the agents in it" >&2 || true
