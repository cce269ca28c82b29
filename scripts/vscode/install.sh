#!/usr/bin/env bash
# Installs a real VS Code (code-server from the npm registry), the Node 24 it needs and
# playwright-core into a per-user cache keyed by version, plus the Debian packages they need
# (docs/reference.md "Set-up in detail"). Idempotent and prompt-free: a second run only checks and
# prints the paths.
#
#   bash scripts/vscode/install.sh          # install if needed, print the paths
#   eval "$(bash scripts/vscode/install.sh --env)"   # same, then export MEMLENS_* variables
#
# Cache layout (CACHE = ${XDG_CACHE_HOME:-$HOME/.cache}/memlens/code-server-$CODE_SERVER_VERSION):
#   CACHE/node/        npm package node@$NODE_VERSION (binary + headers in
#                      node_modules/node/node_modules/node-linux-<arch>)
#   CACHE/code-server/ npm package code-server (entry: node_modules/code-server/out/node/entry.js)
#   CACHE/playwright/  npm package playwright-core (driven against Debian's /usr/bin/chromium)
#   CACHE/env.sh       the MEMLENS_* variables below, to source
#   CACHE/.complete    stamp: present only after everything above installed
#
# Overrides (environment): MEMLENS_CODE_SERVER_VERSION, MEMLENS_NODE_VERSION,
# MEMLENS_PLAYWRIGHT_VERSION, MEMLENS_SKIP_APT=1 (don't touch Debian packages).
set -euo pipefail
STEPS_PREFIX="memlens/vscode"
STEPS_SAY=say
# shellcheck source=../lib/steps.sh
. "$(dirname "$0")/../lib/steps.sh"
NPM_HINT="check that npm reaches its registry (npm ping; npm config get registry), then run bash scripts/vscode/install.sh again (it starts over in a clean cache folder)"

CODE_SERVER_VERSION="${MEMLENS_CODE_SERVER_VERSION:-4.139.1}"
NODE_VERSION="${MEMLENS_NODE_VERSION:-24.21.0}"
PLAYWRIGHT_VERSION="${MEMLENS_PLAYWRIGHT_VERSION:-1.64.1}"

print_env=0
case "${1:-}" in
  --env) print_env=1 ;;
  "") ;;
  *) echo "usage: $0 [--env]" >&2; exit 2 ;;
esac

# Everything informative goes to stderr when --env is asked for, so stdout stays eval-able.
say() { if [ "$print_env" = 1 ]; then echo "$*" >&2; else echo "$*"; fi; }

