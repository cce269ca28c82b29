#!/usr/bin/env bash
# Checks out the real repositories `memlens verify` is tested on (tests/conformance/
# test_verify.py) at fixed commits, into ${MEMLENS_VERIFY_REPOS:-~/.cache/memlens/verify-repos}.
# Idempotent. Both are MIT licensed; nothing of them is copied into this repository.
set -euo pipefail
DEST="${MEMLENS_VERIFY_REPOS:-${XDG_CACHE_HOME:-$HOME/.cache}/memlens/verify-repos}"
mkdir -p "$DEST"
# url name commit: AGENTS.md with CLAUDE.md a symlink to it; CLAUDE.md + a subfolder CLAUDE.md
REPOS=(
  "https://github.com/openai/openai-agents-python openai-agents-python 7f7a44f8d"
  "https://github.com/anthropics/claude-code-action claude-code-action 24dcd50c"
)
for entry in "${REPOS[@]}"; do
  read -r url name commit <<<"$entry"
  folder="$DEST/$name"
  if [ -d "$folder/.git" ] && [ "$(git -C "$folder" rev-parse --short=8 HEAD)" = "${commit:0:8}" ]; then
    continue
  fi
  rm -rf "$folder"
  # Bounded: where only the package registries are reachable (CI), this fails fast and the
  # tests that need these repositories skip.
  if ! timeout 120 git -c http.lowSpeedLimit=1000 -c http.lowSpeedTime=20 \
      clone --quiet --filter=blob:none "$url" "$folder"; then
    rm -rf "$folder"
    echo "memlens/verify-repos: FAILED: git clone $url (unreachable, or over 120 s): the tests that need $name skip; run this again where it is reachable" >&2
    exit 1
  fi
  if ! git -C "$folder" checkout --quiet "$commit"; then
    echo "memlens/verify-repos: FAILED: $name has no commit $commit: update REPOS in $0" >&2
    exit 1
  fi
  echo "memlens/verify-repos: $name at $commit in $folder" >&2
done
