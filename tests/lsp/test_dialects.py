"""Claude Code and AGENTS.md files in the editor: definition across dialects (a CLAUDE.md that
includes an AGENTS.md, an `@~/` include), their diagnostics, and the line-1 hover."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from memlens.agents import AGENT_IDS

from .conftest import SERVER, definition_at, open_doc, plain, start, uri


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
        result = await definition_at(client, doc, line, character)
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
    # An include takes the label of the file that brought it in, as Claude Code sends it.
    assert (f"Contents of {workspace}/AGENTS.md (project instructions, checked into the "
            "codebase):") in value
    assert "Shared note." in value


@pytest.mark.asyncio
async def test_references_and_links_across_dialects(client: LanguageClient,
                                                    workspace: Path) -> None:
    doc = await _setup(client, workspace)
    agents = uri(workspace / "AGENTS.md")
    found = await client.text_document_references_async(types.ReferenceParams(
        text_document=types.TextDocumentIdentifier(uri=agents),
        position=types.Position(line=0, character=0),
        context=types.ReferenceContext(include_declaration=False)))
    assert [(loc.uri, loc.range.start.line, loc.range.start.character,
             loc.range.end.character) for loc in found or []] == [(doc, 0, 13, 25)]
    links = await client.text_document_document_link_async(types.DocumentLinkParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    # `@~/shared.md` is a Claude Code include of the home folder; `@./gone.md` has no target.
    assert [(link.range.start.line, link.target) for link in links or []] == [
        (0, agents), (1, uri(workspace / "home" / "shared.md"))]


@pytest.mark.asyncio
async def test_a_subfolder_claude_md_is_checked(client: LanguageClient,
                                                workspace: Path) -> None:
    (workspace / "api" / "CLAUDE.md").write_text("API notes @./nowhere.md\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri(workspace / "api" / "CLAUDE.md"))))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert [(d.code, d.range.start.line, d.range.start.character) for d in report.items] == [
        ("import-not-found", 0, 10)]
    # Fixing it on disk (the missing target appears) clears it: the include target is watched.
    (workspace / "api" / "nowhere.md").write_text("Now here.\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(workspace / "api" / "nowhere.md"),
                        type=types.FileChangeType.Created)]))
    for _ in range(50):
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(
                uri=uri(workspace / "api" / "CLAUDE.md"))))
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
        if not report.items:
            break
        await asyncio.sleep(0.05)
    assert list(report.items) == []


@pytest.mark.asyncio
async def test_claude_code_jit_for_an_opened_file(client: LanguageClient,
                                                  workspace: Path) -> None:
    received: list[Any] = []

    @client.feature("memlens/jitLoaded")
    def on_jit(params: Any) -> None:
        received.append(plain(params))

    (workspace / "CLAUDE.md").write_text("Root rules.\n")
    (workspace / "api" / "CLAUDE.md").write_text("API: validate input.\n")
    rules = workspace / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "python.md").write_text("---\npaths:\n  - \"**/*.py\"\n---\nType hints.\n")
    (rules / "ts.md").write_text("---\npaths: \"**/*.ts\"\n---\nStrict mode.\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    await open_doc(client, workspace / "api" / "app.py")
    for _ in range(50):
        if received:
            break
        await asyncio.sleep(0.05)
    (event,) = received
    assert event["uri"] == uri(workspace / "api" / "app.py")
    # One entry per agent shown, in the registry's order: Gemini CLI (pinned), Claude Code (its
    # files are here). VS Code's chat would attach the rule too, but it is neither in use nor
    # has files of its own here: not named.
    assert [(load["agent"], load["label"]) for load in event["loads"]] == [
        ("gemini", "Gemini CLI"), ("claude", "Claude Code")]
    gemini, claude = event["loads"]
    assert [f["path"] for f in gemini["files"]] == [str(workspace / "api" / "GEMINI.md")]
    assert claude["files"] == [
        {"path": str(workspace / "api" / "CLAUDE.md"), "chars": 21, "reason": "api/ is read"},
        {"path": str(rules / "python.md"), "chars": len((rules / "python.md").read_text()),
         "reason": "paths: **/*.py"}]
    # Once per session: another Python file in api/ adds nothing for either agent.
    (workspace / "api" / "util.py").write_text("x = 1\n")
    await open_doc(client, workspace / "api" / "util.py")
    await asyncio.sleep(0.3)
    assert len(received) == 1


@pytest.mark.asyncio
async def test_show_for_each_agent(client: LanguageClient, workspace: Path) -> None:
    doc = await _setup(client, workspace)
    rules = workspace / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "py.md").write_text("---\npaths: \"**/*.py\"\n---\nType hints.\n")
    app = uri(workspace / "api" / "app.py")

    async def show(target: str, dialect: str | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"uri": target, **({"dialect": dialect} if dialect else {})}
        data = plain(await client.protocol.send_request_async("memlens/show", params))
        assert isinstance(data, dict)
        return data

    # The file's own dialect by default: a CLAUDE.md shows Claude Code's view.
    claude = await show(doc)
    assert claude["dialect"] == "claude"
    assert claude["files"] == [str(workspace / "CLAUDE.md"), str(workspace / "AGENTS.md"),
                               str(workspace / "home" / "shared.md")]
    # For a Python file, Claude Code adds the rule whose paths: match it.
    for_app = await show(app, "claude")
    assert for_app["files"][-1] == str(rules / "py.md")
    # ... sent after the Read as Claude Code sends it: frontmatter gone, the text untrimmed.
    assert for_app["content"].endswith(
        f"<system-reminder>\nContents of {rules}/py.md:\n\nType hints.\n\n</system-reminder>")
    agents = await show(app, "agents")
    assert (agents["dialect"], agents["files"]) == ("agents", [str(workspace / "AGENTS.md")])
    assert agents["content"] == f"--- {workspace}/AGENTS.md ---\nAgents: run make test."
    assert agents["sections"] == [{"path": str(workspace / "AGENTS.md"), "startLine": 0,
                                   "endLine": 1}]
    lines = for_app["content"].split("\n")
    assert [s["path"] for s in for_app["sections"]] == for_app["files"]
    for section, following in zip(for_app["sections"], [*for_app["sections"][1:], None],
                                  strict=True):
        assert lines[section["startLine"]].startswith(f"Contents of {section['path']}")
        assert section["endLine"] < (following["startLine"] if following else len(lines))
        assert lines[section["endLine"]].strip()
    gemini = await show(app)
    assert gemini["dialect"] == "gemini" and "Claude rules" not in gemini["content"]
    bad = client.protocol.send_request_async("memlens/show", {"uri": app, "dialect": "windsurf"})
    with pytest.raises(Exception, match="dialect"):
        await bad


@pytest_lsp.fixture(config=SERVER)
async def every_agent(lsp_client: LanguageClient, workspace: Path
                      ) -> AsyncIterator[LanguageClient]:
    """Every agent in use (`memlens.agents`): each has its node in the Memory view."""
    await start(lsp_client, workspace, agents=list(AGENT_IDS))
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_memory_view_shows_the_agents_every_view_shows(client: LanguageClient,
                                                                 workspace: Path) -> None:
    """No agent in use: the agents whose own files are here (Claude Code, the AGENTS.md
    convention), as `memlens list` and the matrix show them — not every agent that would read
    a CLAUDE.md or an AGENTS.md (Codex, OpenCode, pi)."""
    await _setup(client, workspace)
    tree = plain(await client.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(tree, dict)
    (folder,) = tree["folders"]
    assert [a["agent"] for a in folder["otherAgents"]] == ["claude", "agents"]


@pytest.mark.asyncio
async def test_memory_tree_lists_the_other_agents(every_agent: LanguageClient,
                                                  workspace: Path) -> None:
    client = every_agent
    await _setup(client, workspace)
    (workspace / "api" / "AGENTS.md").write_text("API agents.\n")
    (workspace / "api" / "CLAUDE.md").write_text("API for Claude.\n")
    rules = workspace / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "py.md").write_text("---\npaths: \"**/*.py\"\n---\nType hints.\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    tree = plain(await client.protocol.send_request_async("memlens/memoryTree", {}))
    assert isinstance(tree, dict)
    (folder,) = tree["folders"]
    # (Problem counts are the file's, every agent's in use: test_memory_view_counts.py.)
    agents = {a["agent"]: [(f["tier"], f["path"].removeprefix(f"{workspace}/"), f["note"])
                           for f in a["files"]]
              for a in folder["otherAgents"]}
    claude_md = next(f for f in folder["otherAgents"][0]["files"]
                     if f["path"].endswith("/CLAUDE.md"))
    assert claude_md["warnings"] >= 1  # its @./gone.md
    assert agents == {
        "claude": [("project", "CLAUDE.md", None),
                   ("include", "AGENTS.md", None), ("include", "home/shared.md", None),
                   ("rule", ".claude/rules/py.md", "applies to **/*.py"),
                   ("nested", "api/CLAUDE.md", "when a tool reads a file in api/")],
        "agents": [("agents", "AGENTS.md", "in force here (nearest)"),
                   ("agents", "api/AGENTS.md", "in force in api/ and below")],
        "codex": [("project", "AGENTS.md", None),
                  ("nested", "api/AGENTS.md", "read when Codex starts in api/")],
        # VS Code's chat reads the root AGENTS.md and CLAUDE.md and Claude Code's rules (its
        # nested AGENTS.md setting is off by default; it follows no includes).
        "vscode-chat": [("agents-md", "AGENTS.md", None), ("claude-md", "CLAUDE.md", None),
                        ("instructions", ".claude/rules/py.md",
                         "attached when a file matching **/*.py is")],
        # pi: one file per folder, AGENTS.md before CLAUDE.md.
        "pi": [("project", "AGENTS.md", None),
               ("nested", "api/AGENTS.md", "read when pi starts in api/")],
        # Antigravity CLI (a convention): GEMINI.md and AGENTS.md at start.
        "antigravity": [("global", "home/.gemini/GEMINI.md", "at start (convention)"),
                        ("project", "GEMINI.md", "at start (convention)"),
                        ("project", "AGENTS.md", "at start (convention)")],
        # OpenCode: the first name of its chain, and what a read in api/ brings.
        "opencode": [("project", "AGENTS.md", None),
                     ("nested", "api/AGENTS.md", "when a read touches a path in api/")],
    }


@pytest.mark.asyncio
async def test_a_file_claude_code_includes_is_read_with_its_rules(client: LanguageClient,
                                                                  workspace: Path) -> None:
    await _setup(client, workspace)
    # AGENTS.md is included by CLAUDE.md, so its own `@~/` include is Claude Code's too.
    (workspace / "AGENTS.md").write_text("Agents: see @~/shared.md\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    doc = await open_doc(client, workspace / "AGENTS.md")
    result = await definition_at(client, doc, 0, 15)
    assert isinstance(result, types.Location)
    assert result.uri == uri(workspace / "home" / "shared.md")


@pytest.mark.asyncio
async def test_moving_a_file_rewrites_claude_includes_in_their_form(
        client: LanguageClient, workspace: Path) -> None:
    doc = await _setup(client, workspace)
    renames = [(workspace / "AGENTS.md", workspace / "docs" / "agents" / "AGENTS.md"),
               (workspace / "home" / "shared.md", workspace / "home" / "notes" / "shared.md")]
    edit = await client.workspace_will_rename_files_async(types.RenameFilesParams(
        files=[types.FileRename(old_uri=uri(old), new_uri=uri(new)) for old, new in renames]))
    assert edit is not None and edit.changes is not None
    assert {u: [(e.range.start.line, e.range.start.character, e.range.end.character,
                 e.new_text) for e in edits] for u, edits in edit.changes.items()} == {
        doc: [(0, 14, 25, "./docs/agents/AGENTS.md"), (1, 1, 12, "~/notes/shared.md")]}


@pytest_lsp.fixture(config=SERVER)
async def copilot_in_use(lsp_client: LanguageClient, workspace: Path
                         ) -> AsyncIterator[LanguageClient]:
    """Gemini CLI and GitHub Copilot CLI in use (`memlens.agents`)."""
    await start(lsp_client, workspace, agents=["gemini@0.43", "copilot"])
    yield lsp_client
    await lsp_client.shutdown_session()


async def _on_read_of_app(client: LanguageClient, workspace: Path) -> list[Any]:
    """The `memlens/jitLoaded` events of opening api/app.py, with two `.github/instructions`
    files (VS Code's chat's folder, which GitHub Copilot CLI reads too)."""
    received: list[Any] = []

    @client.feature("memlens/jitLoaded")
    def on_jit(params: Any) -> None:
        received.append(plain(params))

    instructions = workspace / ".github" / "instructions"
    instructions.mkdir(parents=True)
    (instructions / "py.instructions.md").write_text("---\napplyTo: \"**/*.py\"\n---\nPy.\n")
    (instructions / "ts.instructions.md").write_text("---\napplyTo: \"**/*.ts\"\n---\nTs.\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    await open_doc(client, workspace / "api" / "app.py")
    for _ in range(50):
        if received:
            break
        await asyncio.sleep(0.05)
    return received


@pytest.mark.asyncio
async def test_copilot_cli_on_read_notice(copilot_in_use: LanguageClient,
                                          workspace: Path) -> None:
    """GitHub Copilot CLI in use: its files on read reach `memlens/jitLoaded` under its own
    name, the instructions file whose applyTo matches, then the opened file's folder's
    GEMINI.md; once a session."""
    client = copilot_in_use
    received = await _on_read_of_app(client, workspace)
    instructions = workspace / ".github" / "instructions"
    (event,) = received
    (copilot,) = [load for load in event["loads"] if load["agent"] == "copilot"]
    assert copilot["label"] == "GitHub Copilot CLI"
    assert [(e["path"], e["reason"]) for e in copilot["files"]] == [
        (str(instructions / "py.instructions.md"), "applyTo: **/*.py"),
        (str(workspace / "api" / "GEMINI.md"), "api/ is read")]
    (workspace / "api" / "util.py").write_text("x = 1\n")
    await open_doc(client, workspace / "api" / "util.py")
    await asyncio.sleep(0.3)
    assert len(received) == 1


@pytest.mark.asyncio
async def test_an_agent_not_shown_is_not_named_on_read(client: LanguageClient,
                                                       workspace: Path) -> None:
    """GitHub Copilot CLI neither in use nor with a file of its own here (the
    `.github/instructions` folder is VS Code's chat's): the notice names Gemini CLI (pinned)
    and VS Code's chat (its files), not GitHub Copilot CLI, though it would read them."""
    received = await _on_read_of_app(client, workspace)
    assert [[load["agent"] for load in event["loads"]] for event in received] == [
        ["gemini", "vscode-chat"]]


