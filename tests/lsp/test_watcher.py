"""Memory outside the workspace (HOME) is watched with watchfiles: an edit made on disk by
another tool shows up in the merged-context hover without any editor notification."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from .conftest import SERVER, open_doc, uri


@pytest.fixture
def outside_home(workspace: Path) -> Path:
    home = workspace.parent / "elsewhere-home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "GEMINI.md").write_text("Global v1\n")
    (home / ".claude").mkdir()
    (home / ".claude" / "CLAUDE.md").write_text("Mine @~/gone.md\n")  # Claude Code's user memory
    return home


@pytest_lsp.fixture(config=SERVER)
async def watched(lsp_client: LanguageClient, workspace: Path,
                  outside_home: Path) -> AsyncIterator[LanguageClient]:
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        workspace_folders=[types.WorkspaceFolder(uri=uri(workspace), name="ws")],
        initialization_options={"memlens": {"home": str(outside_home), "trusted": True}}))
    await lsp_client.protocol.send_request_async("memlens/refresh", {})
    yield lsp_client
    await lsp_client.shutdown_session()


async def _merged(client: LanguageClient, doc: str) -> str:
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=0)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


@pytest.mark.asyncio
async def test_home_memory_edited_on_disk_updates_the_hover(watched: LanguageClient,
                                                            workspace: Path,
                                                            outside_home: Path) -> None:
    doc = await open_doc(watched, workspace / "GEMINI.md")
    assert "Global v1" in await _merged(watched, doc)
    (outside_home / ".gemini" / "GEMINI.md").write_text("Global v2: prefer tabs\n")
    for _ in range(100):
        value = await _merged(watched, doc)
        if "Global v2: prefer tabs" in value:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the watcher never picked up the change")
    assert "Global v1" not in value


@pytest.mark.asyncio
async def test_claude_code_home_is_watched_too(watched: LanguageClient,
                                               outside_home: Path) -> None:
    user = outside_home / ".claude" / "CLAUDE.md"

    async def codes() -> list[object]:
        report = await watched.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(
                uri=uri(user))))
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        return [d.code for d in report.items]

    assert await codes() == ["import-not-found"]
    (outside_home / "gone.md").write_text("Back.\n")  # outside every watched folder
    user.write_text("Mine @~/gone.md and more\n")  # edited on disk by another tool
    for _ in range(100):
        if await codes() == []:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the watcher never picked up ~/.claude/CLAUDE.md")
