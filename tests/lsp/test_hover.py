"""Hover: a reference's target as the agent reading the file includes it; line 1: the merged
context."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc


async def _hover(client: LanguageClient, doc: str, line: int, character: int) -> types.Hover:
    result = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=line, character=character)))
    assert result is not None
    return result


def _value(hover: types.Hover) -> str:
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


@pytest.mark.asyncio
async def test_hover_on_import_shows_the_rendered_target(client: LanguageClient,
                                                         workspace: Path) -> None:
    doc = await open_doc(client, workspace / "GEMINI.md")
    hover = await _hover(client, doc, 2, 3)
    assert hover.range == types.Range(start=types.Position(line=2, character=0),
                                      end=types.Position(line=2, character=16))
    value = _value(hover)
    assert f"`{workspace}/docs/style.md`" in value
    # The nested import is expanded exactly as Gemini CLI expands it.
    assert ("<!-- Imported from: ./docs/style.md -->\n## Style\nUse tabs. "
            "<!-- Imported from: ./naming.md -->\nNames are short.\n\n"
            "<!-- End of import from: ./naming.md -->\n\n"
            "<!-- End of import from: ./docs/style.md -->") in value


@pytest.mark.asyncio
async def test_hover_on_missing_import_shows_the_embedded_error_once(
        client: LanguageClient, workspace: Path) -> None:
    """VS Code shows the problem (its detail: the comment Gemini CLI embeds) and the import's
    hover together: the comment is said once, by the problem; the hover points to it."""
    doc = await open_doc(client, workspace / "GEMINI.md")
    comment = (f"<!-- Import failed: ./docs/missing.md - ENOENT: no such file or directory, "
               f"access '{workspace}/docs/missing.md' -->")
    value = _value(await _hover(client, doc, 3, 5))
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    on_line = [d for d in report.items if d.range.start.line == 3]
    related = [r.message for d in on_line for r in d.related_information or []]
    shown = "\n".join([value, *(d.message for d in on_line), *related])
    assert shown.count(comment) == 1, shown
    assert any(comment in message for message in related)
    assert f"`{workspace}/docs/missing.md`" in value and "the problem shows" in value


@pytest.mark.asyncio
async def test_hover_on_first_line_shows_merged_context_with_jit(client: LanguageClient,
                                                                 workspace: Path) -> None:
    doc = await open_doc(client, workspace / "api" / "GEMINI.md")
    value = _value(await _hover(client, doc, 0, 2))
    first = value.split("\n", 1)[0]
    assert re.fullmatch(rf"\*\*Merged context for `{re.escape(str(workspace))}/api`\*\* — "
                        r"3 memory files · [\d,]+ chars · ~[\d,]+ tokens "
                        r"\(1 loaded just in time for this folder\)",
                        first), first
    assert "--- Global ---" in value and "Global: be brief." in value
    assert f"--- Context from: {workspace}/GEMINI.md ---" in value
    assert "--- Newly Discovered Project Context ---" in value
    assert f"--- Context from: {workspace}/api/GEMINI.md ---" in value
    # Plain text with markers, not markdown prose: the extension's context language.
    assert "```memlens-context\n--- Global ---" in value and "```markdown" not in value


@pytest.mark.asyncio
async def test_no_hover_in_plain_text(client: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(client, workspace / "api" / "GEMINI.md")
    result = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=1, character=3)))
    assert result is None


@pytest.mark.asyncio
async def test_hover_on_a_claude_md_include_is_claude_codes(client: LanguageClient,
                                                            workspace: Path) -> None:
    """A CLAUDE.md's `@AGENTS.md` is Claude Code's include: the hover says so and shows the
    file as Claude Code sends it, not as Gemini CLI would import it; an include of a missing
    file says that Claude Code includes nothing there."""
    (workspace / "AGENTS.md").write_text("Agents: run the tests.\n")
    (workspace / "CLAUDE.md").write_text("# Claude\n\nSee @AGENTS.md and @gone.md\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    doc = await open_doc(client, workspace / "CLAUDE.md")
    hover = await _hover(client, doc, 2, 6)
    value = _value(hover)
    assert f"`{workspace}/AGENTS.md`" in value
    assert "As Claude Code includes it:" in value and "Gemini CLI" not in value
    assert "Agents: run the tests." in value and "Imported from" not in value
    assert hover.range == types.Range(start=types.Position(line=2, character=4),
                                      end=types.Position(line=2, character=14))
    missing = _value(await _hover(client, doc, 2, 22))
    assert f"`{workspace}/gone.md`" in missing
    assert "Claude Code includes nothing here: no such file." in missing
