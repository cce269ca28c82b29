"""`instruction-conflict` in the editor: pushed on both lines once computed off the event
loop, with related information pointing at the other rule; an edit that makes the rules
agree clears it (lsp/conflicts.py)."""

from __future__ import annotations

import ast
import asyncio
import os
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from ..conftest import build_tree
from .conftest import open_doc, uri


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    build_tree(root, {".git": None, "home": None, "CLAUDE.md": "# Rules\nUse pnpm.\n",
                      ".claude/rules/deps.md": "Use yarn.\n"})
    return root


def _command_of(action: types.CodeAction | types.Command) -> dict[str, object]:
    """The command a code action runs. The test client reads a code action that has a command
    and no edit as a Command whose `command` is the command object's text (VS Code's client
    tells them apart by the type of `command`)."""
    if isinstance(action, types.CodeAction):
        assert action.command is not None
        return {"title": action.title, "command": action.command.command,
                "arguments": action.command.arguments}
    found = ast.literal_eval(action.command)
    assert isinstance(found, dict)
    return found


async def _conflicts(client: LanguageClient, doc: str, count: int) -> list[types.Diagnostic]:
    for _ in range(300):
        items = [d for d in client.diagnostics.get(doc, []) if d.code == "instruction-conflict"]
        if len(items) == count:
            return items
        await asyncio.sleep(0.05)
    raise AssertionError(f"never {count} conflict(s): {client.diagnostics.get(doc)}")


@pytest.mark.asyncio
async def test_both_lines_get_the_conflict_with_related_information(
        client: LanguageClient, workspace: Path) -> None:
    main = await open_doc(client, workspace / "CLAUDE.md")
    rule = await open_doc(client, workspace / ".claude/rules/deps.md")
    [here] = await _conflicts(client, main, 1)
    [there] = await _conflicts(client, rule, 1)
    assert here.range.start == types.Position(line=1, character=0)
    assert here.severity == types.DiagnosticSeverity.Warning
    assert "seen last: .claude/rules/deps.md:1" in here.message
    [related] = here.related_information or []
    assert related.location.uri == uri(workspace / ".claude/rules/deps.md")
    assert related.location.range.start == types.Position(line=0, character=0)
    [back] = there.related_information or []
    assert back.location.uri == main
    # A code action opens both side by side (the client only opens the files).
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=main), range=here.range,
        context=types.CodeActionContext(diagnostics=[here])))
    [action] = [_command_of(a) for a in actions or []]
    assert action["title"] == "Open both side by side (deps.md:1)"
    assert action["command"] == "memlens.openSideBySide"
    assert action["arguments"] == [main, 1, uri(workspace / ".claude/rules/deps.md"), 0]
    # The rules agree once the buffer says so.
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=main, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(
            text="# Rules\nUse yarn.\n")]))
    await _conflicts(client, main, 0)
    await _conflicts(client, rule, 0)