t_start=$(date +%s.%N)
elapsed() { awk -v a="$t_start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------- Debian packages
# chromium + fonts: the browser the end-to-end tests drive; libkrb5-dev: the `kerberos` native
# module of VS Code; g++/make/python3/pkg-config: node-gyp builds of the other native modules.
APT_PACKAGES=(chromium fonts-liberation fonts-dejavu-core libkrb5-dev g++ make python3 pkg-config ca-certificates)

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

ensure_apt_packages() {
  if [ "${MEMLENS_SKIP_APT:-0}" = 1 ]; then return 0; fi
  if ! command -v dpkg-query >/dev/null 2>&1; then
    say "memlens/vscode: not a Debian system; make sure these are installed: ${APT_PACKAGES[*]}"
    return 0
  fi
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do pkg_installed "$p" || missing+=("$p"); done
  [ "${#missing[@]}" = 0 ] && return 0
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      fail "missing Debian packages: ${missing[*]}" "run as root: apt-get install ${missing[*]} (or MEMLENS_SKIP_APT=1 if you have them another way)"
    fi
  fi
  local apt_log
  apt_log=$(mktemp -t memlens-apt-XXXXXX.log)
  local apt_hint="check that apt reaches its mirrors (apt-get update), or install them yourself: apt-get install ${missing[*]}; MEMLENS_SKIP_APT=1 skips this step"
  run_step --what "apt-get update" --log "$apt_log" --hint "$apt_hint" -- \
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  run_step --what "apt-get install ${missing[*]}" --log "$apt_log" --hint "$apt_hint" -- \
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "${missing[@]}"
  rm -f "$apt_log"
}

ensure_apt_packages

# ---------------------------------------------------------------- npm packages (cached)
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/memlens"
CACHE="$CACHE_ROOT/code-server-$CODE_SERVER_VERSION"
STAMP="$CACHE/.complete"
STAMP_WANT="code-server=$CODE_SERVER_VERSION node=$NODE_VERSION playwright-core=$PLAYWRIGHT_VERSION arch=$(uname -m)"

node_home() {  # the arch-specific folder of the `node` npm package (bin/node + include/node)
  local d
  for d in "$CACHE"/node/node_modules/node/node_modules/node-linux-* \
           "$CACHE"/node/node_modules/node-linux-*; do
    if [ -x "$d/bin/node" ] && [ -f "$d/include/node/node.h" ]; then
      echo "$d"; return 0
    fi
  done
  return 1
}

install_all() {
  if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    fail "installing VS Code needs node and npm on PATH (found: node $(command -v node || echo none), npm $(command -v npm || echo none))" \
      "install Node.js 20 or newer with npm, then run bash scripts/vscode/install.sh again"
  fi
  local log="$CACHE_ROOT/install-code-server-$CODE_SERVER_VERSION.log"
  rm -rf "$CACHE"
  mkdir -p "$CACHE/node" "$CACHE/code-server" "$CACHE/playwright"
  : >"$log"
  # npm 11 gates dependency install scripts behind package.json's allowScripts (warning
  # only today, blocking later): approve exactly the ones this install needs.
  printf '{ "private": true, "allowScripts": { "node": true } }\n' >"$CACHE/node/package.json"
  printf '{ "private": true, "allowScripts": { "code-server": true, "argon2": true } }\n' \
    >"$CACHE/code-server/package.json"
  printf '{ "private": true }\n' >"$CACHE/playwright/package.json"
  local npm_flags=(--no-audit --no-fund --no-update-notifier --loglevel=warn)
  # run a step (scripts/lib/steps.sh): its output to the log; every 10 s a line says how far
  # it is (MB written into its folder, against the expected size when known, and the last
  # line this step wrote); on failure the log's tail, what failed and what to do; on exit or
  # Ctrl-C no npm process is left behind.
  run_logged() {
    local what="$1" folder="$2" expect_mb="$3"; shift 3
    run_step --what "$what" --log "$log" --folder "$folder" --expect-mb "$expect_mb" \
      --hint "$NPM_HINT" -- "$@"
  }
  # 1. Node 24 (npm's `node` package downloads node-linux-<arch> in its preinstall).
  run_logged "[1/4] npm install node@$NODE_VERSION" "$CACHE/node" 190 \
    npm install --prefix "$CACHE/node" "${npm_flags[@]}" "node@$NODE_VERSION"
  local nh
  if ! nh=$(node_home); then
    fail "node@$NODE_VERSION installed but no bin/node + include/node/node.h found under $CACHE/node" \
      "look at $log; remove $CACHE and run bash scripts/vscode/install.sh again"
  fi
  local got
  got=$("$nh/bin/node" --version)
  if [ "$got" != "v$NODE_VERSION" ]; then
    fail "expected node v$NODE_VERSION, got $got ($nh/bin/node)" \
      "remove $CACHE and run bash scripts/vscode/install.sh again"
  fi
  # 2. code-server, built with that Node first on PATH and node-gyp pointed at its headers
  #    (else node-gyp tries to download them, which fails on a closed network, or uses the
  #    system Node's headers from ~/.npmrc, which builds modules for the wrong ABI).
  #    npm itself is the system one, run by Node 24 (code-server's postinstall checks
  #    the Node version in npm's user agent).
  local npm_cli
  npm_cli=$(readlink -f "$(command -v npm)")
  mkdir -p "$CACHE/bin"
  ln -sf "$nh/bin/node" "$CACHE/bin/node"
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$nh/bin/node" "$npm_cli" >"$CACHE/bin/npm"
  chmod +x "$CACHE/bin/npm"
  run_logged "[2/4] npm install code-server@$CODE_SERVER_VERSION (downloads, then compiles native modules)" \
    "$CACHE/code-server" 620 \
    env PATH="$CACHE/bin:$PATH" npm_config_nodedir="$nh" \
      JOBS="$(nproc 2>/dev/null || echo 2)" \
      "$CACHE/bin/npm" install --prefix "$CACHE/code-server" "${npm_flags[@]}" \
        "code-server@$CODE_SERVER_VERSION"
  # 3. playwright-core (no browser download: it drives Debian's chromium).
  run_logged "[3/4] npm install playwright-core@$PLAYWRIGHT_VERSION" "$CACHE/playwright" 10 \
    env PATH="$CACHE/bin:$PATH" PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
      "$CACHE/bin/npm" install --prefix "$CACHE/playwright" "${npm_flags[@]}" \
        "playwright-core@$PLAYWRIGHT_VERSION"
  # 4. Check that VS Code's native modules load in Node 24 (a wrong-ABI build fails here,
  #    not later inside the running server).
  run_logged "[4/4] check native modules" "$CACHE/code-server" "" \
    "$nh/bin/node" -e '
      const base = process.argv[1] + "/node_modules/code-server/lib/vscode/node_modules/";
      for (const m of ["@vscode/spdlog", "node-pty", "kerberos", "@parcel/watcher", "@vscode/sqlite3", "@vscode/native-watchdog"]) {
        try { require(base + m); console.log("ok", m); }
        catch (e) { console.error("FAIL", m, e.message); process.exit(1); }
      }' "$CACHE/code-server"
  write_env "$nh"
  echo "$STAMP_WANT" >"$STAMP"
}

write_env() {
  local nh="$1"
  cat >"$CACHE/env.sh" <<EOF
# Written by scripts/vscode/install.sh; source it to get the paths.
export MEMLENS_VSCODE_CACHE='$CACHE'
export MEMLENS_NODE='$nh/bin/node'
export MEMLENS_NODE_HOME='$nh'
export MEMLENS_CODE_SERVER_ENTRY='$CACHE/code-server/node_modules/code-server/out/node/entry.js'
export MEMLENS_PLAYWRIGHT_NODE_PATH='$CACHE/playwright/node_modules'
export MEMLENS_CHROMIUM='/usr/bin/chromium'
EOF
}

mkdir -p "$CACHE_ROOT"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_WANT" ] && node_home >/dev/null; then
  status="cached"
else
  # One installer at a time per version (the demo, the tests and CI may race).
  exec 9>"$CACHE_ROOT/.code-server-$CODE_SERVER_VERSION.lock"
  if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
    say "memlens/vscode: another install is running; waiting for it ..."
    flock 9
  fi
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$STAMP_WANT" ] && node_home >/dev/null; then
    status="cached (installed by a concurrent run)"
  else
    say "memlens/vscode: installing into $CACHE"
    install_all
    status="installed"
  fi
fi

# shellcheck disable=SC1091
. "$CACHE/env.sh"
say "memlens/vscode: $status in $(elapsed) s"
say "  cache:        $MEMLENS_VSCODE_CACHE"
say "  node:         $MEMLENS_NODE ($("$MEMLENS_NODE" --version))"
say "  node headers: $MEMLENS_NODE_HOME/include/node"
say "  code-server:  $MEMLENS_CODE_SERVER_ENTRY"
say "  playwright:   $MEMLENS_PLAYWRIGHT_NODE_PATH/playwright-core"
say "  chromium:     $MEMLENS_CHROMIUM ($("$MEMLENS_CHROMIUM" --version 2>/dev/null || echo missing))"
if [ "$print_env" = 1 ]; then cat "$CACHE/env.sh"; fi
