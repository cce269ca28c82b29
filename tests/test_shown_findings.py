"""Findings of the agents shown, nowhere else (workspace/shown.py): the editor's diagnostics
and `memlens check` keep only the checks of the agents in use or whose files apply, and a
hidden-content finding names only those of them that receive the file. Agents in use are
pinned (`memlens.agents`, MEMLENS_AGENTS) so that what is on PATH decides nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlens.workspace.service import EditorSettings, WorkspaceService

from .conftest import build_tree

# A root CLAUDE.md that a nested AGENTS.md drops for OpenCode working in a/b/
# (`opencode-name-dropped`), its first-line comment block stripped by Claude Code.
TREE = {".git": None, "CLAUDE.md": "<!-- for reviewers -->\nRoot rules.\n",
        "a/b/AGENTS.md": "Nested rules.\n"}


@pytest.fixture
def repo(root: Path) -> Path:
    build_tree(root, {"home": None, **{f"repo/{k}": v for k, v in TREE.items()}})
    return root / "repo"


def _editor(repo: Path, agents: list[str]) -> dict[str, str]:
    """The editor's diagnostics on the root CLAUDE.md (code → message), with `agents` in
    use and nothing found on PATH."""
    service = WorkspaceService([str(repo)], EditorSettings(window={
        "home": str(repo.parent / "home"), "trusted": True, "agents": agents}))
    service.detect = dict
    service.rebuild()
    return {d.code: d.message for d in service.diagnostics_for(str(repo / "CLAUDE.md"))}


def test_the_editor_leaves_out_an_agent_not_shown(repo: Path) -> None:
    """Claude Code alone in use: OpenCode is not shown here (a CLAUDE.md and an AGENTS.md are
    other agents' files), so neither its name-dropped note nor a hidden comment only it and
    pi would receive."""
    assert _editor(repo, ["claude"]) == {}


def test_the_editor_shows_an_agent_in_use(repo: Path) -> None:
    """OpenCode in use too: its note is there, and the comment Claude Code strips reaches it."""
    found = _editor(repo, ["claude", "opencode"])
    assert set(found) == {"opencode-name-dropped", "hidden-comment"}
    assert found["hidden-comment"] == ("OpenCode receives this HTML comment; Claude Code "
                                       "strips it; rendered Markdown hides it from a reviewer")


def _check(repo: Path, *args: str, agents: str) -> list[tuple[str, str]]:
    """`memlens check`'s findings (file name, code), with `agents` in use."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEMINI_CLI")}
    env.update({"HOME": str(repo.parent / "home"), "MEMLENS_AGENTS": agents})
    run = subprocess.run([sys.executable, "-m", "memlens", "check", str(repo), "--format",
                          "json", "--home", str(repo.parent / "home"), *args],
                         capture_output=True, text=True, timeout=60, env=env)
    return [(Path(d["path"]).name, d["code"]) for d in json.loads(run.stdout)]


def test_check_covers_the_agents_shown_and_the_one_asked_for(repo: Path) -> None:
    """`memlens check` as the editor: nothing of OpenCode's for a Claude Code user; OpenCode's
    note when it is in use, or when `--agent opencode` asks for it."""
    # (Claude Code's profile says it ignores a/b/AGENTS.md: its own finding.)
    assert _check(repo, agents="claude") == [("AGENTS.md", "agent-ignores-file")]
    in_use = _check(repo, agents="claude,opencode")
    assert ("CLAUDE.md", "opencode-name-dropped") in in_use
    assert ("CLAUDE.md", "opencode-name-dropped") in _check(repo, "--agent", "opencode",
                                                             agents="claude")


# Skills three agents look at: Claude Code's (a project skill its user's skill of the same name
# shadows: `skill-duplicate`), Gemini CLI's (no frontmatter) and the `.agents/skills` folder
# Gemini CLI and Codex share (no description). Each verdict is its agent's own.
SKILLS = {"home/.claude/skills/dup/SKILL.md": "---\ndescription: user dup\n---\n",
          "repo/.git": None,
          "repo/.claude/skills/dup/SKILL.md": "---\ndescription: project dup\n---\n",
          "repo/.gemini/skills/bad/SKILL.md": "# no frontmatter\n",
          "repo/.agents/skills/nodesc/SKILL.md": "---\nname: nodesc\n---\n"}
CLAUDE_SKILL = ("dup", "skill-duplicate")


def _skills_repo(root: Path, memory: str) -> Path:
    """SKILLS with one memory file, `memory` (CLAUDE.md or GEMINI.md), at the root."""
    build_tree(root, {**SKILLS, f"repo/{memory}": "Rules.\n"})
    return root / "repo"


def _skill_findings(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(skill folder, code) of the skill findings among (path, code) pairs."""
    return sorted((Path(p).parent.name, c) for p, c in found if c.startswith("skill-"))


def _editor_skills(repo: Path, agents: list[str]) -> list[tuple[str, str]]:
    service = WorkspaceService([str(repo)], EditorSettings(window={
        "home": str(repo.parent / "home"), "trusted": True, "agents": agents}))
    service.detect = dict
    service.rebuild()
    found = [(d.path, d.code) for path in service.diagnosed_paths()
             for d in service.diagnostics_for(path)]
    matrix = service.matrix(str(repo), service.settings_for(str(repo)))
    found += [(d.path, d.code) for d in matrix.diagnostics]
    return _skill_findings(found)


def _cli_skills(repo: Path, agents: str) -> list[tuple[str, str]]:
    """The skill findings of `memlens check` and of `memlens report --json`, `agents` in use."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEMINI_CLI")}
    env.update({"HOME": str(repo.parent / "home"), "MEMLENS_AGENTS": agents})
    home = ["--home", str(repo.parent / "home")]
    check = subprocess.run([sys.executable, "-m", "memlens", "check", str(repo), "--format",
                            "json", *home], capture_output=True, text=True, timeout=60, env=env)
    report = subprocess.run([sys.executable, "-m", "memlens", "report", str(repo), "--json",
                             *home], capture_output=True, text=True, timeout=60, env=env)
    return _skill_findings([(d["path"], d["code"]) for d in [
        *json.loads(check.stdout), *json.loads(report.stdout)["diagnostics"]]])


