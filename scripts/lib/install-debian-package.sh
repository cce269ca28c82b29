#!/usr/bin/env bash
# Installs one of Debian's packages when its command is missing (quick when it is there):
#   bash scripts/lib/install-debian-package.sh PACKAGE COMMAND "what it is for"
# Exit 1, with what to do, when it cannot (not Debian, not root and no sudo, apt-get failed).
set -euo pipefail
package="$1" command="$2" purpose="$3"
if command -v "$command" >/dev/null 2>&1; then
  echo "$package: $(command -v "$command")"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$package: not installed and this is not a Debian system: install $package with your package manager ($purpose)" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "$package: not installed; run as root: apt-get install $package ($purpose)" >&2
    exit 1
  fi
fi
log=$(mktemp -t "memlens-$package-XXXXXX.log")
echo "$package: installing Debian's package $package (log: $log) ..."
if ! { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package" \
    || { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q \
         && "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package"; }; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "$package: apt-get install $package failed (full log: $log) ($purpose)" >&2
  exit 1
fi
rm -f "$log"
echo "$package: installed $(command -v "$command")"
