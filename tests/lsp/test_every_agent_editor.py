"""Every agent equal in the editor (issue 31): the features that follow references (moving a
file, document symbols, links, code actions, hovers) read each file by the rules of the agent
that reads it, and where Gemini CLI is not shown (a tree with Claude Code's files only, only
`claude` on PATH) nothing follows Gemini CLI's rules; a skill's hover gives the verdict of each
agent shown that looks at it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from ..conftest import build_tree
from .conftest import SERVER, open_doc, start, uri
from .test_agents_shown import CLAUDE_ON_PATH, _open_folder

TREE = {
    "home": None,
    "repo/.git": None,
    # Claude Code includes neither what is in an HTML comment nor a path that runs into a
    # space; it reads `@~/` in HOME.
    "repo/CLAUDE.md": "# Rules\n\nSee @AGENTS.md and @docs/style.md for style.\n"
                      "<!-- @./old.md was here -->\n@~/missing.md\n",
    "repo/AGENTS.md": "Run make test. Also @./docs/style.md\n",
    "repo/docs/style.md": "Tabs.\n",
    "repo/docs/unread.md": "No agent reads this: @./style.md\n",
    "repo/src/app.py": "print('hi')\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    build_tree(root, TREE)
    return root / "repo"


@pytest_lsp.fixture(config=CLAUDE_ON_PATH)
async def claude_only(lsp_client: LanguageClient, repo: Path) -> AsyncIterator[LanguageClient]:
    await _open_folder(lsp_client, repo, repo.parent / "home", trusted=True)
    yield lsp_client
    await lsp_client.shutdown_session()


async def _moves(client: LanguageClient, *moves: tuple[Path, Path]
                 ) -> dict[str, list[tuple[int, int, int, str]]]:
    edit = await client.workspace_will_rename_files_async(types.RenameFilesParams(
        files=[types.FileRename(old_uri=uri(old), new_uri=uri(new)) for old, new in moves]))
    if edit is None or edit.changes is None:
        return {}
    return {u: sorted((e.range.start.line, e.range.start.character, e.range.end.character,
                       e.new_text) for e in edits) for u, edits in edit.changes.items()}


def _warnings(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Warning]


@pytest.mark.asyncio
async def test_moving_a_file_rewrites_claude_code_includes_in_a_claude_only_tree(
        claude_only: LanguageClient, repo: Path) -> None:
    changes = await _moves(claude_only, (repo / "AGENTS.md", repo / "guide" / "AGENTS.md"))
    assert changes == {
        # Written bare, rewritten bare (Claude Code reads `@guide/AGENTS.md` from here).
        uri(repo / "CLAUDE.md"): [(2, 5, 14, "guide/AGENTS.md")],
        # The moved file's own include follows it.
        uri(repo / "AGENTS.md"): [(0, 21, 36, "../docs/style.md")]}


@pytest.mark.asyncio
async def test_a_reference_claude_code_would_misread_is_left_and_said(
        claude_only: LanguageClient, repo: Path) -> None:
    """`@docs/my style.md` is `@docs/my` to Claude Code: no edit, a warning naming it."""
    changes = await _moves(claude_only,
                           (repo / "docs" / "style.md", repo / "docs" / "my style.md"))
    assert changes == {}
    for _ in range(100):
        if _warnings(claude_only):
            break
        await asyncio.sleep(0.02)
    (warning,) = _warnings(claude_only)
    assert warning.startswith("Memory Lens left 2 reference(s) as they are: ")
    assert ("`@./docs/style.md` in AGENTS.md would become `@./docs/my style.md`, which "
            "Claude Code reads as another path") in warning


@pytest.mark.asyncio
async def test_a_claude_md_gemini_cli_imports_is_rewritten_by_claude_code_rules(
        client: LanguageClient, workspace: Path) -> None:
    """A CLAUDE.md that GEMINI.md imports is read by Claude Code's rules (it is Claude Code's
    file): its bare `@AGENTS.md` stays bare when AGENTS.md moves, its `@~/notes.md` (HOME's
    file wherever it moves) stays when it moves itself; GEMINI.md's import follows it."""
    (workspace / "AGENTS.md").write_text("Agents.\n")
    (workspace / "CLAUDE.md").write_text("Claude: @AGENTS.md\n@~/notes.md\n")
    (workspace / "home" / "notes.md").write_text("Notes.\n")
    (workspace / "GEMINI.md").write_text("@./CLAUDE.md\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    changes = await _moves(client, (workspace / "AGENTS.md", workspace / "guide" / "AGENTS.md"))
    assert changes == {uri(workspace / "CLAUDE.md"): [(0, 9, 18, "guide/AGENTS.md")]}
    changes = await _moves(client, (workspace / "CLAUDE.md", workspace / "sub" / "CLAUDE.md"))
    assert changes == {uri(workspace / "GEMINI.md"): [(0, 1, 12, "./sub/CLAUDE.md")],
                       uri(workspace / "CLAUDE.md"): [(0, 9, 18, "../AGENTS.md")]}


@pytest.mark.asyncio
async def test_symbols_follow_claude_code_includes(claude_only: LanguageClient,
                                                   repo: Path) -> None:
    doc = await open_doc(claude_only, repo / "CLAUDE.md")
    symbols = await claude_only.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert [(s.name, s.range.start.line) for s in symbols or []
            if isinstance(s, types.DocumentSymbol)] == [
        ("Rules", 0), ("@AGENTS.md", 2), ("@docs/style.md", 2), ("@~/missing.md", 4)]


@pytest.mark.asyncio
async def test_create_a_missing_include_where_claude_code_reads_it(
        claude_only: LanguageClient, repo: Path) -> None:
    """`@~/missing.md` names HOME/missing.md for Claude Code: "Create" makes that file; a
    missing file outside the workspace folder and HOME is not offered."""
    with (repo / "CLAUDE.md").open("a") as claude_md:
        claude_md.write("@../elsewhere/missing.md\n")
    await claude_only.protocol.send_request_async("memlens/refresh", {})
    doc = await open_doc(claude_only, repo / "CLAUDE.md")
    report = await claude_only.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    missing = [d for d in report.items if d.code == "import-not-found"]
    assert [d.range.start.line for d in missing] == [4, 5]

    async def actions(diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        result = await claude_only.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc), range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic])))
        return [a for a in result or [] if isinstance(a, types.CodeAction)]

    (action,) = await actions(missing[0])
    assert action.title == "Create ../home/missing.md"
    assert action.edit is not None and action.edit.document_changes is not None
    (create,) = action.edit.document_changes
    assert isinstance(create, types.CreateFile)
    assert create.uri == uri(repo.parent / "home" / "missing.md")
    assert await actions(missing[1]) == []


