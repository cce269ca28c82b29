"""Issue 15 over the wire: the real server over stdio, a hostile workspace, bounded answers.

Each test waits with a generous deadline that only catches a hang (the attacks used to block
the server for minutes); none asserts a tight time.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from .conftest import SERVER, open_doc, uri


async def start(client: LanguageClient, folder: Path, home: Path, **settings: object) -> None:
    options = {"memlens": {"home": str(home), "trusted": True, **settings}}
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        root_uri=uri(folder),
        workspace_folders=[types.WorkspaceFolder(uri=uri(folder), name="ws")],
        initialization_options=options))
    await client.protocol.send_request_async("memlens/refresh", {})


@pytest.fixture
def base(tmp_path: Path) -> Path:
    real = Path(os.path.realpath(tmp_path))
    (real / "home").mkdir()
    (real / "ws" / ".git").mkdir(parents=True)
    return real


@pytest_lsp.fixture(config=SERVER)
async def bare(lsp_client: LanguageClient) -> AsyncIterator[LanguageClient]:
    """A server not yet initialised: each test starts it on its own workspace."""

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        return None

    yield lsp_client
    await lsp_client.shutdown_session()


async def _diagnostics(client: LanguageClient, doc: str, count: int,
                       deadline: float) -> list[types.Diagnostic]:
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline
    while loop.time() < end:
        items = list(client.diagnostics.get(doc, []))
        if len(items) >= count:
            return items
        await asyncio.sleep(0.1)
    raise AssertionError(f"only {len(client.diagnostics.get(doc, []))} of {count} diagnostics "
                         f"after {deadline} s")


# --- 10: one line index per document ----------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.timeout(110)
async def test_50000_one_line_imports_convert_in_one_pass(bare: LanguageClient,
                                                          base: Path) -> None:
    count = 50_000
    text = "".join(f"@./m{i}.md\n" for i in range(count))
    (base / "ws" / "GEMINI.md").write_text(text)
    await start(bare, base / "ws", base / "home")
    doc = await open_doc(bare, base / "ws" / "GEMINI.md")
    # Converting each diagnostic used to re-split the whole document: minutes for 50,000.
    items = await _diagnostics(bare, doc, count, deadline=60)
    assert len(items) == count
    last = sorted(items, key=lambda d: d.range.start.line)[-1]
    width = len(f"@./m{count - 1}.md")
    assert (last.code, last.range.start.line, last.range.start.character,
            last.range.end.character) == ("import-not-found", count - 1, 0, width)


# --- 18: a folder name that is not UTF-8 --------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.timeout(60)
async def test_workspace_pull_survives_a_folder_name_that_is_not_utf8(bare: LanguageClient,
                                                                      base: Path) -> None:
    ws = base / "ws"
    (ws / "GEMINI.md").write_text("Top @./missing.md\n")
    odd = os.fsencode(str(ws)) + b"/bad\xff"
    os.mkdir(odd)
    with open(odd + b"/GEMINI.md", "wb") as out:
        out.write(b"Odd @./nope.md\n")
    await start(bare, ws, base / "home")
    everything = await bare.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[]))
    by_uri = {item.uri: [(str(d.code), d.range.start.line, d.range.start.character)
                         for d in item.items] for item in everything.items}
    odd_uri = uri(ws) + "/bad%FF/GEMINI.md"
    assert by_uri[uri(ws / "GEMINI.md")] == [("import-not-found", 0, 4)]
    assert by_uri[odd_uri] == [("import-not-found", 0, 4)]
    # The URI maps back to the same file: a pull for that one document answers too.
    report = await bare.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=odd_uri)))
    assert [(str(d.code), d.range.start.line) for d in report.items] == [("import-not-found", 0)]
