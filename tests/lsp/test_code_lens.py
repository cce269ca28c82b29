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
    assert re.fullmatch(r"2 memory files · [\d,]+ chars · ~[\d,]+ tokens", root)
    (web,) = await _titles(client, await open_doc(client, workspace / "web" / "GEMINI.md"))
    assert re.fullmatch(r"3 memory files · [\d,]+ chars · ~[\d,]+ tokens", web)


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
    assert title == show["summary"] == (f"2 memory files · {show['chars']:,} chars · "
                                        f"~{show['tokens']:,} tokens")
    startup = [f for f in tree["folders"][0]["files"] if f["tier"] != "jit"]
    assert show["chars"] == sum(f["chars"] for f in startup)
    assert show["notice"] is None and tree["folders"][0]["notice"] is None


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
