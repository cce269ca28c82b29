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
