"""`memlens verify` and the variables that move an agent's global folder (verify/agent_setup.py
`moved_global_folders`, verify/run.py `predicted_payloads`): the run gets a copy of an absolute
folder, a relative or empty value as it is, and the prediction reads what the run reads
(tests/conformance/test_verify.py runs the real agents on the same)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlens.verify.agent_setup import moved_global_folders
from memlens.verify.capture import Capture
from memlens.verify.run import predicted_payloads

from .conftest import build_tree

VARIABLES = ("XDG_CONFIG_HOME", "OPENCODE_CONFIG_DIR", "COPILOT_HOME",
             "OPENCODE_DISABLE_PROJECT_CONFIG", "OPENCODE_DISABLE_CLAUDE_CODE")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_an_absolute_folder_is_copied_an_empty_value_read_as_unset_passed_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dots, scratch = tmp_path / "dots", tmp_path / "scratch"
    build_tree(dots, {"opencode/AGENTS.md": "global\n", "opencode/opencode.json": "{}",
                      "opencode/plugin/x.js": "code: not copied\n",
                      "opencode/notes.md": "not copied\n"})
    assert moved_global_folders("opencode", scratch).env == {}
    monkeypatch.setenv("XDG_CONFIG_HOME", f"{dots}/")
    moved = moved_global_folders("opencode", scratch)
    copy = scratch / "xdg_config_home"
    assert moved.env == {"XDG_CONFIG_HOME": str(copy)} and moved.refused == []
    assert moved.copies == [(copy, str(dots))]
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == [
        "opencode/AGENTS.md", "opencode/opencode.json"]
    monkeypatch.setenv("COPILOT_HOME", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    moved = moved_global_folders("copilot", scratch)
    assert moved.env == {"COPILOT_HOME": "", "XDG_CONFIG_HOME": ""} and moved.refused == []
    assert moved_global_folders("gemini", scratch).env == {}


@pytest.mark.parametrize(("agent", "name", "value"), [
    ("opencode", "XDG_CONFIG_HOME", "cfg"), ("opencode", "OPENCODE_CONFIG_DIR", "own"),
    ("opencode", "OPENCODE_CONFIG_DIR", ""), ("copilot", "COPILOT_HOME", "rel"),
    ("copilot", "XDG_CONFIG_HOME", "~/cfg")])
def test_a_folder_of_the_workspace_is_refused_not_run(
        agent: str, name: str, value: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative value (or OpenCode's empty OPENCODE_CONFIG_DIR, the working folder) would
    have the agent take its configuration, plugins and MCP servers included, from the
    repository's copy: the agent is not run, and the message says which variable and what
    to do."""
    monkeypatch.setenv(name, value)
    moved = moved_global_folders(agent, tmp_path / "scratch")
    assert name not in moved.env and len(moved.refused) == 1
    assert name in moved.refused[0] and "absolute path or unset it" in moved.refused[0]


def test_copilots_xdg_file_is_copied_unless_a_link_it_would_not_move(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dots, scratch = tmp_path / "dots", tmp_path / "scratch"
    build_tree(tmp_path, {"elsewhere.md": "linked\n",
                          "cph/instructions/a/b.instructions.md": "b\n"})
    (dots / ".copilot").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere.md", dots / ".copilot" / "copilot-instructions.md")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(dots))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cph"))
    moved = moved_global_folders("copilot", scratch)
    assert not (scratch / "xdg_config_home" / ".copilot" / "copilot-instructions.md").exists()
    assert (scratch / "copilot_home" / "instructions" / "a" / "b.instructions.md").is_file()
    assert set(moved.env) == {"XDG_CONFIG_HOME", "COPILOT_HOME"}


def test_the_prediction_reads_the_folders_the_run_was_given(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    ws, home, copy = tmp_path / "ws", tmp_path / "home", tmp_path / "copy"
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "A root\n"})
    build_tree(copy, {"opencode/AGENTS.md": "the copy's global\n"})
    build_tree(tmp_path, {"user/opencode/AGENTS.md": "the user's own: the run did not read it\n"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    capture = Capture(agent="opencode", version="1.18.33", workspace=str(ws), home=str(home),
                      cwd=str(ws), read_path=None, startup=[], on_read=[], blocks=[],
                      exit_code=0, requests=1, isolated=True, seconds=0.0, notes=[])
    start, _ = predicted_payloads("opencode", "1.18.33", capture,
                                  {"XDG_CONFIG_HOME": str(copy)})
    assert start == [f"Instructions from: {copy}/opencode/AGENTS.md\nthe copy's global\n\n"
                     f"Instructions from: {ws}/AGENTS.md\nA root\n"]
    assert os.environ["XDG_CONFIG_HOME"] == str(tmp_path / "user")  # this process's: unchanged


def test_verify_does_not_run_an_agent_told_to_read_its_configuration_from_the_workspace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative XDG_CONFIG_HOME would make OpenCode load `cfg/opencode/plugin/*` of the
    repository's copy (code): a stand-in OpenCode that marks any run is never started, and
    verify says why and what to do."""
    from memlens.agent_versions import InstalledAgent
    from memlens.verify.run import verify

    ws, bins, home = tmp_path / "ws", tmp_path / "bins", tmp_path / "home"
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "A\n",
                    "cfg/opencode/plugin/evil.js": "export default () => {}\n"})
    home.mkdir()
    ran = tmp_path / "ran"
    build_tree(bins, {"opencode": f"#!/bin/sh\n: > {ran}\n"})
    (bins / "opencode").chmod(0o755)
    monkeypatch.setenv("XDG_CONFIG_HOME", "cfg")
    result = verify(str(ws), {"opencode": InstalledAgent("opencode", "1.18.33",
                                                         str(bins / "opencode"))},
                    home=str(home), remember=False, trusted=True, timeout=60)
    (opencode,) = result.agents
    assert opencode.status == "failed" and not ran.exists()
    assert opencode.message.startswith("OpenCode 1.18.33 was not run: XDG_CONFIG_HOME=cfg names")