@pytest.mark.asyncio
async def test_memory_tree_lists_copilot_with_its_own_files(client: LanguageClient,
                                                            workspace: Path) -> None:
    """With a `.github/copilot-instructions.md`, the Memory view lists what GitHub Copilot CLI
    reads for the folder: its blocks at start, a scoped instructions file and the subfolder
    files it reads on read."""
    github = workspace / ".github"
    (github / "instructions").mkdir(parents=True)
    (github / "copilot-instructions.md").write_text("Use tabs.\n")
    (github / "instructions" / "py.instructions.md").write_text(
        "---\napplyTo: \"**/*.py\"\n---\nPy.\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    tree = plain(await client.protocol.send_request_async("memlens/memoryTree", {}))
    (folder,) = tree["folders"]
    copilot = {a["agent"]: [(f["tier"], f["path"].removeprefix(f"{workspace}/"), f["note"])
                            for f in a["files"]] for a in folder["otherAgents"]}["copilot"]
    assert copilot[:3] == [("repository", ".github/copilot-instructions.md", None),
                           ("repository", "GEMINI.md", None),
                           ("scoped", ".github/instructions/py.instructions.md",
                            "applies to **/*.py")]
    assert ("nested", "api/GEMINI.md", "when a tool touches a path in api/") in copilot
