"""GitHub Copilot CLI 1.0.102's global folder as its environment moves it (agents/copilot/load.py),
each rule as the real CLI showed it (tests/conformance/scenarios/copilot.yaml, `copilot-home-*`
and `copilot-xdg-*`): COPILOT_HOME moves ~/.copilot, read from the working folder when relative;
without it, a set XDG_CONFIG_HOME makes it move `$XDG_CONFIG_HOME/.copilot/copilot-instructions.md`
into ~/.copilot when it starts, and send it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlens.agents import agent_by_id
from memlens.agents.copilot.load import load_copilot
from memlens.model import MemorySettings

from .conftest import build_tree


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("COPILOT_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "A root\n"})
    (ws / ".git" / "objects").mkdir()
    (ws / ".git" / "refs").mkdir()
    build_tree(home, {".copilot/copilot-instructions.md": "default instr\n"})
    return ws, home


def home_text(cwd: Path, home: Path) -> str | None:
    load = load_copilot(str(cwd), str(home))
    found = [f.text for f in load.blocks if f.kind == "home"]
    return found[0] if found else None


def test_copilot_home_moves_the_folder_and_a_relative_one_is_the_working_folders(
        tree: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    build_tree(home, {"cph/copilot-instructions.md": "COPILOT_HOME instr\n",
                "cph/instructions/c.instructions.md": "always\n"})
    monkeypatch.setenv("COPILOT_HOME", str(home / "cph"))
    load = load_copilot(str(ws), str(home))
    assert [f.path for f in load.files] == [f"{home}/cph/copilot-instructions.md",
                                            f"{ws}/AGENTS.md",
                                            f"{home}/cph/instructions/c.instructions.md"]
    build_tree(ws, {"sub/rel/copilot-instructions.md": "relative\n",
              "rel/copilot-instructions.md": "in the root: not read\n",
              "sub/~/tld/copilot-instructions.md": "a folder named ~\n"})
    monkeypatch.chdir(tmp_path)  # not where the agent starts: the working folder decides
    monkeypatch.setenv("COPILOT_HOME", "rel")
    assert home_text(ws / "sub", home) == "relative\n"
    monkeypatch.setenv("COPILOT_HOME", "~/tld")  # no HOME expansion: a relative path
    assert home_text(ws / "sub", home) == "a folder named ~\n"
    monkeypatch.setenv("COPILOT_HOME", "")  # empty: unset
    assert home_text(ws / "sub", home) == "default instr\n"


def test_xdg_config_home_file_is_moved_into_home_and_sent(tree: tuple[Path, Path],
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    ws, home = tree
    (home / ".copilot" / "copilot-instructions.md").unlink()
    build_tree(home, {"xdg/.copilot/copilot-instructions.md": "xdg @extra.md\n",
                "xdg/.copilot/extra.md": "xdg extra: not read\n",
                "xdg/.copilot/instructions/x.instructions.md": "not moved, not read\n",
                ".copilot/extra.md": "HOME extra\n"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    load = load_copilot(str(ws), str(home))
    (moved,) = [f for f in load.blocks if f.kind == "home"]
    assert moved.path == f"{home}/xdg/.copilot/copilot-instructions.md"
    # read from where it lands: its imports from ~/.copilot
    assert moved.text == (f'xdg @extra.md\n\n<imported_custom_instruction source="{home}/'
                          '.copilot/extra.md">\nHOME extra\n</imported_custom_instruction>\n')
    assert moved.note is not None and f"{home}/.copilot/copilot-instructions.md" in moved.note
    assert not load.always
    memory = agent_by_id("copilot").load(str(ws), MemorySettings(home=str(home)))
    assert memory.files[0].note == moved.note


def test_no_move_when_home_has_one_copilot_home_is_set_or_it_is_a_link(
        tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    build_tree(home, {"xdg/.copilot/copilot-instructions.md": "xdg\n", "notes/i.md": "linked\n"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    assert home_text(ws, home) == "default instr\n"  # ~/.copilot has one: it stays
    (home / ".copilot" / "copilot-instructions.md").unlink()
    assert home_text(ws, home) == "xdg\n"
    monkeypatch.setenv("COPILOT_HOME", str(home / "cph"))
    assert home_text(ws, home) is None  # no migration with COPILOT_HOME
    monkeypatch.setenv("COPILOT_HOME", "")  # an empty one is unset: it moves
    assert home_text(ws, home) == "xdg\n"
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    assert home_text(ws, home) is None
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    (home / "xdg" / ".copilot" / "copilot-instructions.md").unlink()
    os.symlink(home / "notes" / "i.md", home / "xdg" / ".copilot" / "copilot-instructions.md")
    assert home_text(ws, home) is None  # a link is not moved


def test_a_relative_xdg_config_home_is_the_working_folders(
        tree: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    (home / ".copilot" / "copilot-instructions.md").unlink()
    build_tree(ws, {"sub/rel/.copilot/copilot-instructions.md": "relative xdg\n",
              "rel/.copilot/copilot-instructions.md": "in the root: not read\n"})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", "rel")
    assert home_text(ws / "sub", home) == "relative xdg\n"


def test_its_home_folder_unless_the_working_folder_decides(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, home = agent_by_id("copilot"), str(tmp_path)
    assert agent.home_folder(home) == f"{home}/.copilot"
    monkeypatch.setenv("COPILOT_HOME", f"{home}/cph/")
    assert agent.home_folder(home) == f"{home}/cph"
    monkeypatch.setenv("COPILOT_HOME", "cph")
    assert agent.home_folder(home) is None
    assert agent.home_change_matters(f"{home}/cph/session-state/x.json", home)


def test_copilot_is_shown_where_only_its_xdg_file_applies(
        tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --agent, Copilot CLI is shown where the file it would move from
    `$XDG_CONFIG_HOME/.copilot` is its only one (the cheap sign before its load)."""
    from memlens.workspace.agents_here import agents_loading_here

    ws, home = tree
    (home / ".copilot" / "copilot-instructions.md").unlink()
    (home / ".copilot").rmdir()
    settings = MemorySettings(home=str(home))
    assert "copilot" not in agents_loading_here(str(ws), settings)
    build_tree(home, {"xdg/.copilot/copilot-instructions.md": "xdg\n"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    assert "copilot" in agents_loading_here(str(ws), settings)
