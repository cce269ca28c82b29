"""The variables that move Codex's, Claude Code's and pi's global folders (`CODEX_HOME`,
`CLAUDE_CONFIG_DIR`, `PI_CODING_AGENT_DIR`), read through memlens.agents.environment.env_value:
`memlens verify` predicts a run inside `environment_overrides`, so an override is what every
reader of the folder sees (the global file, config.toml, the user's CLAUDE.md, rules, settings
and skills, pi's context files), never this process's value. Each rule was seen in the real
agents' requests (tests/conformance/scenarios: `codex-home-env`, `codex-home-empty`,
`claude-config-dir-env`, `pi-agent-dir`, `pi-agent-dir-tilde`; tests/conformance/skills/
cases.yaml: `claude-skills-config-dir`, `codex-skills-codex-home`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlens.agents.claude.memory_folder import auto_memory_folder, claude_home
from memlens.agents.claude.startup import ClaudeLoader
from memlens.agents.codex.load import codex_home, load_codex
from memlens.agents.environment import environment_overrides
from memlens.agents.pi.load import agent_dir, load_pi
from memlens.workspace.skills import agent_skills

from .conftest import build_tree

SKILL = "---\nname: {0}\ndescription: The {0} skill.\n---\nbody\n"


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """(workspace, HOME, the moved folder); this process's own values name another folder
    (the user's), which no override-reading answer may show."""
    ws, home, moved, user = (tmp_path / n for n in ("ws", "home", "moved", "user"))
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "A root\n"})
    build_tree(home, {".codex/AGENTS.md": "HOME codex\n", ".claude/CLAUDE.md": "HOME claude\n",
                      ".pi/agent/AGENTS.md": "HOME pi\n",
                      ".claude/skills/home/SKILL.md": SKILL.format("home")})
    build_tree(user, {"AGENTS.md": "the user's\n", "CLAUDE.md": "the user's\n"})
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR"):
        monkeypatch.setenv(name, str(user))
    return ws, home, moved


def test_codex_home_override_moves_the_global_file_config_and_skills(
        tree: tuple[Path, Path, Path]) -> None:
    ws, home, moved = tree
    build_tree(moved, {"AGENTS.md": "moved codex\n",
                       "config.toml": 'project_doc_fallback_filenames = ["NOTES.md"]\n',
                       "skills/mine/SKILL.md": SKILL.format("mine")})
    build_tree(ws, {"sub/NOTES.md": "notes\n"})
    with environment_overrides({"CODEX_HOME": str(moved)}):
        assert codex_home(str(home)) == str(moved)
        load = load_codex(str(ws / "sub"), str(home))
        skills = agent_skills("codex", str(home), str(ws))
    assert (load.global_path, load.global_text) == (f"{moved}/AGENTS.md", "moved codex")
    assert [d.path for d in load.docs] == [f"{ws}/AGENTS.md", f"{ws}/sub/NOTES.md"]
    assert [(s.name, s.location) for s in skills.skills] == [
        ("mine", f"{moved}/skills/mine/SKILL.md")]
    with environment_overrides({"CODEX_HOME": ""}):  # empty: unset, as Codex reads it
        assert load_codex(str(ws), str(home)).global_text == "HOME codex"


def test_claude_config_dir_override_moves_user_memory_rules_settings_and_skills(
        tree: tuple[Path, Path, Path]) -> None:
    """The user's CLAUDE.md, rules, settings.json (its auto-memory switch) and skills are the
    moved folder's; HOME/.claude/skills is then neither the user's skills nor a project's."""
    ws, home, moved = tree
    build_tree(moved, {"CLAUDE.md": "moved claude\n", "rules/r.md": "moved rule\n",
                       "settings.json": '{"autoMemoryEnabled": false}',
                       "skills/mine/SKILL.md": SKILL.format("mine")})
    with environment_overrides({"CLAUDE_CONFIG_DIR": str(moved)}):
        assert claude_home(str(home)) == str(moved)
        files = [(f.path, f.kind) for f in ClaudeLoader(str(home)).load(str(ws)).files]
        memory = auto_memory_folder(str(home), str(ws), env={})
        skills = agent_skills("claude", str(home), str(ws))
    assert (f"{moved}/CLAUDE.md", "user") in files and (f"{moved}/rules/r.md", "userRule") in files
    assert not [p for p, _ in files if p.startswith(f"{home}/")]
    assert memory.folder is None and memory.reason == (
        f"autoMemoryEnabled is false in {moved}/settings.json")
    assert [(s.name, s.location, s.tier) for s in skills.skills] == [
        ("mine", f"{moved}/skills/mine/SKILL.md", "user")]


def test_pi_agent_dir_override_and_its_home_expansion(tree: tuple[Path, Path, Path]) -> None:
    ws, home, moved = tree
    build_tree(moved, {"CLAUDE.md": "moved pi\n", "APPEND_SYSTEM.md": "moved append\n"})
    build_tree(home, {"pi/AGENTS.md": "HOME's pi folder\n"})
    with environment_overrides({"PI_CODING_AGENT_DIR": str(moved)}):
        load = load_pi(str(ws), str(home))
    assert [f.path for f in load.context][:1] == [f"{moved}/CLAUDE.md"]
    assert load.append is not None and load.append.text == "moved append\n"
    with environment_overrides({"PI_CODING_AGENT_DIR": "~/pi"}):
        assert agent_dir(str(home)) == f"{home}/pi"
    with environment_overrides({"PI_CODING_AGENT_DIR": ""}):  # empty: unset
        assert agent_dir(str(home)) == f"{home}/.pi/agent"


def test_claude_skills_of_the_config_folder_the_environment_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CLAUDE_CONFIG_DIR set in this process's environment (the editor's, the shell's): the
    user's skills are its `skills/`, HOME/.claude/skills is not read."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n",
                    ".claude/skills/proj/SKILL.md": SKILL.format("proj")})
    build_tree(home, {".claude/skills/home/SKILL.md": SKILL.format("home"),
                      "cfg/skills/mine/SKILL.md": SKILL.format("mine")})
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "cfg"))
    skills = agent_skills("claude", str(home), str(ws))
    assert [(s.name, s.tier) for s in skills.skills] == [("mine", "user"), ("proj", "project")]
    assert skills.listing == ("The following skills are available for use with the Skill "
                              "tool:\n\n- mine: The mine skill.\n- proj: The proj skill.")
