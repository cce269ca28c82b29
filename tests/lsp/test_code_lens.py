"""Code lenses: "imported by N" and "loads M files"."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc


async def _titles(client: LanguageClient, doc: str) -> list[str]:
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    return [lens.command.title for lens in lenses or [] if lens.command]


@pytest.mark.asyncio
async def test_lenses(client: LanguageClient, workspace: Path) -> None:
    assert await _titles(client, await open_doc(client, workspace / "docs" / "a.md")) == [
        "imported by 2"]
    assert await _titles(client, await open_doc(client, workspace / "GEMINI.md")) == [
        "loads 2 files"]
    assert await _titles(client, await open_doc(client, workspace / "web" / "GEMINI.md")) == [
        "loads 3 files"]


@pytest.mark.asyncio
async def test_lens_commands_carry_what_the_client_runs(client: LanguageClient,
                                                        workspace: Path) -> None:
    """Each lens names a command the extension registers, with JSON arguments it can turn
    into VS Code's types: the importers' locations filled in (issue 13: VS Code's own
    editor.action.showReferences was given a string URI and an empty list)."""
    doc = await open_doc(client, workspace / "docs" / "a.md")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    [imported] = [lens.command for lens in lenses or [] if lens.command]
    assert imported.command == "memlens.showReferences"
    uri, position, locations = imported.arguments or []
    assert uri == doc
    assert position == {"line": 0, "character": 0}
    importers = sorted((loc["uri"], loc["range"]["start"]["line"]) for loc in locations)
    assert importers == [((workspace / "cycle" / "GEMINI.md").as_uri(), 0),
                         ((workspace / "docs" / "b.md").as_uri(), 0)]
    for loc in locations:
        assert set(loc["range"]) == {"start", "end"}
        assert loc["range"]["end"]["character"] > loc["range"]["start"]["character"]

    doc = await open_doc(client, workspace / "GEMINI.md")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    [loads] = [lens.command for lens in lenses or [] if lens.command]
    assert loads.command == "memlens.showMergedContext"
    assert list(loads.arguments or []) == [doc]