def test_only_claude_code_shown_gets_only_its_skills(root: Path) -> None:
    """Only Claude Code's memory, only Claude Code in use: its own skill verdict — in the
    editor, its matrix, `memlens check` and the report — and nothing of Gemini CLI's or
    Codex's about the skills they would look at."""
    repo = _skills_repo(root, "CLAUDE.md")
    assert _editor_skills(repo, ["claude"]) == [CLAUDE_SKILL, CLAUDE_SKILL]
    assert _cli_skills(repo, "claude") == [CLAUDE_SKILL, CLAUDE_SKILL]


def test_only_gemini_cli_shown_gets_no_claude_code_skills(root: Path) -> None:
    """And the other way: only Gemini CLI's memory and Gemini CLI alone in use — Gemini CLI's
    verdicts on its skills, none of Claude Code's (its skills folder is no memory of its own:
    Claude Code is not shown here)."""
    repo = _skills_repo(root, "GEMINI.md")
    gemini = [("bad", "skill-missing-field"), ("nodesc", "skill-missing-field")]
    assert _editor_skills(repo, ["gemini"]) == sorted(gemini * 2)
    assert _cli_skills(repo, "gemini") == sorted(gemini * 2)


def test_an_agent_in_use_gets_its_skills_back(root: Path) -> None:
    """Codex in use beside Claude Code: its own verdict on the shared `.agents/skills` folder
    comes back, and still nothing of Gemini CLI's."""
    repo = _skills_repo(root, "CLAUDE.md")
    expected = sorted([CLAUDE_SKILL, ("nodesc", "skill-not-offered")] * 2)
    assert _editor_skills(repo, ["claude", "codex"]) == expected
    assert _cli_skills(repo, "claude,codex") == expected
