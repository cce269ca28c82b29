"""Every agent whose files are there (issue 24): without `--agent`, `show`, `list` and `check`
cover the agents in use and every agent whose memory files the folder holds, each labelled;
an agent `--agent` chose that loads nothing, where another agent's files are, says so and
names the option. `list` has a header and a tokens column for every agent, and a long label
widens its column instead of breaking it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import build_tree
from .test_cli import memlens


@pytest.fixture
def claude_only(root: Path) -> Path:
    build_tree(root, {"home": None, "repo/.git": None,
                      "repo/CLAUDE.md": "Use pnpm.\nSee @./docs/missing.md\n",
                      "repo/.claude/rules/python.md": "---\npaths:\n  - \"services/**/*.py\"\n"
                                                      "  - \"tools/**/*.py\"\n---\n"
                                                      "Type hints everywhere.\n"})
    return root


def test_a_claude_only_repository_is_not_empty(claude_only: Path) -> None:
    home = claude_only / "home"
    shown = memlens("show", "repo", cwd=claude_only, home=home)
    assert shown.code == 0
    sections = [line for line in shown.out.splitlines() if line.startswith("==> ")]
    assert sections == ["==> Gemini CLI (gemini@0.43) <==", "==> Claude Code (claude@2.1) <=="]
    assert "(no memory files loaded)" in shown.out and "Use pnpm." in shown.out
    # The Claude Code section is exactly what `--agent claude` prints.
    alone = memlens("show", "repo", "--agent", "claude", cwd=claude_only, home=home)
    assert shown.out.endswith("==> Claude Code (claude@2.1) <==\n" + alone.out)
    checked = memlens("check", "repo", cwd=claude_only, home=home)
    # Claude Code skips a missing import without a word: a warning, as in `--agent claude`.
    assert checked.code == 0
    assert "repo/CLAUDE.md:2:5: warning[import-not-found]" in checked.out
    assert checked.err.endswith("(Gemini CLI, Claude Code)\n")


def test_the_chosen_agent_loading_nothing_names_the_option(claude_only: Path) -> None:
    home = claude_only / "home"
    for command in ("show", "list"):
        run = memlens(command, "repo", "--agent", "gemini", "--trusted", cwd=claude_only,
                      home=home)
        assert run.code == 0
        assert run.err == ("memlens: no memory files loaded; Claude Code files are here: "
                           "--agent claude (no --agent: every agent)\n")
    # Where the chosen agent does load something, nothing more is said.
    build_tree(claude_only, {"repo/GEMINI.md": "Gemini rules\n"})
    run = memlens("show", "repo", "--agent", "gemini", "--trusted", cwd=claude_only, home=home)
    assert "--agent claude" not in run.err


def test_an_agents_md_only_repository_shows_the_convention(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/AGENTS.md": "Run make test.\n"})
    shown = memlens("show", "repo", cwd=root, home=root / "home")
    assert "==> AGENTS.md (agents) <==" in shown.out and "Run make test." in shown.out
    # With Codex in use, Codex's view stands for the AGENTS.md (one of the two is enough).
    codex = memlens("show", "repo", cwd=root, home=root / "home",
                    env={"MEMLENS_AGENTS": "gemini@0.43,codex@0.169"})
    assert [line for line in codex.out.splitlines() if line.startswith("==> ")] == [
        "==> Gemini CLI (gemini@0.43) <==", "==> Codex (codex@0.169) <=="]


def test_one_agent_keeps_the_exact_text(root: Path) -> None:
    """A folder with Gemini CLI's files alone prints its text as before: no section line."""
    build_tree(root, {"home": None, "repo/.git": None, "repo/GEMINI.md": "Only Gemini\n"})
    shown = memlens("show", "repo", "--trusted", cwd=root, home=root / "home")
    assert "==>" not in shown.out and "Only Gemini" in shown.out


def test_list_has_a_header_and_a_tokens_column_for_every_agent(claude_only: Path) -> None:
    run = memlens("list", "repo", "--agent", "claude", cwd=claude_only, home=claude_only / "home")
    assert run.code == 0
    header, *rows = run.out.splitlines()
    assert header.split() == ["tier", "chars", "tokens", "path"]
    by_path = {row.split()[-1]: row for row in rows}
    rule = by_path[str(claude_only / "repo" / ".claude" / "rules" / "python.md")]
    assert rule.startswith("rule (paths: services/**/*.py, tools/**/*.py)  ")
    # Every row's chars end, tokens end and path start where the header's do: the long
    # label widened its column.
    chars_end = header.index("chars") + len("chars")
    tokens_end = header.index("tokens") + len("tokens")
    path_start = header.index("path")
    for row in rows:
        assert row[chars_end - 1] != " " and row[chars_end] == " ", row
        assert row[tokens_end - 1] != " " and row[tokens_end] == " ", row
        assert row[path_start - 1] == " " and row[path_start] == "/", row
    # Claude Code's own estimate: CLAUDE.md is 33 chars → round(33 / 4) = 8 tokens.
    claude_md = by_path[str(claude_only / "repo" / "CLAUDE.md")].split()
    assert claude_md[1:3] == ["33", "~8"]
    data = json.loads(memlens("list", "repo", "--agent", "claude", "--json", cwd=claude_only,
                              home=claude_only / "home").out)
    first = data["files"][0]
    assert (first["path"], first["chars"], first["tokens"]) == (
        str(claude_only / "repo" / "CLAUDE.md"), 33, 8)


def test_the_fixed_file_names_are_each_agents_own(root: Path) -> None:
    """agents_here answers without importing the agents: its table of names and its owner
    rule must say what each agent says."""
    from memlens.agents import FIXED_FILE_NAMES, SETTINGS_NAMED, all_agents, owner_of
    from memlens.model import MemorySettings
    from memlens.workspace.agents_here import owner

    settings = MemorySettings(home=str(root), context_file_names=["GEMINI.md", "CLAUDE.md"])
    for agent in all_agents():
        if agent.id != SETTINGS_NAMED:
            assert tuple(agent.file_names(settings)) == FIXED_FILE_NAMES[agent.id], agent.id
    for name in ("GEMINI.md", "CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md",
                 "README.md"):
        expected = owner_of(f"/w/{name}", settings)
        assert owner(f"/w/{name}", settings) == (expected.id if expected else None), name
