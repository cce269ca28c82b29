"""Claude Code's `[[name]]` links between its auto memories, through the language server: go to
definition, completion inside `[[`, find references, rename, and a link naming no memory yet
shown as information (Claude Code 2.1.330's `# Memory` section: "a `[[name]]` that doesn't
match an existing memory yet is fine; it marks something worth writing later, not an
error")."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from .conftest import SERVER, definition_at, open_doc, start, uri


def topic(name: str, description: str, kind: str, body: str) -> str:
    return (f"---\nname: {name}\ndescription: {description}\nmetadata:\n  type: {kind}\n---\n\n"
            f"{body}\n")


TESTING = topic("run-tests", "How to run the tests", "feedback",
                "Use `make test`. See [[ci-setup]] and [[ deploy-steps ]].\n"
                "Later: [[not-written-yet]].")
CI = topic("ci-setup", "The CI pipeline", "project", "CI runs [[run-tests]] on every push.")
DEPLOY = topic("deploy-steps", "How a release is deployed", "project",
               "Deploy after [[run-tests]] passes; [[ci-setup]] builds it.\n"
               "Again: [[run-tests]].")
INDEX = ("- [testing](testing.md) — How to run the tests\n"
         "- [ci](ops/ci.md) — The CI pipeline\n"
         "- [deploy](deploy.md) — How a release is deployed\n")


def memory_folder(workspace: Path) -> Path:
    """Where Claude Code keeps this project's auto memory: HOME/.claude/projects/<the project's
    path with every character but letters and digits turned into `-`>/memory."""
    slug = re.sub(r"[^a-zA-Z0-9]", "-", str(workspace))
    return workspace / "home" / ".claude" / "projects" / slug / "memory"


@pytest.fixture
def memories(workspace: Path) -> Path:
    folder = memory_folder(workspace)
    (folder / "ops").mkdir(parents=True)
    (folder / "testing.md").write_text(TESTING)
    (folder / "ops" / "ci.md").write_text(CI)
    (folder / "deploy.md").write_text(DEPLOY)
    (folder / "MEMORY.md").write_text(INDEX)
    (workspace / "CLAUDE.md").write_text("Project notes. [[run-tests]] is no memory link here.\n")
    return folder


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, memories: Path,
                 workspace: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, workspace)
    yield lsp_client
    await lsp_client.shutdown_session()


def at(text: str, needle: str, shift: int = 0) -> types.Position:
    """The position of `needle`'s first occurrence in `text` (plus `shift` characters)."""
    offset = text.index(needle) + shift
    line = text.count("\n", 0, offset)
    return types.Position(line=line, character=offset - (text.rfind("\n", 0, offset) + 1))


def span(text: str, needle: str, nth: int = 0) -> tuple[int, int, int]:
    """(line, start, end) of the `nth` occurrence of `needle` in `text`."""
    offset = -1
    for _ in range(nth + 1):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1)
    return line, column, column + len(needle)


def located(locations: list[types.Location]) -> list[tuple[str, int, int, int]]:
    return sorted((loc.uri, loc.range.start.line, loc.range.start.character,
                   loc.range.end.character) for loc in locations)


@pytest.mark.asyncio
async def test_definition_goes_to_the_memory_of_that_name(client: LanguageClient,
                                                          memories: Path,
                                                          workspace: Path) -> None:
    doc = await open_doc(client, memories / "testing.md")
    found = await definition_at(client, doc, *_pos(at(TESTING, "[[ci-setup]]", 4)))
    assert isinstance(found, types.Location)
    # The memory's `name:` value, in the topic file one folder down.
    assert (found.uri, found.range.start.line, found.range.start.character,
            found.range.end.character) == (uri(memories / "ops" / "ci.md"),
                                           *span(CI, "ci-setup"))
    # Spaces inside the brackets are not part of the name.
    found = await definition_at(client, doc, *_pos(at(TESTING, "deploy-steps ]]")))
    assert isinstance(found, types.Location)
    assert found.uri == uri(memories / "deploy.md")
    # From the nested file back up.
    nested = await open_doc(client, memories / "ops" / "ci.md")
    found = await definition_at(client, nested, *_pos(at(CI, "run-tests]]")))
    assert isinstance(found, types.Location) and found.uri == uri(memories / "testing.md")
    # A link naming no memory yet goes nowhere; nor does `[[…]]` outside the memory folder.
    assert await definition_at(client, doc, *_pos(at(TESTING, "not-written-yet"))) is None
    claude_md = await open_doc(client, workspace / "CLAUDE.md")
    assert await definition_at(client, claude_md, 0, 18) is None


def _pos(position: types.Position) -> tuple[int, int]:
    return position.line, position.character


