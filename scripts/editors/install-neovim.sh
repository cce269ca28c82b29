#!/usr/bin/env bash
# Installs Neovim (Debian's package `neovim`) for the headless Neovim test (tests/test_neovim.py)
# when it is missing. Quick when it is there. Exit 1, with what to do, when it cannot.
set -euo pipefail
exec bash "$(dirname "$0")/../lib/install-debian-package.sh" neovim nvim \
  "the headless Neovim test skips without it"
