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


def test_an_absolute_folder_is_copied_a_relative_or_empty_value_passed_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dots, scratch = tmp_path / "dots", tmp_path / "scratch"
    build_tree(dots, {"opencode/AGENTS.md": "global\n", "opencode/opencode.json": "{}",
                "opencode/plugin/x.js": "code: not copied\n",
                "opencode/notes.md": "not copied\n"})
    assert moved_global_folders("opencode", scratch).env == {}
    monkeypatch.setenv("XDG_CONFIG_HOME", f"{dots}/")
    monkeypatch.setenv("OPENCODE_CONFIG_DIR", "")
    moved = moved_global_folders("opencode", scratch)
    copy = scratch / "xdg_config_home"
    assert moved.env == {"XDG_CONFIG_HOME": str(copy), "OPENCODE_CONFIG_DIR": ""}
    assert moved.copies == [(copy, str(dots))]
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == [
        "opencode/AGENTS.md", "opencode/opencode.json"]
    monkeypatch.setenv("XDG_CONFIG_HOME", "cfg")
    assert moved_global_folders("opencode", scratch).env == {"XDG_CONFIG_HOME": "cfg",
                                                             "OPENCODE_CONFIG_DIR": ""}
    assert moved_global_folders("gemini", scratch).env == {}


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
