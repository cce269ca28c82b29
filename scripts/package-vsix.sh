#!/usr/bin/env bash
# Packages the extension for one VS Code platform target with the server's Python dependencies
# inside (bundled/libs, from scripts/bundle_python.py; cached by pyproject's dependency list):
#
#   bash scripts/package-vsix.sh [TARGET]     (default: this machine, e.g. linux-x64)
#
# TARGET is a `vsce package --target` name: linux-x64, linux-arm64, alpine-x64, alpine-arm64,
# darwin-x64, darwin-arm64, win32-x64, win32-arm64 (any of them can be built on any machine:
# pip fetches that platform's wheels). The package for this machine is memlens-<version>.vsix
# (what the demo and the tests install); for another target, memlens-<target>-<version>.vsix.
# Expects dist/ built (npm run build). MEMLENS_BUNDLE_PYTHONS overrides the CPython versions.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${MEMLENS_BUNDLE_PIP_PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
host="$("$PY" -c 'import sys; sys.path.insert(0, "scripts"); import bundle_python; print(bundle_python.host_target())')"
target="${1:-$host}"
version="$(node -p 'require("./package.json").version')"
if [ "$target" = "$host" ]; then out="memlens-$version.vsix"; else out="memlens-$target-$version.vsix"; fi
"$PY" scripts/bundle_python.py --target "$target" ${MEMLENS_BUNDLE_PYTHONS:+--pythons "$MEMLENS_BUNDLE_PYTHONS"}
echo "package-vsix: vsce package --target $target -> $out"
npx vsce package --target "$target" --no-dependencies --no-rewrite-relative-links --out "$out" 2>&1 \
  | grep -v -e 'nodedir' -e '^ *$' || true
[ -f "$out" ] || { echo "package-vsix: $out was not written" >&2; exit 1; }
echo "package-vsix: $out ($(du -h "$out" | cut -f1), $(unzip -l "$out" | tail -1 | awk '{print $2}') files)"
