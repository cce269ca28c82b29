#!/usr/bin/env bash
# The oracle attempt for `--agent vscode-chat` (issue 22): can a recording model see what VS
# Code's own chat (GitHub Copilot Chat, bundled with code-server) sends, offline?
#
#   bash scripts/vscode/chat-oracle.sh WORKSPACE [OUT]
#
# Packs tests/e2e/vscode-chat-oracle/ (a language model provider that records each request)
# into a VSIX, starts code-server on WORKSPACE with it (AI features on), opens the workbench in
# Chromium (tests/e2e/vscode-chat-oracle/drive.mjs), lets the extension open the chat in agent
# mode on the recording model and send a query, and reports how far that got. OUT (default a
# scratch folder) receives progress.log and request-N.json. Exit 0 only when a request was
# recorded. MEMLENS_ORACLE_ATTACH (workspace-relative paths, comma-separated) are attached to
# the query; MEMLENS_ORACLE_QUERY is the query (default "Say ok.").
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 WORKSPACE [OUT]" >&2; exit 2; }
WORKSPACE="$(cd "$1" && pwd -P)"
OUT="${2:-$(mktemp -d "${TMPDIR:-/tmp}/memlens-chat-oracle.XXXXXX")}"
mkdir -p "$OUT"; OUT="$(cd "$OUT" && pwd -P)"
RUN="$(mktemp -d "${TMPDIR:-/tmp}/memlens-chat-oracle-run.XXXXXX")"
SPID=""
cleanup() {
  if [ -n "$SPID" ]; then kill -TERM -- "-$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
  rm -rf "$RUN"
}
trap cleanup EXIT

# The VSIX: extension/ holds the extension; a minimal manifest and content types beside it.
mkdir -p "$RUN/vsix/extension"
cp "$ROOT/tests/e2e/vscode-chat-oracle/package.json" "$ROOT/tests/e2e/vscode-chat-oracle/extension.js" "$RUN/vsix/extension/"
cat >"$RUN/vsix/extension.vsixmanifest" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011">
  <Metadata>
    <Identity Language="en-US" Id="memlens-recording-model" Version="0.0.1" Publisher="memlens-test"/>
    <DisplayName>Memory Lens recording model (test only)</DisplayName>
    <Description xml:space="preserve">Records what VS Code's chat sends.</Description>
    <Categories>Other</Categories>
    <Properties>
      <Property Id="Microsoft.VisualStudio.Code.Engine" Value="^1.104.0"/>
    </Properties>
  </Metadata>
  <Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation>
  <Dependencies/>
  <Assets><Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" Addressable="true"/></Assets>
</PackageManifest>
XML
cat >"$RUN/vsix/[Content_Types].xml" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension=".json" ContentType="application/json"/><Default Extension=".js" ContentType="application/javascript"/><Default Extension=".vsixmanifest" ContentType="text/xml"/></Types>
XML
(cd "$RUN/vsix" && zip -qr "$RUN/recorder.vsix" .)

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
export MEMLENS_ORACLE_OUT="$OUT"
export MEMLENS_ORACLE_QUERY="${MEMLENS_ORACLE_QUERY:-Say ok.}"
export MEMLENS_VSIX="$RUN/recorder.vsix"
# MEMLENS_ORACLE_HOME: the HOME code-server (so Copilot Chat's `~/.copilot`, `~/.claude`) sees;
# the install cache stays where it is.
if [ -n "${MEMLENS_ORACLE_HOME:-}" ]; then
  export XDG_CACHE_HOME="${XDG_CACHE_HOME:-$HOME/.cache}"
  export HOME="$(cd "$MEMLENS_ORACLE_HOME" && pwd -P)"
fi
export MEMLENS_STATE_DIR="$RUN/state"
# AI features on (start.sh turns them off for the other tests); no GitHub session exists.
# (The default sits in a variable: a literal "}" inside ${VAR:-…} would end the expansion early
# and append a stray "}" to a value the caller set.)
ai_on='{"chat.disableAIFeatures": false, "chat.agent.enabled": true}'
export MEMLENS_VSCODE_SETTINGS="${MEMLENS_VSCODE_SETTINGS:-$ai_on}"
setsid bash "$HERE/start.sh" "$WORKSPACE" "$PORT" >"$OUT/code-server.log" 2>&1 &
SPID=$!
for _ in $(seq 1 600); do
  [ -f "$RUN/state/url" ] && break
  kill -0 "$SPID" 2>/dev/null || { echo "chat-oracle: code-server did not start (see $OUT/code-server.log)" >&2; exit 1; }
  sleep 0.2
done
[ -f "$RUN/state/url" ] || { echo "chat-oracle: code-server not ready" >&2; exit 1; }
eval "$(bash "$HERE/install.sh" --env)"
export MEMLENS_VSCODE_URL="$(cat "$RUN/state/url")" MEMLENS_PLAYWRIGHT_NODE_PATH MEMLENS_CHROMIUM
export MEMLENS_E2E_ARTIFACTS="$OUT"
set +e
"$MEMLENS_NODE" "$ROOT/tests/e2e/vscode-chat-oracle/drive.mjs"
rc=$?
cp -r "$RUN/state/user-data/logs" "$OUT/vscode-logs" 2>/dev/null
echo "chat-oracle: results in $OUT (exit $rc)"
exit $rc
