"""The editor follows the chosen agent (docs/reference.md "Which agent, which version"):
`memlens/agents` lists the agents in use (pinned by `memlens.agents`, else found on PATH) first;
`memlens/show` for a file that is no agent's memory shows the chosen agent's view, named with its
version; an installed version newer than the newest verified one is served by the nearest profile
with `agent-version-unverified`; a memory file the chosen agent will not read gets
`agent-ignores-file`."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from memlens.agent_versions import basis_of
from memlens.agents import AGENT_IDS

from ..conftest import build_tree
from .conftest import SERVE, plain, start, uri

# An npm-style Gemini CLI 0.70.2 on PATH (never run: its package.json gives the version).
_PREFIX = Path(tempfile.mkdtemp(prefix="memlens-fake-agents-"))
atexit.register(shutil.rmtree, _PREFIX, ignore_errors=True)
_PACKAGE = _PREFIX / "lib" / "node_modules" / "@google" / "gemini-cli"
build_tree(_PACKAGE, {"package.json": json.dumps({"name": "@google/gemini-cli",
                                                  "version": "0.70.2"}),
                      "dist/index.js": "#!/bin/sh\nexit 3\n"})
(_PACKAGE / "dist" / "index.js").chmod(0o755)
(_PREFIX / "bin").mkdir()
(_PREFIX / "bin" / "gemini").symlink_to(_PACKAGE / "dist" / "index.js")

SERVER = ClientServerConfig(
    server_command=SERVE,
    server_env={**{k: v for k, v in os.environ.items() if k != "MEMLENS_AGENTS"},
                "PATH": f"{_PREFIX / 'bin'}:/usr/bin:/bin", "MEMLENS_LOG_LEVEL": "WARNING",
                "XDG_CACHE_HOME": str(_PREFIX / "cache")})


@pytest_lsp.fixture(config=SERVER)
async def detected(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, workspace)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def pinned(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[LanguageClient]:
    (workspace / "CLAUDE.md").write_text("Claude rules\n")
    (workspace / "AGENTS.md").write_text("Agents rules\n")
    await start(lsp_client, workspace, agents=["claude", "gemini@0.43"])
    yield lsp_client
    await lsp_client.shutdown_session()


async def _request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return plain(await client.protocol.send_request_async(method, params))


async def _pulled(client: LanguageClient, path: Path) -> list[tuple[str, int, str]]:
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    return [(str(d.code), d.range.start.line, d.message) for d in report.items]


@pytest.mark.asyncio
async def test_the_detected_version_is_shown_and_marked_unverified(
        detected: LanguageClient, workspace: Path) -> None:
    agents = (await _request(detected, "memlens/agents", {}))["agents"]
    # Every registered agent, the detected one first (the registry's order after it).
    assert [(a["agent"], a["chosen"]) for a in agents] == [
        (a, a == "gemini") for a in AGENT_IDS]
    gemini = agents[0]
    assert (gemini["label"], gemini["profile"], gemini["verified"]) == (
        "Gemini CLI 0.70.2", "gemini@0.44+", False)
    shown = await _request(detected, "memlens/show", {"uri": uri(workspace / "api" / "app.py")})
    assert (shown["dialect"], shown["mode"], shown["agentLabel"]) == (
        "gemini", "jit", "Gemini CLI 0.70.2")
    assert "newer than the newest verified version (0.61.0)" in shown["agentNote"]
    unverified = [d for d in await _pulled(detected, workspace / "GEMINI.md")
                  if d[0] == "agent-version-unverified"]
    assert [(code, line) for code, line, _ in unverified] == [("agent-version-unverified", 0)]
    tree = await _request(detected, "memlens/memoryTree", {})
    assert tree["folders"][0]["agentLabel"] == "Gemini CLI 0.70.2 (gemini@0.44+)"


@pytest.mark.asyncio
async def test_memlens_agents_pins_the_agent_the_editor_follows(
        pinned: LanguageClient, workspace: Path) -> None:
    agents = (await _request(pinned, "memlens/agents", {}))["agents"]
    assert [(a["agent"], a["profile"], a["chosen"]) for a in agents][:2] == [
        ("claude", "claude@2.1", True), ("gemini", "gemini@0.43", True)]
    # A file that is no agent's memory: the chosen agent's (Claude Code's) view.
    shown = await _request(pinned, "memlens/show", {"uri": uri(workspace / "api" / "app.py")})
    assert shown["dialect"] == "claude" and "Claude rules" in shown["content"]
    assert shown["agentLabel"] == "Claude Code" and shown["agentNote"] is None
    # Its figures by Claude Code's own estimate: "Claude rules\n" is 13 UTF-16 units, 13/4
    # rounds to 3 tokens.
    assert shown["summary"] == "1 memory file · 13 chars · ~3 tokens"
    # GEMINI.md still shows Gemini CLI's, with the pinned profile (0.43: classic mode exists).
    gemini = await _request(pinned, "memlens/show", {"uri": uri(workspace / "GEMINI.md")})
    assert gemini["dialect"] == "gemini" and gemini["agentProfile"] == "gemini@0.43"
    ignored = [d for d in await _pulled(pinned, workspace / "AGENTS.md")
               if d[0] == "agent-ignores-file"]
    assert len(ignored) == 1 and "CLAUDE.md" in ignored[0][2]


@pytest.mark.asyncio
async def test_side_by_side_is_always_offered(detected: LanguageClient) -> None:
    """Only Gemini CLI is in use and only its files are here: side by side is still offered,
    with every agent (issue 24: the picker's placeholder promised it)."""
    answer = await _request(detected, "memlens/agents", {})
    assert answer["sideBySide"] == list(AGENT_IDS)
    assert [(a["agent"], a["hasFiles"], a["basis"]) for a in answer["agents"]] == [
        (a, a == "gemini", basis_of(a)) for a in AGENT_IDS]
    assert [basis_of(a) for a in AGENT_IDS[:4]] == ["agent", "agent", "convention", "agent"]


@pytest_lsp.fixture(config=SERVER)
async def with_claude(lsp_client: LanguageClient, workspace: Path
                      ) -> AsyncIterator[LanguageClient]:
    (workspace / "api" / "CLAUDE.md").write_text("Claude rules for the API\n")
    await start(lsp_client, workspace)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_side_by_side_covers_every_agent_whose_files_are_here(
        with_claude: LanguageClient, workspace: Path) -> None:
    """Gemini CLI is the agent in use; a CLAUDE.md in a subfolder puts Claude Code beside it."""
    answer = await _request(with_claude, "memlens/agents", {"uri": uri(workspace)})
    assert answer["sideBySide"] == ["gemini", "claude"]
    assert [(a["agent"], a["chosen"], a["hasFiles"]) for a in answer["agents"]][:2] == [
        ("gemini", True, True), ("claude", False, True)]
