"""Issue 30, item 10, in the editor: a repository's `.vscode/settings.json` naming
`chat.instructionsFilesLocations` outside itself. In Restricted Mode no workspace value is
read; in a trusted window the location is shown (`vscode-chat-location-outside` on the
settings file's line) but not walked. The command line's side is
tests/test_security_round3_vscode_chat.py."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import SERVER, plain, start, uri

SECRET = "ABOVETHEWORKSPACE-round3"
OUTSIDE = "OUTSIDEFOLDER-round3"


def _hostile(workspace: Path) -> None:
    always = '---\napplyTo: "**"\n---\n{}\n'
    (workspace.parent / "above.instructions.md").write_text(always.format(SECRET))
    (workspace.parent / "elsewhere").mkdir()
    (workspace.parent / "elsewhere" / "o.instructions.md").write_text(always.format(OUTSIDE))
    (workspace / ".github" / "instructions").mkdir(parents=True)
    (workspace / ".github" / "instructions" / "own.instructions.md").write_text(
        always.format("OWNRULE"))
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text(json.dumps(
        {"chat.instructionsFilesLocations": {"..": True,
                                             str(workspace.parent / "elsewhere"): True}},
        indent=1))


async def _client(lsp_client: LanguageClient, workspace: Path, *, trusted: bool
                  ) -> AsyncIterator[LanguageClient]:
    _hostile(workspace)
    await start(lsp_client, workspace, trusted=trusted, agents=["vscode-chat"])
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def restricted(lsp_client: LanguageClient, workspace: Path
                     ) -> AsyncIterator[LanguageClient]:
    """VS Code in Restricted Mode on the repository."""
    async for client in _client(lsp_client, workspace, trusted=False):
        yield client


@pytest_lsp.fixture(config=SERVER)
async def trusting(lsp_client: LanguageClient, workspace: Path
                   ) -> AsyncIterator[LanguageClient]:
    """VS Code in a window the user trusted."""
    async for client in _client(lsp_client, workspace, trusted=True):
        yield client


async def _nothing_outside(client: LanguageClient, workspace: Path) -> list[tuple[str, int]]:
    """What the server shows, checked; the location diagnostics (code, line) it publishes."""
    shown = plain(await client.protocol.send_request_async(
        "memlens/show", {"uri": uri(workspace), "dialect": "vscode-chat"}))
    assert isinstance(shown, dict)
    text = json.dumps(shown)
    assert SECRET not in text and OUTSIDE not in text
    assert str(workspace.parent / "above.instructions.md") not in text
    assert "OWNRULE" in shown["content"]
    tree = json.dumps(plain(await client.protocol.send_request_async("memlens/memoryTree", {})))
    assert SECRET not in tree and str(workspace.parent / "elsewhere") + "/o" not in tree
    everything = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[]))
    settings = uri(workspace / ".vscode" / "settings.json")
    return [(str(d.code), d.range.start.line) for item in everything.items
            if item.uri == settings for d in item.items
            if d.code == "vscode-chat-location-outside"]


@pytest.mark.asyncio
async def test_restricted_mode_reads_no_workspace_location(restricted: LanguageClient,
                                                           workspace: Path) -> None:
    assert await _nothing_outside(restricted, workspace) == []


@pytest.mark.asyncio
async def test_a_trusted_window_shows_outside_locations_and_walks_none(
        trusting: LanguageClient, workspace: Path) -> None:
    assert sorted(await _nothing_outside(trusting, workspace)) == [
        ("vscode-chat-location-outside", 2), ("vscode-chat-location-outside", 3)]
