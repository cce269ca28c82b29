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
# Both long steps (the wheels, vsce package) report progress every 10 s and fail loudly
# (scripts/lib/steps.sh); the log is build/package-vsix.log.
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS_PREFIX="package-vsix"
. scripts/lib/steps.sh
log="$PWD/build/package-vsix.log"
mkdir -p build
: >"$log"
PY="${MEMLENS_BUNDLE_PIP_PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
host="$("$PY" -c 'import sys; sys.path.insert(0, "scripts"); import bundle_python; print(bundle_python.host_target())')"
target="${1:-$host}"
version="$(node -p 'require("./package.json").version')"
if [ "$target" = "$host" ]; then out="memlens-$version.vsix"; else out="memlens-$target-$version.vsix"; fi
if [ ! -x node_modules/.bin/vsce ]; then
  fail "node_modules/.bin/vsce is missing" "run bash scripts/node-setup.sh first"
fi
run_step --what "the server's Python wheels for $target (scripts/bundle_python.py; cached)" \
  --log "$log" --folder bundled/libs \
  --hint "check that pip reaches its package index (only the first build of a target needs it), then run npm run package again" -- \
  "$PY" scripts/bundle_python.py --target "$target" ${MEMLENS_BUNDLE_PYTHONS:+--pythons "$MEMLENS_BUNDLE_PYTHONS"}
# The package is made from a staging copy (build/vsix-stage) so that the byte-code compiled for
# it never lands in the source tree: byte-code for the bundle and the server, with unchecked
# hashes (an installed extension never changes), for every bundled CPython found here.
# server/launch.py uses it when the manifest lists the interpreter's tag, so a first start
# does not compile some 300 modules.
stage="build/vsix-stage"
rm -rf "$stage" && mkdir -p "$stage/server" "$stage/bundled"
cp -r package.json README.md CHANGELOG.md LICENSE dist media syntaxes pyproject.toml "$stage/"
cp server/launch.py "$stage/server/"
# The server's modules and its data (memlens/data/verified-agents.json: the verified releases)
(cd server && find memlens \( -name '*.py' -o -path 'memlens/data/*.json' \) \
  -not -path '*/__pycache__/*' -print0 \
  | xargs -0 -I{} install -D -m 644 {} "../$stage/server/{}")
cp -r bundled/libs "$stage/bundled/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
grep -v '__pycache__' .vscodeignore > "$stage/.vscodeignore"
tags=()
for version in $("$PY" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["pythons"]))' "$stage/bundled/libs/memlens-bundle.json"); do
  for candidate in "$PY" "python$version"; do
    interpreter="$(command -v "$candidate" || true)"
    [ -n "$interpreter" ] || continue
    tag="$("$interpreter" -c 'import sys; print(sys.implementation.cache_tag)' 2>/dev/null || true)"
    [ "$tag" = "cpython-${version/./}" ] || continue
    case " ${tags[*]:-} " in *" $tag "*) continue ;; esac
    "$interpreter" -m compileall -q -j0 --invalidation-mode unchecked-hash \
      "$stage/bundled/libs" "$stage/server/memlens" >/dev/null || true
    tags+=("$tag")
  done
done
"$PY" - "$stage/bundled/libs/memlens-bundle.json" "${tags[@]}" <<'PY'
import json, sys
path, tags = sys.argv[1], sys.argv[2:]
manifest = json.load(open(path))
manifest["precompiled"] = tags
open(path, "w").write(json.dumps(manifest, indent=2) + "\n")
PY
echo "package-vsix: byte-code for ${tags[*]:-no bundled CPython found here}"
rm -f "$out"
# vsce's own secret scan grows with the square of the file count (scripts/vsix-secret-scan.mjs):
# the same rules in batches here, then vsce with its scan off.
run_step --what "secret scan of the staged package (vsce's rules, in batches)" --log "$log" \
  --hint "remove what it names from the package (or exclude it in .vscodeignore), then run npm run package again" -- \
  node scripts/vsix-secret-scan.mjs "$stage"
run_step --what "vsce package --target $target -> $out" --log "$log" \
  --hint "read the log above (a manifest field vsce refuses, a file too large), fix it, then run npm run package again" -- \
  bash -c 'cd "$1" && shift && exec "$@"' - "$stage" "$PWD/node_modules/.bin/vsce" package --target "$target" --no-dependencies \
    --no-rewrite-relative-links --allow-package-all-secrets --allow-package-env-file \
    --out "$PWD/$out"
{ grep -e ' WARNING ' -e ' DONE ' -e '^vsix-secret-scan: ' "$log" || true; } | tr -cd '[:print:]\n'
rm -rf "$stage"
[ -f "$out" ] || fail "vsce package exited 0 but $out was not written (log: $log)" "run npm run package again"
echo "package-vsix: $out ($(du -h "$out" | cut -f1), $(unzip -l "$out" | tail -1 | awk '{print $2}') files)"