@pytest.mark.asyncio
async def test_completion_inside_brackets_offers_the_memories(client: LanguageClient,
                                                              memories: Path) -> None:
    text = TESTING + "Also [["
    doc = await open_doc(client, memories / "testing.md", text)
    end = at(text, "Also [[", len("Also [["))
    result = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=doc), position=end))
    assert isinstance(result, types.CompletionList)
    # Every other memory by name, with its description; the link is closed for you.
    assert [(i.label, i.detail, i.text_edit.new_text if i.text_edit else None)
            for i in result.items] == [("ci-setup", "The CI pipeline", "ci-setup]]"),
                                       ("deploy-steps", "How a release is deployed",
                                        "deploy-steps]]")]
    # Inside a link already closed: the typed part is replaced, no second `]]`.
    text = TESTING + "Also [[de]]"
    await open_doc(client, memories / "deploy.md")  # another open document changes nothing
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=doc, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    inside = at(text, "[[de]]", 4)
    result = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=doc), position=inside))
    assert isinstance(result, types.CompletionList)
    edits = {i.label: i.text_edit for i in result.items}
    edit = edits["deploy-steps"]
    assert isinstance(edit, types.TextEdit)
    assert (edit.new_text, edit.range.start.character, edit.range.end.character) == (
        "deploy-steps", inside.character - 2, inside.character)


@pytest.mark.asyncio
async def test_references_from_the_name_line_and_from_a_link(client: LanguageClient,
                                                             memories: Path) -> None:
    doc = await open_doc(client, memories / "testing.md")
    expected = [(uri(memories / "deploy.md"), *span(DEPLOY, "run-tests", 0)),
                (uri(memories / "deploy.md"), *span(DEPLOY, "run-tests", 1)),
                (uri(memories / "ops" / "ci.md"), *span(CI, "run-tests"))]
    declaration = (uri(memories / "testing.md"), *span(TESTING, "run-tests"))
    result = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=at(TESTING, "run-tests", 2),
        context=types.ReferenceContext(include_declaration=True)))
    assert located(result) == sorted([*expected, declaration])
    deploy = await open_doc(client, memories / "deploy.md")
    result = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=deploy),
        position=at(DEPLOY, "[[run-tests]]", 3),
        context=types.ReferenceContext(include_declaration=False)))
    assert located(result) == sorted(expected)


@pytest.mark.asyncio
async def test_rename_changes_the_name_and_every_link_in_one_edit(client: LanguageClient,
                                                                  memories: Path) -> None:
    deploy = await open_doc(client, memories / "deploy.md")
    position = at(DEPLOY, "[[run-tests]]", 4)
    prepared = await client.text_document_prepare_rename_async(types.PrepareRenameParams(
        text_document=types.TextDocumentIdentifier(uri=deploy), position=position))
    assert isinstance(prepared, types.PrepareRenamePlaceholder)
    assert prepared.placeholder == "run-tests"
    edit = await client.text_document_rename_async(types.RenameParams(
        text_document=types.TextDocumentIdentifier(uri=deploy), position=position,
        new_name="test-suite"))
    assert edit is not None and edit.changes is not None
    changes = sorted((u, e.range.start.line, e.range.start.character, e.range.end.character,
                      e.new_text) for u, edits in edit.changes.items() for e in edits)
    assert changes == sorted([
        (uri(memories / "testing.md"), *span(TESTING, "run-tests"), "test-suite"),
        (uri(memories / "ops" / "ci.md"), *span(CI, "run-tests"), "test-suite"),
        (uri(memories / "deploy.md"), *span(DEPLOY, "run-tests", 0), "test-suite"),
        (uri(memories / "deploy.md"), *span(DEPLOY, "run-tests", 1), "test-suite"),
    ])


@pytest.mark.asyncio
async def test_rename_refuses_a_bad_or_taken_name(client: LanguageClient,
                                                  memories: Path) -> None:
    doc = await open_doc(client, memories / "testing.md")
    position = at(TESTING, "run-tests", 1)
    for new_name, said in [("Test Suite", "kebab-case"), ("ci-setup", "named 'ci-setup'")]:
        with pytest.raises(JsonRpcException) as refused:
            await client.text_document_rename_async(types.RenameParams(
                text_document=types.TextDocumentIdentifier(uri=doc), position=position,
                new_name=new_name))
        assert said in str(refused.value)
    # Nothing to rename away from a name.
    assert await client.text_document_prepare_rename_async(types.PrepareRenameParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=at(TESTING, "make test"))) is None


