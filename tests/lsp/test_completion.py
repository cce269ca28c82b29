"""Completion of paths after `@` and of SKILL.md frontmatter keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from .conftest import open_doc


async def _complete(client: LanguageClient, doc: str, line: int,
                    character: int) -> list[types.CompletionItem]:
    result = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=line, character=character)))
    assert isinstance(result, types.CompletionList)
    return result.items


@pytest.mark.asyncio
async def test_paths_after_at_folders_first(client: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(client, workspace / "api" / "GEMINI.md", "See @\n")
    items = await _complete(client, doc, 0, 5)
    labels = [i.label for i in sorted(items, key=lambda i: i.sort_text or "")]
    assert labels == ["app.py", "GEMINI.md"]  # case-insensitive, like VS Code
    doc = await open_doc(client, workspace / "GEMINI.md", "@./d\n")
    items = await _complete(client, doc, 0, 4)
    ordered = sorted(items, key=lambda i: i.sort_text or "")
    assert [i.label for i in ordered][:4] == ["api/", "cycle/", "docs/", "home/"]
    assert ordered[0].kind == types.CompletionItemKind.Folder
    edit = ordered[0].text_edit
    assert isinstance(edit, types.TextEdit)
    assert edit.range == types.Range(start=types.Position(line=0, character=3),
                                     end=types.Position(line=0, character=4))


@pytest.mark.asyncio
async def test_paths_inside_a_subfolder(client: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(client, workspace / "GEMINI.md", "@./docs/\n")
    items = await _complete(client, doc, 0, 8)
    assert sorted(i.label for i in items) == ["a.md", "b.md", "naming.md", "style.md"]


@pytest.mark.asyncio
async def test_skill_frontmatter_keys(client: LanguageClient, workspace: Path) -> None:
    skill = workspace / ".gemini" / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: demo\n\n---\nBody\n")
    doc = await open_doc(client, skill)
    items = await _complete(client, doc, 2, 0)
    assert [i.label for i in items] == ["description", "license", "compatibility", "metadata",
                                        "allowed-tools"]


@pytest.mark.asyncio
async def test_no_completion_without_at(client: LanguageClient, workspace: Path) -> None:
    doc = await open_doc(client, workspace / "api" / "GEMINI.md", "plain words\n")
    result = await client.text_document_completion_async(types.CompletionParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=5)))
    assert result is None


@pytest.mark.asyncio
async def test_home_paths_in_claude_md(client: LanguageClient, workspace: Path) -> None:
    # `@~/` is Claude Code's include of the home folder; the workspace's HOME is ws/home.
    doc = await open_doc(client, workspace / "CLAUDE.md", "Mine: @~/.gemini/\n")
    items = await _complete(client, doc, 0, 17)
    assert [i.label for i in items] == ["GEMINI.md"]
    # Gemini CLI has no `~` import: a GEMINI.md gets nothing for it.
    doc = await open_doc(client, workspace / "api" / "GEMINI.md", "@~/.gemini/\n")
    assert list(await _complete(client, doc, 0, 11)) == []
