"""Claude Code and AGENTS.md files in the editor: definition across dialects (a CLAUDE.md that
includes an AGENTS.md, an `@~/` include), their diagnostics, and the line-1 hover."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc, uri


async def _setup(client: LanguageClient, workspace: Path) -> str:
    (workspace / "AGENTS.md").write_text("Agents: run make test.\n")
    (workspace / "home" / "shared.md").write_text("Shared note.\n")
    (workspace / "CLAUDE.md").write_text("Claude rules @./AGENTS.md\n@~/shared.md\n@./gone.md\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    return await open_doc(client, workspace / "CLAUDE.md")


@pytest.mark.asyncio
async def test_definition_across_dialects(client: LanguageClient, workspace: Path) -> None:
    doc = await _setup(client, workspace)
    for (line, character), target in (((0, 15), workspace / "AGENTS.md"),
                                      ((1, 3), workspace / "home" / "shared.md")):
        result = await client.text_document_definition_async(types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=doc),
            position=types.Position(line=line, character=character)))
        assert isinstance(result, types.Location) and result.uri == uri(target)


@pytest.mark.asyncio
async def test_claude_diagnostics_and_hover(client: LanguageClient, workspace: Path) -> None:
    doc = await _setup(client, workspace)
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert [(d.code, d.range.start.line) for d in report.items] == [("import-not-found", 2)]
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=1)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    value = hover.contents.value
    assert value.startswith(f"**Claude Code memory for `{workspace}`**")
    assert f"Contents of {workspace}/AGENTS.md (included):" in value
    assert "Shared note." in value
