"""Budgets in the editor (issue 14), through a real LSP client: the line-1 code lens with
Gemini CLI's token estimate, the hover's per-file table, `context-over-budget` past
`memlens.budget`, and memlens/countTokens (the model's count) against the local fake Gemini.

The workspace is small enough to count by hand (docs/reference.md "Budgets"): the global file
"Global.\\n" (8 ASCII units: 2 tokens) and GEMINI.md "Rules: 日本語\\n" (8 ASCII units and 3
other units: 2 + 4.5 = 6.5, floored 6; 11 chars, 17 bytes). Together: 16 × 0.25 + 4.5 = 8.5,
floored: ~8 tokens, 19 chars, 25 bytes."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from ..conftest import build_tree
from ..fake_gemini import FakeGemini
from .conftest import SERVE, open_doc, plain, start, start_chat

KEY = "lsp-budget-key-42"
SERVER = ClientServerConfig(
    server_command=SERVE,
    server_env={**{k: v for k, v in os.environ.items()
                   if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "MEMLENS_GEMINI_BASE_URL")},
                "MEMLENS_LOG_LEVEL": "WARNING"})


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """ws/ (the workspace folder) and home/ beside it (outside the folder)."""
    root = Path(os.path.realpath(tmp_path)) / "ws"
    build_tree(root, {".git": None, "GEMINI.md": "Rules: 日本語\n"})
    build_tree(root.parent, {"home/.gemini/GEMINI.md": "Global.\n"})
    return root


@pytest_lsp.fixture(config=SERVER)
async def plain_client(lsp_client: LanguageClient, small: Path
                       ) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, small, home=str(small.parent / "home"))
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def budget_client(lsp_client: LanguageClient, small: Path
                        ) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, small, home=str(small.parent / "home"), budget=5)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def home_inside_client(lsp_client: LanguageClient, workspace: Path
                             ) -> AsyncIterator[LanguageClient]:
    """The shared workspace, whose HOME lies inside the workspace folder (as the demo's)."""
    await start(lsp_client, workspace, budget=1)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.fixture
def fake() -> AsyncIterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


@pytest_lsp.fixture(config=SERVER)
async def counting_client(lsp_client: LanguageClient, small: Path, fake: FakeGemini
                          ) -> AsyncIterator[LanguageClient]:
    await start_chat(lsp_client, small.parent, fake.base_url, model="gemini-count")
    yield lsp_client
    await lsp_client.shutdown_session()


async def _diagnostics(client: LanguageClient, doc: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    return report.items


@pytest.mark.asyncio
async def test_lens_and_status_figures(plain_client: LanguageClient, small: Path) -> None:
    doc = await open_doc(plain_client, small / "GEMINI.md")
    lenses = await plain_client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert [lens.command.title for lens in lenses or [] if lens.command] == [
        "2 memory files · 19 chars · ~8 tokens"]
    show = plain(await plain_client.protocol.send_request_async("memlens/show", {"uri": doc}))
    assert isinstance(show, dict)
    assert (show["chars"], show["bytes"], show["tokens"]) == (19, 25, 8)
    assert show["summary"] == "2 memory files · 19 chars · ~8 tokens"
    tree = plain(await plain_client.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(tree, dict)
    rows = {f["path"]: (f["chars"], f["bytes"], f["tokens"]) for f in tree["folders"][0]["files"]}
    assert rows == {str(small.parent / "home/.gemini/GEMINI.md"): (8, 8, 2),
                    str(small / "GEMINI.md"): (11, 17, 6)}
    # No budget set: no warning.
    assert not [d for d in await _diagnostics(plain_client, doc)
                if d.code == "context-over-budget"]


@pytest.mark.asyncio
async def test_hover_table(plain_client: LanguageClient, small: Path) -> None:
    doc = await open_doc(plain_client, small / "GEMINI.md")
    hover = await plain_client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=0)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    value = hover.contents.value
    assert "| File | Chars | Bytes | Tokens |" in value
    assert f"| `{small.parent}/home/.gemini/GEMINI.md` | 8 | 8 | ~2 |" in value
    assert "| `GEMINI.md` | 11 | 17 | ~6 |" in value
    assert "| **Folder total** | **19** | **25** | **~8** |" in value
    assert "Gemini CLI's estimate" in value and "an estimate, not the model's count" in value


@pytest.mark.asyncio
async def test_budget_warning_on_line_one_of_the_folders_first_file(
        budget_client: LanguageClient, small: Path) -> None:
    doc = await open_doc(budget_client, small / "GEMINI.md")
    (warning,) = [d for d in await _diagnostics(budget_client, doc)
                  if d.code == "context-over-budget"]
    assert warning.severity == types.DiagnosticSeverity.Warning
    assert warning.range.start == types.Position(line=0, character=0)
    assert warning.message == ("This folder's memory is ~8 tokens for Gemini CLI, over the "
                               "budget of 5 (memlens.budget)")
    # The global file (outside the folder) carries no copy of it.
    global_doc = await open_doc(budget_client, small.parent / "home/.gemini/GEMINI.md")
    assert not [d for d in await _diagnostics(budget_client, global_doc)
                if d.code == "context-over-budget"]


@pytest.mark.asyncio
async def test_count_tokens_asks_the_model(counting_client: LanguageClient, small: Path,
                                           fake: FakeGemini) -> None:
    doc = await open_doc(counting_client, small / "GEMINI.md")
    # Without a key: the figures, and why the model was not asked (not a failed request).
    keyless = plain(await counting_client.protocol.send_request_async(
        "memlens/countTokens", {"uri": doc}))
    assert keyless["tokens"] is None and "Set Gemini API Key" in keyless["error"]
    assert keyless["estimate"] == 8
    assert fake.count_requests == []
    await counting_client.protocol.send_request_async("memlens/setApiKey", {"key": KEY})
    result = plain(await counting_client.protocol.send_request_async(
        "memlens/countTokens", {"uri": doc}))
    # The fake counts words: "Global." and "Rules:" "日本語" → 3.
    assert result == {"uri": doc, "tokens": 3, "model": "gemini-count", "estimate": 8,
                      "chars": 19, "bytes": 25, "error": None}
    (request,) = fake.count_requests
    assert request.api_key_matches and request.model == "gemini-count"
    text = request.body["contents"][0]["parts"][0]["text"]
    assert text == "Global.\nRules: 日本語\n"


@pytest.mark.asyncio
async def test_budget_warning_skips_a_home_inside_the_folder(
        home_inside_client: LanguageClient, workspace: Path) -> None:
    """HOME/.gemini/GEMINI.md loads first and lies inside the folder here: the warning still
    goes on the folder's own GEMINI.md."""
    doc = await open_doc(home_inside_client, workspace / "GEMINI.md")
    assert [d.code for d in await _diagnostics(home_inside_client, doc)
            if d.code == "context-over-budget"] == ["context-over-budget"]
    global_doc = await open_doc(home_inside_client, workspace / "home/.gemini/GEMINI.md")
    assert not [d for d in await _diagnostics(home_inside_client, global_doc)
                if d.code == "context-over-budget"]


@pytest.mark.asyncio
async def test_claude_md_hover_counts_with_claude_codes_estimate(
        plain_client: LanguageClient, small: Path) -> None:
    """Line 1 of a CLAUDE.md: Claude Code's view, its figures by Claude Code's own estimate
    (Math.round(UTF-16 units / 4)): "Claude: 日本語 😀\\n" is "Claude: " (8), 日本語 (3), a
    space, 😀 (2 units), "\\n": 15 units → round(3.75) = 4 tokens; 14 code points; 8 + 9 + 1 +
    4 + 1 = 23 bytes."""
    (small / "CLAUDE.md").write_text("Claude: 日本語 😀\n", encoding="utf-8")
    await plain_client.protocol.send_request_async("memlens/refresh", {})
    doc = await open_doc(plain_client, small / "CLAUDE.md")
    hover = await plain_client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=0)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    value = hover.contents.value
    assert "| `CLAUDE.md` | 14 | 23 | ~4 |" in value, value
    assert "Claude Code's estimate" in value


@pytest.mark.asyncio
async def test_claude_md_hover_header_counts_what_its_table_totals(
        plain_client: LanguageClient, small: Path) -> None:
    """The header said "1 file(s), 400 characters" while the table totalled 14: it counted
    Claude Code's reminder text without saying so. Now it counts the files, as the table
    does, and names the wrapper text with what is sent."""
    import re

    (small / "CLAUDE.md").write_text("Claude: 日本語 😀\n", encoding="utf-8")
    await plain_client.protocol.send_request_async("memlens/refresh", {})
    doc = await open_doc(plain_client, small / "CLAUDE.md")
    hover = await plain_client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=0)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    value = hover.contents.value
    header = value.splitlines()[0]
    said = re.search(r"— 1 file\(s\), ([\d,]+) characters \(([\d,]+) sent, with Claude "
                     r"Code's wrapper text\)$", header)
    assert said is not None, header
    total = re.search(r"\| \*\*Folder total\*\* \| \*\*([\d,]+)\*\* \|", value)
    assert total is not None and said.group(1) == total.group(1) == "14"
    # What is sent is the preview below: the reminder around the file.
    assert int(said.group(2).replace(",", "")) > 14 and "<system-reminder>" in value
