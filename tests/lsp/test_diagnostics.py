"""Push diagnostics for open files, pull diagnostics, and edits that clear them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc, uri


def _codes(items: list[types.Diagnostic]) -> list[tuple[str, int, int, int]]:
    return [(str(d.code), d.range.start.line, d.range.start.character, d.range.end.character)
            for d in items]


async def _wait_for(client: LanguageClient, doc: str, predicate: object) -> list[types.Diagnostic]:
    for _ in range(100):
        items = list(client.diagnostics.get(doc, []))
        if predicate(items):  # type: ignore[operator]
            return items
        await asyncio.sleep(0.05)
    raise AssertionError(f"diagnostics never matched: {client.diagnostics.get(doc)}")


@pytest.mark.asyncio
async def test_open_file_gets_pushed_diagnostics_on_exact_ranges(client: LanguageClient,
                                                                 workspace: Path) -> None:
    doc = await open_doc(client, workspace / "GEMINI.md")
    items = await _wait_for(client, doc, lambda items: len(items) >= 2)
    assert _codes(items) == [
        ("import-not-found", 3, 0, 18),
        ("import-outside-root", 4, 0, 17),
    ]
    assert all(d.source == "memlens" for d in items)
    assert items[0].severity == types.DiagnosticSeverity.Error
    # Short enough for the Problems panel; the resolved path and what Gemini CLI embeds are
    # the related information (shown under it), on the same range.
    assert items[0].message == "Import not found: ./docs/missing.md"
    (related,) = items[0].related_information or []
    assert related.location.uri == doc and related.location.range == items[0].range
    assert related.message.startswith(f"{workspace / 'docs' / 'missing.md'} does not exist. "
                                      "Gemini CLI embeds: <!-- Import failed: ./docs/missing.md")


@pytest.mark.asyncio
async def test_editing_the_buffer_clears_the_diagnostic(client: LanguageClient,
                                                        workspace: Path) -> None:
    path = workspace / "GEMINI.md"
    doc = await open_doc(client, path)
    await _wait_for(client, doc, lambda items: len(items) == 2)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=doc, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(
            text="# Project rules\n\n@./docs/style.md\n")]))
    await _wait_for(client, doc, lambda items: items == [])
    # The unsaved edit is what counts: the disk still has the broken imports.
    assert "missing.md" in path.read_text()


@pytest.mark.asyncio
async def test_incremental_edit_adds_a_diagnostic(client: LanguageClient,
                                                  workspace: Path) -> None:
    doc = await open_doc(client, workspace / "api" / "GEMINI.md")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=doc, version=2),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=1, character=0),
                              end=types.Position(line=1, character=0)),
            text="Ask @reviewer first.\n")]))
    items = await _wait_for(client, doc, lambda items: len(items) == 1)
    assert _codes(items) == [("import-in-prose", 1, 4, 13)]


@pytest.mark.asyncio
async def test_pull_diagnostics_for_a_document_and_the_workspace(client: LanguageClient,
                                                                 workspace: Path) -> None:
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri(workspace / "docs" / "b.md"))))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert _codes(report.items) == [("import-cycle", 0, 10, 17)]
    everything = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[]))
    by_uri = {item.uri: _codes(item.items) for item in everything.items}
    assert by_uri[uri(workspace / "GEMINI.md")] == [("import-not-found", 3, 0, 18),
                                                    ("import-outside-root", 4, 0, 17)]
    assert by_uri[uri(workspace / "docs" / "b.md")] == [("import-cycle", 0, 10, 17)]
