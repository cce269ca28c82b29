"""Code actions: create a missing target, remove a cycle-closing import, make a path relative,
keep a prose mention literal."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc, uri


def _diag(code: str, line: int, start: int, end: int) -> types.Diagnostic:
    return types.Diagnostic(range=types.Range(start=types.Position(line=line, character=start),
                                              end=types.Position(line=line, character=end)),
                            message="", code=code, source="memlens")


async def _actions(client: LanguageClient, doc: str, line: int, start: int, end: int,
                   diagnostics: list[types.Diagnostic]) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        range=types.Range(start=types.Position(line=line, character=start),
                          end=types.Position(line=line, character=end)),
        context=types.CodeActionContext(diagnostics=diagnostics)))
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


@pytest.mark.asyncio
async def test_create_missing_target(client: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(client, workspace / "GEMINI.md")
    actions = await _actions(client, doc, 3, 0, 0, [_diag("import-not-found", 3, 0, 18)])
    assert [a.title for a in actions] == ["Create docs/missing.md"]
    edit = actions[0].edit
    assert edit is not None and edit.document_changes is not None
    create = edit.document_changes[0]
    assert isinstance(create, types.CreateFile)
    assert create.uri == uri(workspace / "docs" / "missing.md")


@pytest.mark.asyncio
async def test_remove_cycle_import(client: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(client, workspace / "docs" / "b.md")
    actions = await _actions(client, doc, 0, 10, 10, [_diag("import-cycle", 0, 10, 17)])
    assert actions[0].title == "Remove the import @./a.md (closes a cycle)"
    assert actions[0].edit is not None and actions[0].edit.changes is not None
    (edit,) = actions[0].edit.changes[doc]
    assert (edit.range.start.character, edit.range.end.character, edit.new_text) == (10, 17, "")


@pytest.mark.asyncio
async def test_make_absolute_import_relative(client: LanguageClient, workspace: Path) -> None:
    text = f"Rules: @{workspace}/docs/style.md\n"
    doc = await open_doc(client, workspace / "api" / "GEMINI.md", text)
    actions = await _actions(client, doc, 0, 10, 10, [])
    assert [a.title for a in actions] == ["Make the import relative (../docs/style.md)"]
    assert actions[0].edit is not None and actions[0].edit.changes is not None
    (edit,) = actions[0].edit.changes[doc]
    assert edit.new_text == "../docs/style.md"
    assert (edit.range.start.character, edit.range.end.character) == (8, len(text) - 1)


@pytest.mark.asyncio
async def test_wrap_prose_mention(client: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(client, workspace / "web" / "GEMINI.md", "Ask @alice.\n")
    actions = await _actions(client, doc, 0, 4, 4, [_diag("import-in-prose", 0, 4, 11)])
    assert actions[0].edit is not None and actions[0].edit.changes is not None
    assert actions[0].edit.changes[doc][0].new_text == "`@alice.`"


@pytest.mark.asyncio
async def test_remove_duplicate_memory(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "home" / ".gemini" / "GEMINI.md"
    text = "Global: be brief.\n\n## Gemini Added Memories\n- Use tabs\n- use tabs\n"
    doc = await open_doc(client, path, text)
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    (dup,) = [d for d in report.items if d.code == "memory-duplicate-entry"]
    assert (dup.range.start.line, dup.range.start.character, dup.range.end.character) == (4, 0,
                                                                                         10)
    actions = await _actions(client, doc, 4, 0, 0, [dup])
    assert actions[0].title == "Remove the duplicate memory"
    assert actions[0].edit is not None and actions[0].edit.changes is not None
    (edit,) = actions[0].edit.changes[doc]
    assert (edit.range.start.line, edit.range.end.line, edit.new_text) == (4, 5, "")


@pytest.mark.asyncio
async def test_add_memory_preview_then_save(client: LanguageClient, workspace: Path) -> None:
    from .conftest import plain

    preview = plain(await client.protocol.send_request_async(
        "memlens/addMemory", {"fact": "Prefer tabs", "preview": True}))
    assert isinstance(preview, dict)
    assert preview["description"] == "in ~/.gemini/GEMINI.md"
    assert "+## Gemini Added Memories\n+- Prefer tabs\n" in preview["diff"]
    path = workspace / "home" / ".gemini" / "GEMINI.md"
    assert "Prefer tabs" not in path.read_text()
    saved = plain(await client.protocol.send_request_async(
        "memlens/addMemory", {"fact": "Prefer tabs"}))
    assert isinstance(saved, dict) and saved["success"] is True
    assert saved["message"] == 'Okay, I\'ve remembered that: "Prefer tabs"'
    assert path.read_text() == "Global: be brief.\n\n## Gemini Added Memories\n- Prefer tabs\n"
