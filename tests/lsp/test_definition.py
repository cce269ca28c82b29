"""Go to definition and document links on @imports."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import definition_at, open_doc, uri


@pytest.mark.asyncio
async def test_definition_jumps_to_the_imported_file(client: LanguageClient,
                                                     workspace: Path) -> None:
    doc = await open_doc(client, workspace / "GEMINI.md")
    result = await definition_at(client, doc, 2, 5)
    assert isinstance(result, types.Location)
    assert result.uri == uri(workspace / "docs" / "style.md")
    assert result.range == types.Range(start=types.Position(line=0, character=0),
                                       end=types.Position(line=0, character=0))


@pytest.mark.asyncio
async def test_no_definition_for_a_missing_target_or_code_span(client: LanguageClient,
                                                               workspace: Path) -> None:
    doc = await open_doc(client, workspace / "GEMINI.md")
    for line, character in [(3, 4), (5, 8), (0, 2)]:
        result = await definition_at(client, doc, line, character)
        assert result is None


@pytest.mark.asyncio
async def test_document_links_cover_existing_targets_only(client: LanguageClient,
                                                          workspace: Path) -> None:
    doc = await open_doc(client, workspace / "GEMINI.md")
    links = await client.text_document_document_link_async(types.DocumentLinkParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert [(link.range, link.target) for link in links] == [
        (types.Range(start=types.Position(line=2, character=0),
                     end=types.Position(line=2, character=16)),
         uri(workspace / "docs" / "style.md")),
    ]
