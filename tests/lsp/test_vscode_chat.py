"""VS Code's chat agent in the editor: `memlens/show` with its dialect, its rows in the Memory
view, its line-1 hover on `.github/copilot-instructions.md`, its settings file watched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc, plain, uri


def _files(workspace: Path) -> None:
    (workspace / ".github" / "instructions").mkdir(parents=True)
    (workspace / ".github" / "copilot-instructions.md").write_text("Copilot: run make test.\n")
    (workspace / ".github" / "instructions" / "py.instructions.md").write_text(
        '---\napplyTo: "**/*.py"\n---\nType hints.\n')
    (workspace / "AGENTS.md").write_text("Agents: small commits.\n")


@pytest.mark.asyncio
async def test_show_tree_and_hover(client: LanguageClient, workspace: Path) -> None:
    _files(workspace)
    await client.protocol.send_request_async("memlens/refresh", {})
    shown = plain(await client.protocol.send_request_async(
        "memlens/show", {"uri": uri(workspace / "api" / "app.py"), "dialect": "vscode-chat"}))
    assert isinstance(shown, dict) and shown["dialect"] == "vscode-chat"
    copilot = workspace / ".github" / "copilot-instructions.md"
    assert (f'<attachment filePath="{copilot}">\nCopilot: run make test.\n</attachment>\n'
            in shown["content"])
    tree = plain(await client.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(tree, dict)
    (folder,) = tree["folders"]
    (chat,) = [a for a in folder["otherAgents"] if a["agent"] == "vscode-chat"]
    rows = {Path(f["path"]).name: f.get("note") for f in chat["files"]}
    assert rows["py.instructions.md"] == "attached when a file matching **/*.py is"
    assert "copilot-instructions.md" in rows and "AGENTS.md" in rows
    doc = await open_doc(client, copilot)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=1)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    # copilot-instructions.md is GitHub Copilot CLI's file by name (the first agent to read it);
    # its hover speaks for the folder holding `.github`, not `.github` itself.
    assert hover.contents.value.startswith(
        f"**GitHub Copilot CLI instructions for `{workspace}`**"), hover.contents.value
    assert "*(nothing loads)*" not in hover.contents.value


@pytest.mark.asyncio
async def test_a_settings_change_is_seen(client: LanguageClient, workspace: Path) -> None:
    _files(workspace)
    (workspace / ".vscode").mkdir()
    (workspace / ".vscode" / "settings.json").write_text(
        json.dumps({"chat.useAgentsMdFile": False}))
    await client.protocol.send_request_async("memlens/refresh", {})
    shown = plain(await client.protocol.send_request_async(
        "memlens/show", {"uri": uri(workspace / "AGENTS.md"), "dialect": "vscode-chat"}))
    assert isinstance(shown, dict)
    assert "Agents: small commits." not in shown["content"]
    assert "Copilot: run make test." in shown["content"]