@pytest.mark.asyncio
async def test_a_dangling_link_is_information(client: LanguageClient, memories: Path) -> None:
    doc = await open_doc(client, memories / "testing.md")
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    dangling = [d for d in report.items if d.code == "memory-link-dangling"]
    assert [(d.severity, d.range.start.line, d.range.start.character, d.range.end.character)
            for d in dangling] == [(types.DiagnosticSeverity.Information,
                                    *span(TESTING, "not-written-yet"))]
    assert "something worth writing later, not an error" in dangling[0].message
    # The links that name a memory (one of them written with spaces) are fine.
    assert [d.code for d in report.items] == ["memory-link-dangling"]


@pytest.mark.asyncio
async def test_add_memory_for_claude_code_previews_then_writes(client: LanguageClient,
                                                               memories: Path,
                                                               workspace: Path) -> None:
    from .conftest import plain

    gemini = (workspace / "home" / ".gemini" / "GEMINI.md").read_bytes()
    ask = {"fact": "Staging is read-only", "agent": "claude", "memoryType": "reference",
           "uri": uri(workspace / "CLAUDE.md")}
    preview = plain(await client.protocol.send_request_async(
        "memlens/addMemory", {**ask, "preview": True}))
    assert isinstance(preview, dict) and preview["success"] is True, preview
    topic = memories / "staging-is-read-only.md"
    pointer = "- [staging-is-read-only](staging-is-read-only.md) \u2014 Staging is read-only"
    assert (preview["path"], preview["indexPath"], preview["indexLine"], preview["memoryTypes"]
            ) == (str(topic), str(memories / "MEMORY.md"), pointer,
                  ["user", "feedback", "project", "reference"])
    # The preview shows both files' change and writes nothing.
    assert "+  type: reference\n" in preview["diff"] and f"+{pointer}\n" in preview["diff"]
    assert not topic.exists() and (memories / "MEMORY.md").read_text() == INDEX
    saved = plain(await client.protocol.send_request_async(
        "memlens/addMemory", {**ask, "name": preview["name"]}))
    assert isinstance(saved, dict) and saved["success"] is True, saved
    assert topic.read_text() == preview["proposed"]
    assert (memories / "MEMORY.md").read_text() == INDEX + pointer + "\n"
    assert (workspace / "home" / ".gemini" / "GEMINI.md").read_bytes() == gemini
    # Saving it again under the same name is refused, and changes nothing.
    again = plain(await client.protocol.send_request_async(
        "memlens/addMemory", {**ask, "name": preview["name"]}))
    assert isinstance(again, dict) and again["success"] is False
    assert "exists already" in again["message"]
    assert (memories / "MEMORY.md").read_text() == INDEX + pointer + "\n"
    # The new memory is a link target at once.
    doc = await open_doc(client, memories / "deploy.md", DEPLOY + "[[staging-is-read-only]]\n")
    found = await definition_at(client, doc, DEPLOY.count("\n"), 4)
    assert isinstance(found, types.Location) and found.uri == uri(topic)


@pytest.mark.asyncio
async def test_add_memory_for_claude_code_refused_when_auto_memory_is_off(
        client: LanguageClient, memories: Path, workspace: Path) -> None:
    from .conftest import plain

    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text('{"autoMemoryEnabled": false}')
    result = plain(await client.protocol.send_request_async(
        "memlens/addMemory", {"fact": "x", "agent": "claude", "preview": True}))
    assert isinstance(result, dict) and result["success"] is False
    assert "auto memory is off" in result["message"]
    assert str(workspace / ".claude" / "settings.json") in result["message"]
    assert sorted(p.name for p in memories.iterdir()) == ["MEMORY.md", "deploy.md", "ops",
                                                          "testing.md"]


@pytest.mark.asyncio
async def test_memory_view_groups_topic_files_by_type_after_the_index(
        client: LanguageClient, memories: Path) -> None:
    import os
    import time

    from .conftest import plain

    week = time.time() - 7 * 86_400 - 60
    os.utime(memories / "deploy.md", (week, week))
    tree = plain(await client.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(tree, dict)
    (folder,) = tree["folders"]
    (claude,) = [a for a in folder["otherAgents"] if a["agent"] == "claude"]
    rows = [(Path(f["path"]).name, f["tier"], f.get("group"), f.get("note"))
            for f in claude["files"]]
    at = [r[0] for r in rows].index("MEMORY.md")
    # The index first, then Claude Code's types in its order, each group by name.
    assert rows[at:at + 4] == [
        ("MEMORY.md", "auto", None, None),
        ("testing.md", "memory", "Memories \u00b7 feedback",
         "How to run the tests \u00b7 saved today"),
        ("ci.md", "memory", "Memories \u00b7 project", "The CI pipeline \u00b7 saved today"),
        ("deploy.md", "memory", "Memories \u00b7 project",
         "How a release is deployed \u00b7 saved 7 days ago"),
    ]