@pytest.mark.asyncio
async def test_a_file_no_agent_reads_follows_no_gemini_rules_where_gemini_is_not_shown(
        claude_only: LanguageClient, repo: Path) -> None:
    doc = await open_doc(claude_only, repo / "docs" / "unread.md")
    at = types.Position(line=0, character=23)
    hover = await claude_only.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc), position=at))
    assert hover is None
    assert not await claude_only.text_document_document_link_async(types.DocumentLinkParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert await claude_only.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=doc), position=at)) is None
    assert not await claude_only.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=doc)))
    # CLAUDE.md's line 1: Claude Code's view, nothing of Gemini CLI.
    claude_md = await open_doc(claude_only, repo / "CLAUDE.md")
    hover = await claude_only.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=claude_md),
        position=types.Position(line=0, character=2)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.value.startswith("**Claude Code memory for")
    assert "Gemini" not in hover.contents.value



@pytest.mark.asyncio
async def test_skill_hover_gives_claude_codes_verdict_where_gemini_is_not_shown(
        claude_only: LanguageClient, repo: Path) -> None:
    """A skill in .claude/skills: Claude Code offers it; Gemini CLI, which never looks there
    and is not shown, says nothing (it said "not loaded (outside the skills folders)")."""
    skill = repo / ".claude" / "skills" / "fmt" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: fmt\ndescription: Format it.\n---\nSteps.\n")
    await claude_only.protocol.send_request_async("memlens/refresh", {})
    doc = await open_doc(claude_only, skill)
    found = await claude_only.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=1, character=3)))
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    assert found.contents.value == (
        "**Skill `fmt`** — Claude Code: tier: project; offered\n\nFormat it.")


@pytest_lsp.fixture(config=SERVER)
async def gemini_and_codex(lsp_client: LanguageClient, workspace: Path
                           ) -> AsyncIterator[LanguageClient]:
    """Gemini CLI and Codex in use (`memlens.agents`)."""
    await start(lsp_client, workspace, agents=["gemini", "codex"])
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_skill_hover_gives_each_agents_verdict(gemini_and_codex: LanguageClient,
                                                     workspace: Path) -> None:
    """A skill in .agents/skills, which Gemini CLI and Codex both look at: one line each, in
    the registry's order, neither first by rank."""
    skill = workspace / ".agents" / "skills" / "lint" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: lint\ndescription: Lint it.\n---\nSteps.\n")
    await gemini_and_codex.protocol.send_request_async("memlens/refresh", {})
    doc = await open_doc(gemini_and_codex, skill)
    found = await gemini_and_codex.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=1, character=3)))
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    assert found.contents.value == ("**Skill `lint`**\n\n"
                                    "- Gemini CLI: tier: workspace-agents; offered\n"
                                    "- Codex: tier: repo; offered\n\nLint it.")
