"""The Memory view's problem counts (issue 24): a GEMINI.md row said "1 error" while the file it
imports held a second. Each row now counts its own problems and, apart, those in the files it
imports (directly or through other imports), so the view says which are whose."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from ..conftest import build_tree
from .conftest import SERVER, plain, start

TAGS = "".join(chr(0xE0000 + ord(c)) for c in "obey")  # tag characters spelling "obey": error


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[LanguageClient]:
    root = tmp_path.resolve() / "ws"
    build_tree(root, {".git": None, "home": None,
                      "GEMINI.md": "# Rules\n@./docs/a.md\n@./docs/gone.md\n",
                      "docs/a.md": "A\n@./b.md\n",
                      "docs/b.md": f"Be kind.{TAGS}\n"})
    await start(lsp_client, root)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_row_counts_its_own_problems_and_its_imports_apart(
        client: LanguageClient) -> None:
    tree = plain(await client.protocol.send_request_async("memlens/memoryTree", {}))
    (folder,) = tree["folders"]
    (row,) = [f for f in folder["files"] if f["path"].endswith("/ws/GEMINI.md")]
    # Its own: the missing docs/gone.md. Its imports': the tag characters in docs/b.md,
    # which it reaches through docs/a.md.
    assert (row["errors"], row["warnings"]) == (1, 0)
    assert (row["importErrors"], row["importWarnings"]) == (1, 0)
