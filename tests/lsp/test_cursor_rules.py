"""Cursor's rules (a convention) through the language server: a rule's check reaches the
editor as a diagnostic on the rule's own line; the Memory view and the side-by-side choice
list Cursor where its rules are."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from ..conftest import build_tree
from .conftest import open_doc, plain, uri


@pytest.mark.asyncio
async def test_always_apply_written_as_a_string_is_a_diagnostic(client: LanguageClient,
                                                                 workspace: Path) -> None:
    rule = workspace / ".cursor" / "rules" / "style.mdc"
    build_tree(workspace, {".cursor/rules/style.mdc":
                           "---\ndescription: Style\nalwaysApply: \"true\"\n---\nTabs.\n"})
    await client.protocol.send_request_async("memlens/refresh", {})
    everything = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[]))
    by_uri = {item.uri: [(str(d.code), d.range.start.line, d.severity) for d in item.items]
              for item in everything.items}
    assert by_uri.get(uri(rule)) == [("cursor-always-apply-string", 2,
                                      types.DiagnosticSeverity.Warning)]
    tree = plain(await client.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(tree, dict)
    (folder,) = tree["folders"]
    (cursor,) = [a for a in folder["otherAgents"] if a["agent"] == "cursor"]
    assert [(f["tier"], f["path"], f["note"]) for f in cursor["files"]] == [
        ("agent requested", str(rule), "agent requested: only offered by its description "
                                       "(Style) (convention)")]
    agents = plain(await client.protocol.send_request_async("memlens/agents",
                                                            {"uri": uri(workspace)}))
    assert isinstance(agents, dict)
    (choice,) = [a for a in agents["agents"] if a["agent"] == "cursor"]
    assert (choice["label"], choice["basis"], choice["verified"], choice["hasFiles"]) == (
        "Cursor", "convention", False, True)
    assert "cursor" in agents["sideBySide"]
    # Line 1 of a rule hovers with what Cursor loads there, called a convention.
    doc = await open_doc(client, rule)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=1)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "Cursor rules for" in hover.contents.value
    assert "a convention from Cursor's docs, not verified" in hover.contents.value


@pytest.mark.asyncio
async def test_opening_a_file_names_the_cursor_rule_it_attaches(client: LanguageClient,
                                                                workspace: Path) -> None:
    received: list[Any] = []

    @client.feature("memlens/jitLoaded")
    def on_jit(params: Any) -> None:
        received.append(plain(params))

    rule = workspace / ".cursor" / "rules" / "py.mdc"
    build_tree(workspace, {".cursor/rules/py.mdc": "---\nglobs: **/*.py\n---\nType hints.\n"})
    await client.protocol.send_request_async("memlens/refresh", {})
    await open_doc(client, workspace / "api" / "app.py")
    for _ in range(100):
        if received:
            break
        await asyncio.sleep(0.05)
    (event,) = received
    cursor = [load for load in event["loads"] if load["agent"] == "cursor"]
    assert cursor == [{"agent": "cursor", "label": "Cursor (convention)",
                       "files": [{"path": str(rule), "chars": len("Type hints.\n"),
                                  "reason": "its globs match api/app.py"}],
                       "context": f"--- {rule} ---\nType hints.\n"}]
