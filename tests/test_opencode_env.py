"""OpenCode 1.18's global folder as its environment moves it (agents/opencode/load.py), each rule
as the real agent showed it (tests/conformance/scenarios/opencode.yaml, `opencode-xdg-*` and
`opencode-config-dir-*`): XDG_CONFIG_HOME moves its config folder, OPENCODE_CONFIG_DIR the
folder of its global AGENTS.md (and adds one more opencode.json, read last); OPENCODE_CONFIG
names one more configuration file, read after the config folder's (`opencode-config-env`)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memlens.agents import agent_by_id
from memlens.agents.environment import env_value, environment_overrides
from memlens.agents.opencode.load import OUTSIDE, load_opencode

from .conftest import build_tree

VARIABLES = ("XDG_CONFIG_HOME", "OPENCODE_CONFIG_DIR", "OPENCODE_DISABLE_CLAUDE_CODE",
             "OPENCODE_DISABLE_CLAUDE_CODE_PROMPT", "OPENCODE_DISABLE_PROJECT_CONFIG",
             "OPENCODE_CONFIG")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".git").mkdir(parents=True)
    build_tree(ws, {"AGENTS.md": "A root\n", "a.md": "a\n", "b.md": "b\n", "c.md": "c\n"})
    build_tree(home, {".config/opencode/AGENTS.md": "default global\n",
                ".config/opencode/opencode.json": '{"instructions": ["a.md"]}',
                ".claude/CLAUDE.md": "HOME claude\n"})
    return ws, home


def sent_paths(cwd: Path, home: Path) -> list[str]:
    return [f.path for f in load_opencode(str(cwd), str(home)).sent]


def test_xdg_config_home_moves_its_config_folder(tree: tuple[Path, Path],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    build_tree(home, {"xdg/opencode/AGENTS.md": "xdg global\n",
                "xdg/opencode/opencode.jsonc": '{"instructions": ["b.md"]}'})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "xdg"))
    assert sent_paths(ws, home) == [f"{home}/xdg/opencode/AGENTS.md", f"{ws}/AGENTS.md",
                                    f"{ws}/b.md"]
    monkeypatch.setenv("XDG_CONFIG_HOME", "")  # empty: as if unset
    assert sent_paths(ws, home) == [f"{home}/.config/opencode/AGENTS.md", f"{ws}/AGENTS.md",
                                    f"{ws}/a.md"]


def test_a_relative_xdg_config_home_is_read_from_the_working_folder_as_the_project(
        tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    build_tree(ws, {"sub/rel/opencode/AGENTS.md": "relative global\n",
              "sub/rel/opencode/opencode.json":
                  f'{{"instructions": ["b.md", "{home}/.claude/CLAUDE.md"]}}',
              "rel/opencode/AGENTS.md": "in the root: not read\n"})
    monkeypatch.setenv("XDG_CONFIG_HOME", "rel")
    load = load_opencode(str(ws / "sub"), str(home))
    assert [f.path for f in load.sent] == [f"{ws}/sub/rel/opencode/AGENTS.md",
                                           f"{ws}/AGENTS.md", f"{ws}/b.md"]
    # a folder of the tree: its configuration is the project's (an absolute path is not read)
    assert [d.code for d in load.diagnostics] == [OUTSIDE]


def test_opencode_config_dir_holds_the_global_file_and_its_config_is_read_last(
        tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    build_tree(ws, {"opencode.json": '{"instructions": ["b.md"]}'})
    build_tree(home, {"ocdir/AGENTS.md": "config dir global\n",
                "ocdir/opencode.json": '{"instructions": ["c.md", "a.md"]}'})
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", str(home / "ocdir"))
    load = load_opencode(str(ws), str(home))
    assert [f.path for f in load.sent] == [f"{home}/ocdir/AGENTS.md", f"{ws}/AGENTS.md",
                                           f"{ws}/a.md", f"{ws}/b.md", f"{ws}/c.md"]
    assert load.configs == [f"{home}/.config/opencode/opencode.json", f"{ws}/opencode.json",
                            f"{home}/ocdir/opencode.json"]
    (home / "ocdir" / "AGENTS.md").unlink()  # none there: Claude Code's, not the config folder's
    assert sent_paths(ws, home)[0] == f"{home}/.claude/CLAUDE.md"


def test_an_empty_opencode_config_dir_is_the_working_folder(
        tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    build_tree(ws, {"sub/AGENTS.md": "A sub\n"})
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", "")
    # its AGENTS.md is the global file (found first): Claude Code's is not read
    assert sent_paths(ws / "sub", home) == [f"{ws}/sub/AGENTS.md", f"{ws}/AGENTS.md",
                                            f"{ws}/a.md"]
    monkeypatch.setenv("OPENCODE_DISABLE_PROJECT_CONFIG", "1")
    build_tree(ws, {"sub/a.md": "a in sub\n"})  # a relative glob: in the working folder alone
    assert sent_paths(ws / "sub", home) == [f"{ws}/sub/AGENTS.md", f"{ws}/sub/a.md"]


def test_with_the_project_config_off_a_relative_glob_is_tried_in_the_global_folder(
        tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    build_tree(home, {".config/opencode/a.md": "a in the config folder\n"})
    monkeypatch.setenv("OPENCODE_DISABLE_PROJECT_CONFIG", "1")
    assert sent_paths(ws, home) == [f"{home}/.config/opencode/AGENTS.md",
                                    f"{home}/.config/opencode/a.md"]
    build_tree(home, {"ocdir/b.md": "b\n"})
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", str(home / "ocdir"))
    assert sent_paths(ws, home) == [f"{home}/.claude/CLAUDE.md"]  # no a.md in ocdir


def test_its_home_folder_is_the_global_files_unless_the_working_folder_decides(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, home = agent_by_id("opencode"), str(tmp_path)
    assert agent.home_folder(home) == f"{home}/.config/opencode"
    monkeypatch.setenv("XDG_CONFIG_HOME", "/etc/xdg/")
    assert agent.home_folder(home) == "/etc/xdg/opencode"
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", f"{home}/oc")
    assert agent.home_folder(home) == f"{home}/oc"
    assert agent.home_change_matters(f"{home}/oc/AGENTS.md", home)
    assert not agent.home_change_matters(f"{home}/oc/node_modules/x.js", home)
    for relative in ("oc", ""):
        monkeypatch.setenv("OPENCODE_CONFIG_DIR", relative)
        assert agent.home_folder(home) is None
        assert agent.home_change_matters(f"{home}/oc/node_modules/x.js", home)


def test_opencode_config_file_is_read_after_the_config_folders_before_the_projects(
        tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Its `instructions` come after the config folder's and before the project's (any file
    name; an empty value is unset; a relative one is the working folder's and counts as the
    project's, so its `~/` entry is reported, not read); `memlens verify`'s value first."""
    ws, home = tree
    build_tree(ws, {"opencode.json": '{"instructions": ["c.md"]}'})
    build_tree(home, {"my.json": '{"instructions": ["b.md", "~/home-note.md"]}',
                      "home-note.md": "home note\n",
                      "copy.json": '{"instructions": ["c.md", "a.md"]}'})
    build_tree(ws, {"rel.json": '{"instructions": ["~/home-note.md"]}'})
    monkeypatch.setenv("OPENCODE_CONFIG", str(home / "my.json"))
    assert sent_paths(ws, home)[2:] == [f"{ws}/a.md", f"{ws}/b.md", f"{home}/home-note.md",
                                        f"{ws}/c.md"]
    with environment_overrides({"OPENCODE_CONFIG": str(home / "copy.json")}):
        assert sent_paths(ws, home)[2:] == [f"{ws}/a.md", f"{ws}/c.md"]
    monkeypatch.setenv("OPENCODE_CONFIG", "")
    assert sent_paths(ws, home)[2:] == [f"{ws}/a.md", f"{ws}/c.md"]
    monkeypatch.setenv("OPENCODE_CONFIG", "rel.json")
    load = load_opencode(str(ws), str(home))
    assert [f.path for f in load.sent][2:] == [f"{ws}/a.md", f"{ws}/c.md"]
    assert [(d.path, d.code) for d in load.diagnostics] == [(f"{ws}/rel.json", OUTSIDE)]


def test_overrides_answer_first_in_their_thread_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", "/process")
    seen: list[str | None] = []
    with environment_overrides({"OPENCODE_CONFIG_DIR": "/copy", "XDG_CONFIG_HOME": ""}):
        assert env_value("OPENCODE_CONFIG_DIR") == "/copy"
        assert env_value("XDG_CONFIG_HOME") == ""
        other = threading.Thread(target=lambda: seen.append(env_value("OPENCODE_CONFIG_DIR")))
        other.start()
        other.join()
    assert seen == ["/process"]
    assert env_value("OPENCODE_CONFIG_DIR") == "/process"
    assert env_value("XDG_CONFIG_HOME") is None
