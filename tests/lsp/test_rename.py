"""Moving a file rewrites the imports that point at it."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import uri


@pytest.mark.asyncio
async def test_will_rename_rewrites_importers(client: LanguageClient, workspace: Path) -> None:
    old, new = workspace / "docs" / "style.md", workspace / "guide" / "style-guide.md"
    edit = await client.workspace_will_rename_files_async(types.RenameFilesParams(
        files=[types.FileRename(old_uri=uri(old), new_uri=uri(new))]))
    assert edit is not None and edit.changes is not None
    changes = {u: [(e.range.start.line, e.range.start.character, e.range.end.character,
                    e.new_text) for e in edits] for u, edits in edit.changes.items()}
    assert changes == {
        uri(workspace / "GEMINI.md"): [(2, 1, 16, "./guide/style-guide.md")],
        # The moved file's own relative import must follow it.
        uri(old): [(1, 11, 22, "../docs/naming.md")],
    }


@pytest.mark.asyncio
async def test_did_rename_reindexes(client: LanguageClient, workspace: Path) -> None:
    old, new = workspace / "docs" / "naming.md", workspace / "docs" / "names.md"
    old.rename(new)
    client.workspace_did_rename_files(types.RenameFilesParams(
        files=[types.FileRename(old_uri=uri(old), new_uri=uri(new))]))
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri(workspace / "docs" / "style.md"))))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert [d.code for d in report.items] == ["import-not-found"]
