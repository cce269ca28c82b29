"""Antigravity CLI, a convention (issue 22): GEMINI.md and AGENTS.md (global, then the
workspace's), `.agents/` rules by trigger, workflows and skills, and the check for the same
content loaded twice through GEMINI.md and AGENTS.md; the CLI through a subprocess."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memlens.agents.antigravity.agent import (
    ALWAYS_ON,
    DUPLICATE,
    GLOB,
    MANUAL,
    MODEL_DECISION,
    TOO_LONG,
    AntigravityAgent,
    duplicates,
    parse_rule,
)
from memlens.agents.base import WorkspaceCheck
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings
from memlens.reports.sarif import RULES

from .conftest import build_tree
from .test_cli import memlens


@pytest.mark.parametrize(("content", "trigger", "globs"), [
    ("---\ntrigger: always_on\n---\nA\n", ALWAYS_ON, []),
    ("---\ntrigger: glob\nglobs: *.py, src/**/*.ts\n---\nA\n", GLOB, ["*.py", "src/**/*.ts"]),
    ("---\ntrigger: model_decision\ndescription: DB\n---\nA\n", MODEL_DECISION, []),
    ("---\ntrigger: manual\n---\nA\n", MANUAL, []),
    ("No frontmatter\n", ALWAYS_ON, []),
])
def test_rule_triggers(content: str, trigger: str, globs: list[str]) -> None:
    rule = parse_rule("/w/.agents/rules/r.md", content)
    assert (rule.trigger, rule.globs) == (trigger, globs)


def _dups(root: Path, tree: dict[str, str | None]) -> list[tuple[str, int, str]]:
    build_tree(root, tree)
    return [(Path(d.path).name, d.line, d.message) for d in duplicates(str(root), FileReader())]


def test_gemini_importing_agents_is_loaded_twice(root: Path) -> None:
    found = _dups(root, {"GEMINI.md": "# Gemini\n```\n@AGENTS.md in a fence\n```\n@AGENTS.md\n",
                         "AGENTS.md": "Run make test.\n"})
    assert found == [("GEMINI.md", 5, f"Antigravity CLI loads {root}/AGENTS.md twice: "
                                      f"{root}/GEMINI.md imports it, and it is read on its own "
                                      "too")]
    (diagnostic,) = duplicates(str(root), FileReader())
    assert (diagnostic.code, diagnostic.severity) == (DUPLICATE, "warning")
    assert f"{root}/GEMINI.md" in (diagnostic.detail or "")


def test_agents_importing_gemini_same_text_and_links(root: Path) -> None:
    assert [(n, line) for n, line, _ in _dups(root, {
        "GEMINI.md": "Shared.\n", "AGENTS.md": "See @./GEMINI.md\n"})] == [("AGENTS.md", 1)]
    same = root / "same"
    assert [(n, m.endswith("holds the same text as " + f"{same}/GEMINI.md"))
            for n, _, m in _dups(same, {"GEMINI.md": "Shared rules.\n",
                                        "AGENTS.md": "Shared rules.  \n\n"})] == [
        ("AGENTS.md", True)]
    linked = root / "linked"
    build_tree(linked, {"AGENTS.md": "Shared.\n"})
    os.symlink("AGENTS.md", linked / "GEMINI.md")
    assert [n for n, _, _ in _dups(linked, {})] == ["GEMINI.md"]
    # Different texts, no import: nothing to say; one file alone: nothing either.
    assert _dups(root / "apart", {"GEMINI.md": "Gemini.\n", "AGENTS.md": "Agents.\n"}) == []
    assert _dups(root / "alone", {"GEMINI.md": "@AGENTS.md\n"}) == []
    assert DUPLICATE in RULES
    reference = Path(__file__).parents[1] / "docs" / "reference.md"
    assert f"`{DUPLICATE}`" in reference.read_text(encoding="utf-8")


@pytest.fixture
def repo(root: Path) -> Path:
    build_tree(root, {
        "home/.gemini/GEMINI.md": "Global.\n", "repo/.git": None,
        "repo/GEMINI.md": "# Gemini\n@AGENTS.md\n", "repo/AGENTS.md": "Run make test.\n",
        "repo/.agents/rules/style.md": "---\ntrigger: always_on\n---\nUse tabs.\n",
        "repo/.agents/rules/py.md": "---\ntrigger: glob\nglobs: **/*.py\n---\nType hints.\n",
        "repo/.agents/rules/db.md": "---\ntrigger: model_decision\ndescription: DB\n---\nA.\n",
        "repo/.agents/workflows/deploy.md": "Deploy steps.\n",
        "repo/.agents/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: D\n---\nx\n",
        "repo/src/a.py": "",
    })
    return root / "repo"


def test_what_loads_at_start_on_read_and_on_demand(repo: Path) -> None:
    home = str(repo.parent / "home")
    settings = MemorySettings(home=home)
    agent = AntigravityAgent()
    memory = agent.load(str(repo), settings)
    assert [(f.label, f.path) for f in memory.files] == [
        ("global", f"{home}/.gemini/GEMINI.md"), ("project", f"{repo}/GEMINI.md"),
        ("project", f"{repo}/AGENTS.md"), ("rule", f"{repo}/.agents/rules/style.md")]
    assert "convention" in memory.headline
    later = {Path(f.path).name: f.when
             for f in agent.on_read_files(memory, settings, FileReader(), WorkspaceCheck())}
    assert later == {"py.md": "on-read", "db.md": "on-demand", "deploy.md": "on-demand",
                     "SKILL.md": "on-demand"}
    session = agent.jit_session(settings, str(repo), FileReader(), WorkspaceCheck())
    assert session is not None
    assert [f.path for f in session.load_for(str(repo / "src" / "a.py")).files] == [
        f"{repo}/.agents/rules/py.md"]
    assert session.load_for(str(repo / "src" / "a.py")).files == []


def test_a_rule_file_over_12000_characters(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.agents/rules/long.md": "x" * 12_001,
                      "repo/.agents/rules/fits.md": "x" * 12_000})
    checked = memlens("check", "repo", "--agent", "antigravity", cwd=root, home=root / "home")
    assert checked.out.startswith(f"repo/.agents/rules/long.md:1:1: warning[{TOO_LONG}]")
    assert "fits.md" not in checked.out and TOO_LONG in RULES


def test_the_check_runs_only_where_antigravity_is_in_use_or_its_files_are(root: Path) -> None:
    """A GEMINI.md importing AGENTS.md is Gemini CLI's usual way to read AGENTS.md: only
    for Antigravity CLI (in use, or its `.agents` rules here) is it a problem."""
    build_tree(root, {"home": None, "plain/.git": None, "plain/GEMINI.md": "@AGENTS.md\n",
                      "plain/AGENTS.md": "Run make.\n"})
    home, plain = root / "home", root / "plain"
    quiet = memlens("check", "plain", "--trusted", cwd=root, home=home)
    assert DUPLICATE not in quiet.out
    pinned = memlens("check", "plain", "--agent", "antigravity", cwd=root, home=home)
    assert pinned.out.startswith(f"plain/GEMINI.md:1:1: warning[{DUPLICATE}]")
    build_tree(plain, {".agents/rules/style.md": "Use tabs.\n"})
    found = memlens("check", "plain", "--trusted", cwd=root, home=home)
    assert f"warning[{DUPLICATE}]" in found.out and "Antigravity CLI" in found.err


def test_cli_show_list_jit_and_the_matrix(repo: Path) -> None:
    home, cwd = repo.parent / "home", repo.parent
    shown = memlens("show", "repo", "--agent", "antigravity", cwd=cwd, home=home)
    assert shown.code == 0 and "Use tabs." in shown.out and "Type hints." not in shown.out
    listed = json.loads(memlens("list", "repo", "--agent", "antigravity", "--json",
                                cwd=cwd, home=home).out)
    tiers = {Path(f["path"]).name: f["tier"] for f in listed["files"]}
    assert (tiers["py.md"], tiers["db.md"], tiers["deploy.md"], tiers["SKILL.md"]) == (
        "glob", "model_decision", "workflow", "skill")
    jit = memlens("jit", "--agent", "antigravity", "--cwd", str(repo), str(repo / "src" / "a.py"),
                  cwd=cwd, home=home)
    assert jit.out.rstrip("\n") == f"--- {repo}/.agents/rules/py.md ---\nType hints."
    every = memlens("show", "repo", "--trusted", cwd=cwd, home=home)
    assert "==> Antigravity CLI (antigravity) <==" in every.out
    report = json.loads(memlens("report", "repo", "--trusted", cwd=cwd, home=home).out)
    labels = {a["id"]: a["label"] for a in report["agents"]}
    assert labels["antigravity"] == "Antigravity CLI (convention)"
