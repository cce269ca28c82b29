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
