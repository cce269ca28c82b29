"""Find references: who imports a file."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc, uri


@pytest.mark.asyncio
async def test_references_of_a_file_are_its_importers(client: LanguageClient,
                                                      workspace: Path) -> None:
    doc = await open_doc(client, workspace / "docs" / "a.md")
    result = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=0),
        context=types.ReferenceContext(include_declaration=False)))
    assert sorted((r.uri, r.range.start.line, r.range.start.character, r.range.end.character)
                  for r in result) == sorted([
        (uri(workspace / "cycle" / "GEMINI.md"), 0, 11, 24),
        (uri(workspace / "docs" / "b.md"), 0, 10, 17),
    ])


@pytest.mark.asyncio
async def test_references_from_an_import_token(client: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(client, workspace / "docs" / "style.md")
    result = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=1, character=13),
        context=types.ReferenceContext(include_declaration=False)))
    assert [(r.uri, r.range.start.line) for r in result] == [
        (uri(workspace / "docs" / "style.md"), 1)]
