"""Claude Code's skills found on a read (agents/claude/skills_on_read.py) in the views that answer
"who reads this file, when" (workspace/reading.py's one answer): a `sub/.claude/skills/x/SKILL.md`
below the working folder is "listed on read" when Claude Code reads a file under `sub/` — its
name and description are listed, the skill is sent when used — or not offered, and why; the
start-up skills keep their answer (the skills listing, not the matrix). Each command runs
in-process through its own CLI module, as tests/test_view_consistency.py runs them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .conftest import build_tree
from .test_view_consistency import run_cli as _run

SKILL = "---\ndescription: {d}\n---\nThe body, sent only when the skill is used.\n"
LISTED = "its name and description are listed; the skill is sent when used"
IGNORED = ("not offered when Claude Code reads a file under ign/: git ignores ign/, and Claude "
           "Code does not look for skills in a folder git ignores")
UNQUALIFIED = ("not offered when Claude Code reads a file under a<b/: its name review is taken "
               "by one of Claude Code's own commands or skills, and its name qualified by its "
               "folder is not one Claude Code offers ('<', '>', a control character, over 256 "
               "characters)")
NAME_ONLY = ("only its name is listed: the skills listing is past its budget; the skill is sent "
             "when used")


@pytest.fixture
def repo(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("MEMLENS_", "GEMINI_", "CLAUDE_", "CODEX_", "XDG_")):
            monkeypatch.delenv(name)
    (root / "bin").mkdir()
    monkeypatch.setenv("PATH", str(root / "bin"))
    monkeypatch.setenv("HOME", str(root / "home"))
    # Past the listing's budget: the skills a read of big/ lists are 25 long lines.
    big = {f"repo/big/.claude/skills/b{i:02d}/SKILL.md": SKILL.format(d=f"{i} " + "d" * 1400)
           for i in range(25)}
    build_tree(root, {
        "home/.claude/skills/mine/SKILL.md": SKILL.format(d="The user's."),
        "repo/.git/HEAD": "ref: refs/heads/main\n", "repo/.gitignore": "ign/\n",
        "repo/CLAUDE.md": "Use tabs.\n",
        "repo/.claude/skills/top/SKILL.md": SKILL.format(d="At start."),
        "repo/sub/a.py": "x = 1\n",
        "repo/sub/.claude/skills/x/SKILL.md": SKILL.format(d="Lint the code."),
        # `review` is one of its own commands: the skill is `sub:review`.
        "repo/sub/.claude/skills/review/SKILL.md": SKILL.format(d="Review."),
        # ... which a folder named `a<b` cannot qualify: not offered.
        "repo/a<b/.claude/skills/review/SKILL.md": SKILL.format(d="Review here."),
        "repo/ign/.claude/skills/g/SKILL.md": SKILL.format(d="Ignored."), **big})
    return root / "repo"


def _cells(repo: Path) -> dict[str, dict[str, Any]]:
    report = json.loads(_run("report", str(repo), "--agent", "claude", "--home",
                             str(repo.parent / "home")))
    return {os.path.relpath(row["path"], repo): row["cells"]["claude"]
            for row in report["rows"]}


def test_the_matrix_says_listed_on_read(repo: Path) -> None:
    cells = _cells(repo)
    listed = cells["sub/.claude/skills/x/SKILL.md"]
    assert (listed["state"], listed["word"], listed["trigger"], listed["why"]) == (
        "listed", "listed on read", "when Claude Code reads a file under sub/", LISTED)
    assert listed["cut"] is None and not listed["foreign"]
    assert cells["sub/.claude/skills/review/SKILL.md"]["why"] == (
        "its name and description are listed, as sub:review; the skill is sent when used")
    # The names are the ones a session's first read there lists (`memlens jit`).
    text = _run("jit", "--agent", "claude", "--home", str(repo.parent / "home"), "--cwd",
                str(repo), "sub/a.py")
    assert "- sub:review: Review. (scoped to sub/" in text and "- x: Lint the code." in text
    # The start-up skills keep their answer: the skills listing, no row of the matrix.
    assert "top/SKILL.md" not in " ".join(cells) and "mine" not in " ".join(cells)


def test_the_matrix_says_why_a_skill_is_not_offered(repo: Path) -> None:
    cells = _cells(repo)
    assert {p: (c["state"], c["why"]) for p, c in cells.items()
            if c["state"] == "not-read"} == {
        "ign/.claude/skills/g/SKILL.md": ("not-read", IGNORED),
        "a<b/.claude/skills/review/SKILL.md": ("not-read", UNQUALIFIED)}
    # Past the budget, the last skills of the listing keep their name alone.
    big = {p: c["why"] for p, c in cells.items() if p.startswith("big/")}
    assert len(big) == 25 and big["big/.claude/skills/b00/SKILL.md"] == LISTED
    assert big["big/.claude/skills/b24/SKILL.md"] == NAME_ONLY
    assert {c["state"] for p, c in cells.items() if p.startswith("big/")} == {"listed"}


def test_show_and_its_summary_say_the_same(repo: Path) -> None:
    home = str(repo.parent / "home")
    shown = json.loads(_run("show", str(repo), "--agent", "claude", "--home", home, "--json"))
    rows = {os.path.relpath(f["path"], repo): f for f in shown["files"]}
    row = rows["sub/.claude/skills/x/SKILL.md"]
    assert (row["when"], row["label"], row["note"]) == (
        "listed", "skill", f"listed when Claude Code reads a file under sub/: {LISTED}")
    # What it sends of it is its listing line, not the SKILL.md.
    assert row["chars"] == len("- x: Lint the code. (from sub/.claude/skills \u2014 applies when "
                               "working on files under sub/)")
    # A skill it does not offer is no file it reads; the matrix's rows are show's.
    assert "ign/.claude/skills/g/SKILL.md" not in rows
    assert {p: r["when"] for p, r in rows.items()} == {
        p: c["state"] for p, c in _cells(repo).items() if c["state"] != "not-read"}
    summary = _run("show", str(repo), "--agent", "claude", "--home", home, "--summary")
    assert "  listed on read, not sent: 27 files, " in summary
    assert "  not read: 2 files in a<b/.claude/skills/review/, ign/.claude/skills/g/ " in summary


def test_check_gives_the_same_reasons(repo: Path) -> None:
    home = str(repo.parent / "home")
    checked = json.loads(_run("check", str(repo), "--agent", "claude", "--home", home,
                              "--format", "json"))
    said = {(os.path.relpath(d["path"], repo), d["code"]): d["message"] for d in checked
            if d["code"].startswith("skill-")}
    assert said[("ign/.claude/skills/g/SKILL.md", "skill-not-offered")] == (
        f"This skill is {IGNORED}")
    assert said[("a<b/.claude/skills/review/SKILL.md", "skill-not-offered")] == (
        f"This skill is {UNQUALIFIED}")
    assert said[("big/.claude/skills/b24/SKILL.md", "skill-listing-over-budget")] == (
        "Claude Code lists this skill by name only when Claude Code reads a file under big/: "
        "the listing of the skills that read finds is past its budget")
    assert not any(p.startswith("sub/") for p, _ in said)
    # The report's diagnostics are check's.
    report = json.loads(_run("report", str(repo), "--agent", "claude", "--home", home))
    assert {(d["path"], d["code"]) for d in report["diagnostics"]} == {
        (d["path"], d["code"]) for d in checked}


def test_the_skills_list_follows_the_start_up_skills_with_the_matrix_answer(repo: Path) -> None:
    """`agent_skills` (the Skills view, `memlens skills list`): the skills found on a read come
    after the start-up ones, each with when it is listed and, offered or not, the matrix's
    answer; the listing stays what Claude Code sends at start."""
    from memlens.workspace.skills import agent_skills

    home = str(repo.parent / "home")
    at_start = agent_skills("claude", home, str(repo))
    found = agent_skills("claude", home, str(repo), below=True)
    assert found.listing == at_start.listing and "- x:" not in found.listing
    assert found.skills[:len(at_start.skills)] == at_start.skills
    assert {s.on_read for s in at_start.skills} == {None}
    below = {os.path.relpath(s.location, repo): s for s in found.skills[len(at_start.skills):]}
    cells = _cells(repo)
    assert set(below) == {p for p in cells if "/.claude/skills/" in p}
    for path, skill in below.items():
        cell = cells[path]
        assert skill.offered == (cell["state"] == "listed")
        assert skill.name_only == (cell["why"] == NAME_ONLY)
        assert skill.on_read == f"when Claude Code reads a file under {path.split('/')[0]}/"
        if skill.offered:
            assert skill.on_read == cell["trigger"]
        else:
            assert cell["why"] == f"not offered {skill.on_read}: {skill.reason}"
    x = below["sub/.claude/skills/x/SKILL.md"]
    assert (x.name, x.tier, x.on_read, x.description) == (
        "x", "project", "when Claude Code reads a file under sub/",
        "Lint the code. (from sub/.claude/skills \u2014 applies when working on files under sub/)")
    assert below["sub/.claude/skills/review/SKILL.md"].name == "sub:review"
    ignored = below["ign/.claude/skills/g/SKILL.md"]
    assert (ignored.name, ignored.offered) == ("g", False)
    # One diagnostic per skill: the check's own, in the matrix's words.
    said = [(os.path.relpath(d.path, repo), d.code) for d in found.diagnostics]
    assert len(said) == len(set(said))
    assert said.count(("ign/.claude/skills/g/SKILL.md", "skill-not-offered")) == 1
    assert said.count(("big/.claude/skills/b24/SKILL.md", "skill-listing-over-budget")) == 1


def test_skills_list_says_listed_on_read(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = str(repo.parent / "home")
    monkeypatch.chdir(repo)
    text = _run("skills", "list", "--agent", "claude", "--home", home)
    assert ("x (project, listed on read: when Claude Code reads a file under sub/) \u2014 Lint "
            "the code. (from sub/.claude/skills \u2014 applies when working on files under "
            f"sub/)\n  {repo}/sub/.claude/skills/x/SKILL.md\n") in text
    assert ("b24 (project, listed on read, by name only: when Claude Code reads a file under "
            "big/) \u2014 ") in text
    assert f"g (project, {IGNORED})\n  {repo}/ign/.claude/skills/g/SKILL.md\n" in text
    assert text.index("top (project, offered)") < text.index("b00 (project, listed on read")
    data = json.loads(_run("skills", "list", "--agent", "claude", "--home", home, "--json"))
    rows = {os.path.relpath(s["location"], repo): s for s in data["skills"]}
    assert rows["sub/.claude/skills/x/SKILL.md"]["onRead"] == (
        "when Claude Code reads a file under sub/")
    assert rows[".claude/skills/top/SKILL.md"]["onRead"] is None
    assert "- x:" not in data["listing"]


def test_skills_list_walks_no_broad_folder(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Working in HOME (refused as too broad a folder): no walk for the skills below it."""
    for name in list(os.environ):
        if name.startswith(("MEMLENS_", "CLAUDE_")):
            monkeypatch.delenv(name)
    build_tree(root, {"home/.claude/skills/mine/SKILL.md": SKILL.format(d="Mine."),
                      "home/sub/.claude/skills/x/SKILL.md": SKILL.format(d="Below.")})
    monkeypatch.chdir(root / "home")
    text = _run("skills", "list", "--agent", "claude", "--home", str(root / "home"))
    assert "mine (user, offered)" in text and "listed on read" not in text
