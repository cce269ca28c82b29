"""Skills over LSP: the inbox round trip (list, accept with validation, reject), the skills
list, and the hover on a SKILL.md's name that says whether the agent is offered it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from memlens.agents.gemini import inbox
from memlens.files.output import markdown_text

from .conftest import open_doc, plain

GOOD = ("---\nname: run-migrations\ndescription: Run the database migrations before tests.\n"
        "---\n## When to Use\nBefore tests.\n## Procedure\n1. `make migrate`\n"
        "## Pitfalls and Fixes\nLocked DB -> stop the server.\n## Verification\n`make test`\n")
HALF = "---\nname: half-done\ndescription: x\n---\n## Procedure\n1. y\n"


async def _request(client: LanguageClient, method: str, params: Any) -> dict[str, Any]:
    data = plain(await client.protocol.send_request_async(method, params))
    assert isinstance(data, dict)
    return data


@pytest.mark.asyncio
async def test_inbox_accept_and_reject_over_lsp(client: LanguageClient, workspace: Path) -> None:
    home = str(workspace / "home")
    folder = inbox.inbox_dir(home, str(workspace), claim=True)
    assert folder is not None
    for name, text in (("run-migrations", GOOD), ("half-done", HALF)):
        os.makedirs(os.path.join(folder, name))
        Path(folder, name, "SKILL.md").write_text(text)

    listed = await _request(client, "memlens/inbox", {})
    by_name = {s["name"]: s for s in listed["skills"]}
    assert sorted(by_name) == ["half-done", "run-migrations"]
    assert by_name["run-migrations"]["problems"] == []
    assert any("When to Use" in p["message"] for p in by_name["half-done"]["problems"])

    refused = await _request(client, "memlens/inbox/accept", {"name": "half-done"})
    assert refused["ok"] is False and "needs a '## When to Use' section" in refused["message"]
    accepted = await _request(client, "memlens/inbox/accept", {"name": "run-migrations"})
    assert accepted["ok"] is True
    assert accepted["path"].endswith("/.gemini/skills/run-migrations/SKILL.md")
    assert Path(accepted["path"]).read_text() == GOOD
    skills = await _request(client, "memlens/skills", {})
    offered = {s["name"]: (s["tier"], s["offered"]) for s in skills["skills"]}
    assert offered["run-migrations"] == ("user", True)
    assert skills["shown"] is True  # Gemini CLI's own skills folder applies here

    rejected = await _request(client, "memlens/inbox/reject", {"name": "half-done"})
    assert rejected["ok"] is True
    assert (await _request(client, "memlens/inbox", {}))["skills"] == []
    missing = await _request(client, "memlens/inbox/reject", {"name": "nope"})
    assert missing["ok"] is False and "no skill named 'nope'" in missing["message"]


@pytest.mark.asyncio
async def test_hover_on_a_skill_name_says_who_wins(client: LanguageClient,
                                                   workspace: Path) -> None:
    text = "---\nname: deploy\ndescription: Ship the service.\n---\nSteps.\n"
    mine = workspace / "home" / ".gemini" / "skills" / "deploy" / "SKILL.md"
    theirs = workspace / ".gemini" / "skills" / "deploy" / "SKILL.md"
    for path in (mine, theirs):
        path.parent.mkdir(parents=True)
        path.write_text(text)
    await client.protocol.send_request_async("memlens/refresh", {})

    async def hover(path: Path) -> str:
        return await _name_hover(client, path)

    # The workspace tier outranks the user's in a trusted folder, as in Gemini CLI; each
    # verdict names its agent (no other agent looks in .gemini/skills).
    assert await hover(theirs) == (
        "**Skill `deploy`** — Gemini CLI: tier: workspace; offered\n\nShip the service.")
    reason = markdown_text(f"shadowed: {theirs} has the same name and a later tier wins")
    assert (await hover(mine)) == (
        f"**Skill `deploy`** — Gemini CLI: tier: user; **not offered**: {reason}\n\n"
        "Ship the service.")


@pytest.mark.asyncio
async def test_agent_skills_over_lsp(client: LanguageClient, workspace: Path) -> None:
    """memlens/agentSkills: a `.claude/skills` folder brings Claude Code's group, each skill as
    it lists it, a dropped one with the reason; asked for Codex, its own listing."""
    home = workspace / "home"
    for folder, text in (
            (workspace / ".claude" / "skills" / "fmt", "---\ndescription: Format <it>.\n---\n"),
            (home / ".claude" / "skills" / "fmt", "---\ndescription: User fmt.\n---\n"),
            (workspace / ".agents" / "skills" / "lint", "---\nname: lint\n---\nno description\n"),
    ):
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(text)
    found = await _request(client, "memlens/agentSkills", {})
    assert [a["agent"] for a in found["agents"]] == ["claude"]
    claude = found["agents"][0]
    assert claude["listing"] == ("The following skills are available for use with the Skill "
                                 "tool:\n\n- fmt: User fmt.")
    shadowed = next(s for s in claude["skills"] if not s["offered"])
    assert shadowed["location"] == str(workspace / ".claude/skills/fmt/SKILL.md")
    assert shadowed["reason"].startswith("shadowed: ")
    codex = (await _request(client, "memlens/agentSkills", {"agents": ["codex"]}))["agents"][0]
    lint = next(s for s in codex["skills"] if s["name"] == "lint")
    assert (lint["offered"], lint["reason"]) == (False, "no description: Codex skips it")


@pytest.mark.asyncio
async def test_a_skill_found_on_a_read_in_the_hover_and_the_memory_view(
        client: LanguageClient, workspace: Path) -> None:
    """A `.claude/skills` below the working folder: the hover and the Memory view say what the
    agent matrix's cell says (workspace/reading.py's one answer) — listed when Claude Code
    reads a file under that folder, or not offered and why."""
    text = "---\nname: lint\ndescription: Lint the code.\n---\nThe body.\n"
    listed = workspace / "api" / ".claude" / "skills" / "lint" / "SKILL.md"
    ignored = workspace / "gen" / ".claude" / "skills" / "lint" / "SKILL.md"
    for path in (listed, ignored):
        path.parent.mkdir(parents=True)
        path.write_text(text)
    (workspace / "CLAUDE.md").write_text("Claude Code works here.\n")
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".gitignore").write_text("gen/\n")
    await client.protocol.send_request_async("memlens/refresh", {})

    async def hover(path: Path) -> str:
        return await _name_hover(client, path)

    why = "its name and description are listed; the skill is sent when used"
    assert await hover(listed) == (
        "**Skill `lint`** — Claude Code: **listed on read** when Claude Code reads a file under "
        f"api/: {markdown_text(why)}")
    not_offered = ("not offered when Claude Code reads a file under gen/: git ignores gen/, and "
                   "Claude Code does not look for skills in a folder git ignores")
    assert await hover(ignored) == (
        f"**Skill `lint`** — Claude Code: **not read**: {markdown_text(not_offered)}")
    # The matrix's cells are the hover's words.
    matrix = await _request(client, "memlens/matrix", {})
    cells = {row["path"]: row["cells"]["claude"] for row in matrix["rows"]}
    assert (cells[str(listed)]["state"], cells[str(listed)]["why"]) == ("listed", why)
    assert (cells[str(ignored)]["state"], cells[str(ignored)]["why"]) == ("not-read", not_offered)
    # The Memory view's Claude Code group lists both, with the same words.
    tree = await _request(client, "memlens/memoryTree", {})
    (claude,) = [a for a in tree["folders"][0]["otherAgents"] if a["agent"] == "claude"]
    rows = {f["path"]: (f["tier"], f["note"]) for f in claude["files"]}
    assert rows[str(listed)] == ("skill", f"listed when Claude Code reads a file under api/: {why}")
    assert rows[str(ignored)] == ("skill", not_offered)


@pytest.mark.asyncio
async def test_a_skill_found_on_a_read_in_the_skills_view(client: LanguageClient,
                                                          workspace: Path) -> None:
    """memlens/agentSkills: Claude Code's skills below the working folder follow its start-up
    ones, each with when it is listed (the agent matrix's trigger), offered or not as the
    matrix has it; its listing stays the one it sends at start, and each dropped skill has
    one diagnostic."""
    text = "---\nname: lint\ndescription: Lint the code.\n---\nThe body.\n"
    top = workspace / ".claude" / "skills" / "fmt" / "SKILL.md"
    listed = workspace / "api" / ".claude" / "skills" / "lint" / "SKILL.md"
    ignored = workspace / "gen" / ".claude" / "skills" / "lint" / "SKILL.md"
    for path in (top, listed, ignored):
        path.parent.mkdir(parents=True)
        path.write_text(text.replace("lint", path.parent.name))
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (workspace / ".gitignore").write_text("gen/\n")
    await client.protocol.send_request_async("memlens/refresh", {})

    (claude,) = (await _request(client, "memlens/agentSkills", {}))["agents"]
    assert claude["listing"] == ("The following skills are available for use with the Skill "
                                 "tool:\n\n- fmt: Lint the code.")
    rows = [(s["location"], s["name"], s["offered"], s.get("onRead")) for s in claude["skills"]]
    assert rows == [
        (str(top), "fmt", True, None),
        (str(listed), "lint", True, "when Claude Code reads a file under api/"),
        (str(ignored), "lint", False, "when Claude Code reads a file under gen/")]
    on_read = {s["location"]: s for s in claude["skills"]}
    assert on_read[str(listed)]["description"] == (
        "Lint the code. (from api/.claude/skills \u2014 applies when working on files under api/)")
    assert on_read[str(ignored)]["reason"] == (
        "git ignores gen/, and Claude Code does not look for skills in a folder git ignores")
    assert [(d["path"], d["code"]) for d in claude["diagnostics"]] == [
        (str(ignored), "skill-not-offered")]


async def _name_hover(client: LanguageClient, path: Path) -> str:
    """The hover on the `name:` line (line 2) of the SKILL.md at `path`, opened first."""
    doc = await open_doc(client, path)
    found = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=1, character=3)))
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    return found.contents.value
