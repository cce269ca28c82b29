#!/usr/bin/env bash
# Installs Neovim (Debian's package `neovim`) for the headless Neovim test (tests/test_neovim.py)
# when it is missing. Quick when it is there. Exit 1, with what to do, when it cannot.
set -euo pipefail
if command -v nvim >/dev/null 2>&1; then
  echo "neovim: $(nvim --version | head -n 1) ($(command -v nvim))"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "neovim: not installed and this is not a Debian system: install Neovim 0.7 or newer with your package manager" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "neovim: not installed; run as root: apt-get install neovim" >&2
    exit 1
  fi
fi
log=$(mktemp -t memlens-neovim-XXXXXX.log)
echo "neovim: installing Debian's package neovim (log: $log) ..."
if ! { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends neovim \
    || { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q \
         && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends neovim; }; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "neovim: apt-get install neovim failed (full log: $log); the Neovim test will skip" >&2
  exit 1
fi
rm -f "$log"
echo "neovim: installed $(nvim --version | head -n 1)"
