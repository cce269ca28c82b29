"""Skills: validation codes on exact ranges, duplicates, tiers, the inbox, extraction against
the fake Gemini server (a good skill, a write outside the inbox, nothing), and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlens.agent.config import ChatSettings
from memlens.agent.context import AgentContext
from memlens.agent.extraction import extract_skills
from memlens.agent.records import Redactor, Transcript, chats_dir
from memlens.agents.gemini import inbox
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.agents.gemini.skillcheck import check_skill
from memlens.agents.gemini.skills import discover_skills
from memlens.model import MemorySettings

from .conftest import build_tree
from .fake_gemini import FakeGemini, function_call, text

KEY = "AIzaSKILLSKEY-0123456789abcdefghijklmnop"
GOOD = ("---\nname: run-migrations\ndescription: Run the database migrations before tests.\n"
        "---\n## When to Use\nBefore tests.\n## Procedure\n1. `make migrate`\n"
        "## Pitfalls and Fixes\nLocked DB -> stop the server.\n## Verification\n`make test`\n")


def rows(path: str, text_: str, **kw: bool) -> list[tuple[int, int, int, int, str, str]]:
    return [(d.line, d.col, d.end_line, d.end_col, d.severity, d.code)
            for d in check_skill(path, text_, **kw)]


P = "/w/.gemini/skills/my-skill/SKILL.md"


def test_each_validation_code_on_its_range() -> None:
    assert rows(P, "---\nname: my-skill\ndescription: Use for: this\n---\n") == [
        (3, 21, 3, 22, "error", "skill-invalid-yaml")]
    msg = check_skill(P, "---\nname: my-skill\ndescription: Use for: this\n---\n")[0].message
    assert "fallback parser still loads it as name 'my-skill', description 'Use for: this'" in msg
    assert rows(P, "---\nname: My_Skill\ndescription: d\n---\n") == [
        (2, 7, 2, 15, "error", "skill-invalid-name")]
    assert rows(P, "---\nname: other\ndescription: d\n---\n") == [
        (2, 7, 2, 12, "warning", "skill-name-mismatch")]
    long = "x" * 1025
    assert rows(P, f"---\nname: my-skill\ndescription: {long}\n---\n") == [
        (3, 14, 3, 1039, "error", "skill-field-too-long")]
    assert rows(P, "---\nname: my-skill\ndescription: a <b>\n---\n") == [
        (3, 14, 3, 19, "error", "skill-invalid-description")]
    assert rows(P, "---\nname: my-skill\n---\n") == [
        (2, 1, 2, 4, "error", "skill-missing-field")]
    assert rows(P, "---\nname: my-skill\ndescription: d\ncolour: red\n---\n") == [
        (4, 1, 4, 7, "warning", "skill-unknown-field")]
    body = "\n".join(f"line {i}" for i in range(501))
    assert rows(P, f"---\nname: my-skill\ndescription: d\n---\n{body}") == [
        (5, 1, 5, 1, "warning", "skill-body-too-long")]
    missing = rows(P, "---\nname: my-skill\ndescription: d\n---\n## Procedure\n1. x\n",
                   extracted=True)
    assert [r[5] for r in missing] == ["skill-missing-section"] * 3
    assert check_skill(P, GOOD.replace("run-migrations", "my-skill"), extracted=True) == []


def test_precedence_and_duplicates(root: Path) -> None:
    build_tree(root, {
        "home/.gemini/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: user\n---\n",
        "ws/.gemini/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: ws\n---\n",
        "ws/.agents/skills/lint/SKILL.md": "---\nname: lint\ndescription: lint\n---\n",
    })
    home, ws = str(root / "home"), str(root / "ws")
    found = {s.name: (s.description, tier) for s, tier in discover_skills(home, ws, True)}
    assert found == {"deploy": ("ws", "workspace"), "lint": ("lint", "workspace-agents")}
    untrusted = {s.name: tier for s, tier in discover_skills(home, ws, False)}
    assert untrusted == {"deploy": "user"}
    problems = inbox.skill_diagnostics(home, ws, True)
    (dup,) = [d for d in problems if d.code == "skill-duplicate"]
    assert dup.path == f"{home}/.gemini/skills/deploy/SKILL.md"
    assert f"also defined in {ws}/.gemini/skills/deploy/SKILL.md (workspace), which wins" in (
        dup.message)


def _inbox(root: Path) -> tuple[str, str, str]:
    home, ws = str(root / "home"), str(root / "ws")
    os.makedirs(ws, exist_ok=True)
    folder = inbox.inbox_dir(home, ws, claim=True)
    assert folder is not None
    return home, ws, folder


def test_inbox_accept_validates_then_moves_and_reject_deletes(root: Path) -> None:
    home, ws, folder = _inbox(root)
    build_tree(Path(folder), {"run-migrations/SKILL.md": GOOD,
                              "half-done/SKILL.md": "---\nname: half-done\ndescription: x\n---\n"
                                                    "## Procedure\n1. y\n"})
    names = sorted(i.name for i in inbox.list_inbox(home, ws))
    assert names == ["half-done", "run-migrations"]
    with pytest.raises(inbox.InboxError, match="needs a '## When to Use' section"):
        inbox.accept(home, ws, "half-done")
    target = inbox.accept(home, ws, "run-migrations")
    assert target.endswith("/memory/skills/run-migrations/SKILL.md")
    assert not os.path.exists(os.path.join(folder, "run-migrations"))
    offered = {s.name: tier for s, tier in discover_skills(home, ws, True)}
    assert offered == {"run-migrations": "extracted"}
    inbox.reject(home, ws, "half-done")
    assert inbox.list_inbox(home, ws) == []
    with pytest.raises(inbox.InboxError, match="no skill named 'nope'"):
        inbox.reject(home, ws, "nope")


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


def _context(home: str, ws: str, fake: FakeGemini) -> AgentContext:
    settings = MemorySettings(home=home, discover_gemini_extensions=False)
    return AgentContext(settings=settings, chat=ChatSettings(base_url=fake.base_url,
                                                             initial_delay_ms=5),
                        startup=MemoryEngine(settings).load(ws), jit=None, skills=[],
                        transcripts=None, api_key=KEY)


def _sessions(home: str, ws: str) -> str:
    folder = chats_dir(home, ws)
    for sid, summary in (("s1", "Ran migrations before tests"), ("s2", "Again migrations")):
        transcript = Transcript(folder, sid, Redactor())
        transcript.append("user", {"text": f"{summary}: make migrate then make test"})
        transcript.update_index(summary, summary, 2)
    return folder


def test_extraction_writes_a_good_skill_into_the_inbox(root: Path, fake: FakeGemini) -> None:
    home, ws, folder = _inbox(root)
    chats = _sessions(home, ws)
    fake.enqueue(function_call("read_file", {"absolute_path": f"{chats}/s1.jsonl"}),
                 function_call("write_file", {"file_path": f"{folder}/run-migrations/SKILL.md",
                                              "content": GOOD}),
                 text("Wrote run-migrations."))
    result = asyncio.run(extract_skills(_context(home, ws, fake), chats, folder))
    assert result == {"status": "done", "created": ["run-migrations"], "sessions": 2,
                      "message": "Wrote run-migrations."}
    query = fake.requests[0].last_user_text
    assert f"[NEW] Ran migrations before tests (1 user msgs) — {chats}/s1.jsonl" in query
    assert "make migrate" in fake.requests[1].function_responses[0]["response"]["output"]
    assert [i.name for i in inbox.list_inbox(home, ws)] == ["run-migrations"]
    # Sessions are mined once: a second run finds nothing new and asks no model.
    again = asyncio.run(extract_skills(_context(home, ws, fake), chats, folder))
    assert again["message"] == "No new sessions to learn from." and len(fake.requests) == 3


def test_extraction_cannot_write_outside_the_inbox_or_read_elsewhere(
        root: Path, fake: FakeGemini) -> None:
    home, ws, folder = _inbox(root)
    chats = _sessions(home, ws)
    live = f"{home}/.gemini/skills/evil/SKILL.md"
    fake.enqueue(function_call("write_file", {"file_path": live, "content": GOOD}),
                 function_call("write_file", {"file_path": f"{ws}/GEMINI.md", "content": "x"}),
                 function_call("read_file", {"absolute_path": f"{home}/.gemini/GEMINI.md"}),
                 text("Nothing qualified."))
    result = asyncio.run(extract_skills(_context(home, ws, fake), chats, folder))
    assert result["created"] == [] and not os.path.exists(live)
    assert not os.path.exists(f"{ws}/GEMINI.md")
    errors = [fake.requests[i].function_responses[-1]["response"]["error"] for i in (1, 2, 3)]
    assert all(("outside the workspace" in e or "only" in e) for e in errors), errors


def test_extraction_that_writes_nothing(root: Path, fake: FakeGemini) -> None:
    home, ws, folder = _inbox(root)
    chats = _sessions(home, ws)
    fake.enqueue(text("No repeated workflow; no skill."))
    result = asyncio.run(extract_skills(_context(home, ws, fake), chats, folder))
    assert result["created"] == [] and result["status"] == "done"


def test_cli_skills_list_inbox_accept_reject(root: Path) -> None:
    home, ws, folder = _inbox(root)
    build_tree(Path(folder), {"run-migrations/SKILL.md": GOOD})
    build_tree(root, {"ws/.gemini/skills/lint/SKILL.md":
                      "---\nname: lint\ndescription: Lint it.\n---\nRun ruff.\n",
                      # The user trusts the workspace: its skills load only then.
                      "home/.gemini/trustedFolders.json": json.dumps({ws: "TRUST_FOLDER"})})
    env = {**os.environ, "GEMINI_CLI_HOME": home}

    def memlens(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memlens", *args], cwd=ws, env=env,
                              capture_output=True, text=True, timeout=60)

    listed = json.loads(memlens("skills", "list", "--json").stdout)
    assert listed == [{"name": "lint", "description": "Lint it.", "body": "Run ruff.",
                       "location": f"{ws}/.gemini/skills/lint/SKILL.md", "tier": "workspace"}]
    waiting = json.loads(memlens("skills", "inbox", "--json").stdout)
    assert [(w["name"], w["problems"]) for w in waiting] == [("run-migrations", [])]
    accepted = memlens("skills", "accept", "run-migrations")
    assert accepted.returncode == 0 and accepted.stdout.startswith("Accepted run-migrations: ")
    names = [s["name"] for s in json.loads(memlens("skills", "list", "--json").stdout)]
    assert names == ["run-migrations", "lint"]
    missing = memlens("skills", "reject", "nope")
    assert (missing.returncode, missing.stderr) == (
        2, "memlens: error: no skill named 'nope' in the inbox\n")
