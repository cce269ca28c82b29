"""Code lenses: "imported by N" and "N memory files · C chars" (the status bar's count)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc, plain, uri


async def _titles(client: LanguageClient, doc: str) -> list[str]:
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    return [lens.command.title for lens in lenses or [] if lens.command]


@pytest.mark.asyncio
async def test_lenses(client: LanguageClient, workspace: Path) -> None:
    assert await _titles(client, await open_doc(client, workspace / "docs" / "a.md")) == [
        "imported by 2"]
    (root,) = await _titles(client, await open_doc(client, workspace / "GEMINI.md"))
    assert re.fullmatch(r"2 memory files · [\d,]+ chars", root)
    (web,) = await _titles(client, await open_doc(client, workspace / "web" / "GEMINI.md"))
    assert re.fullmatch(r"3 memory files · [\d,]+ chars", web)


@pytest.mark.asyncio
async def test_the_lens_the_status_bar_and_the_tree_count_alike(
        client: LanguageClient, workspace: Path) -> None:
    """The lens on the root GEMINI.md says what memlens/show's summary says (the status bar),
    and its characters are the sum of the Memory view's per-file figures at start-up."""
    (title,) = await _titles(client, await open_doc(client, workspace / "GEMINI.md"))
    show = plain(await client.protocol.send_request_async(
        "memlens/show", {"uri": uri(workspace / "GEMINI.md")}))
    tree = plain(await client.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(show, dict) and isinstance(tree, dict)
    assert title == show["summary"] == f"2 memory files · {show['chars']:,} chars"
    startup = [f for f in tree["folders"][0]["files"] if f["tier"] != "jit"]
    assert show["chars"] == sum(f["chars"] for f in startup)
    assert show["notice"] is None and tree["folders"][0]["notice"] is None
