"""Many files changed at once (a branch switch) reach the server as one
workspace/didChangeWatchedFiles; the index takes them as one batch (or, past its threshold,
one rebuild), and every answer afterwards is the new tree's."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from ..conftest import build_tree
from .conftest import open_doc, plain, uri


def _changed(client: LanguageClient, paths: list[Path]) -> None:
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(p), type=types.FileChangeType.Changed) for p in paths]))


async def _codes(client: LanguageClient, path: Path) -> list[tuple[object, str]]:
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    return [(d.code, d.message) for d in report.items]


@pytest.mark.asyncio
async def test_a_burst_of_changes_is_answered_as_the_new_tree(client: LanguageClient,
                                                              workspace: Path) -> None:
    root = workspace / "GEMINI.md"
    doc = await open_doc(client, root)
    assert any("missing.md" in message for _, message in await _codes(client, root))
    written = {f"notes/n{k:03d}/page.md": f"Page {k}\n" for k in range(250)}
    written.update({
        "docs/missing.md": "Found at last.\n",  # an import that did not resolve
        "docs/style.md": "## Style\nUse spaces. @./naming.md\n",
        "api/CLAUDE.md": "# API Claude\n",
        "web/AGENTS.md": "# Web agents\n",
    })
    build_tree(workspace, written)
    _changed(client, [workspace / rel for rel in written])

    assert not any("missing.md" in message for _, message in await _codes(client, root))
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=0)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "Use spaces." in hover.contents.value and "Use tabs." not in hover.contents.value
    assert "Found at last." in hover.contents.value
    matrix = plain(await client.protocol.send_request_async("memlens/matrix", {}))
    assert isinstance(matrix, dict)
    rows = {row["relative"] for row in matrix["rows"]}
    assert {"api/CLAUDE.md", "web/AGENTS.md"} <= rows


@pytest.mark.asyncio
async def test_past_the_threshold_the_batch_is_a_rebuild(client: LanguageClient,
                                                         workspace: Path) -> None:
    written = {f"pkg{k:03d}/GEMINI.md": f"# Package {k}\n@./gone-{k}.md\n" for k in range(210)}
    # The matrix before the batch, kept until the next change: the batch must retire it.
    before = plain(await client.protocol.send_request_async("memlens/matrix", {}))
    assert isinstance(before, dict)
    build_tree(workspace, written)
    _changed(client, [workspace / rel for rel in written])
    codes = [code for code, _ in await _codes(client, workspace / "pkg007" / "GEMINI.md")]
    assert codes == ["import-not-found"]
    after = plain(await client.protocol.send_request_async("memlens/matrix", {}))
    assert isinstance(after, dict)
    assert "pkg007/GEMINI.md" in {row["relative"] for row in after["rows"]}
