"""Restricted Mode explained (issue 13): in an untrusted folder (VS Code sends `trusted:
false`) the status bar's payload, the Memory view's, the line-1 hover and lens say the folder
is not trusted and what is shown anyway; the hover links to VS Code's trust editor."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import SERVER, open_doc, plain, start, uri


@pytest_lsp.fixture(config=SERVER)
async def untrusted(lsp_client: LanguageClient, workspace: Path
                    ) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, workspace, trusted=False)
    yield lsp_client
    await lsp_client.shutdown_session()


NOTICE = ("Restricted Mode: this folder is not trusted, so its GEMINI.md files are not read "
          "(as Gemini CLI does). Shown anyway: your global memory (1 file). Trust the folder "
          "to see its project memory.")


@pytest.mark.asyncio
async def test_show_and_tree_say_why_project_memory_is_missing(
        untrusted: LanguageClient, workspace: Path) -> None:
    show = plain(await untrusted.protocol.send_request_async(
        "memlens/show", {"uri": uri(workspace / "GEMINI.md")}))
    assert isinstance(show, dict)
    assert show["trusted"] is False and show["fileCount"] == 1
    assert show["notice"] == NOTICE
    assert show["summary"] == (f"1 memory file · {show['chars']:,} chars · "
                               f"~{show['tokens']:,} tokens")
    tree = plain(await untrusted.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(tree, dict)
    (folder,) = tree["folders"]
    assert folder["trusted"] is False and folder["notice"] == NOTICE
    assert [f["tier"] for f in folder["files"]] == ["global"]
    # A memory file the user opens is listed apart: not read, not "loaded just in time".
    await open_doc(untrusted, workspace / "GEMINI.md")
    tree = plain(await untrusted.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(tree, dict)
    tiers = [(f["tier"], f["path"]) for f in tree["folders"][0]["files"]]
    assert tiers[0][0] == "global" and ("restricted", str(workspace / "GEMINI.md")) in tiers
    assert all(t in ("global", "restricted") for t, _ in tiers), tiers


@pytest.mark.asyncio
async def test_hover_and_lens_on_line_1_say_restricted_mode(
        untrusted: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(untrusted, workspace / "GEMINI.md")
    hover = await untrusted.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=1)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert NOTICE in hover.contents.value
    assert "[Manage Workspace Trust](command:workbench.trust.manage)" in hover.contents.value
    lenses = await untrusted.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    titles = [lens.command.title for lens in lenses or [] if lens.command]
    assert any(t.startswith("1 memory file · ") and t.endswith(" · Restricted Mode")
               for t in titles), titles
