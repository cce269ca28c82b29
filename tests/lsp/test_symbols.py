"""Document symbols: headings (not inside fences) and imports."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc


@pytest.mark.asyncio
async def test_headings_nest_and_imports_are_listed(client: LanguageClient,
                                                    workspace: Path) -> None:
    text = "# Top\n## Child\n```\n# not a heading\n```\n# Second\n@./docs/style.md\n"
    doc = await open_doc(client, workspace / "web" / "GEMINI.md", text)
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert symbols is not None
    shape = [(s.name, [c.name for c in (s.children or [])], s.range.start.line)
             for s in symbols if isinstance(s, types.DocumentSymbol)]
    assert shape == [("Top", ["Child"], 0), ("Second", [], 5), ("@./docs/style.md", [], 6)]
