"""A matrix cell that says "not read" says why as the agent would (workspace/reading.py):
a subfolder's AGENTS.md is Codex's own kind of file, read when Codex starts there, and VS
Code's chat reads it only with a setting — neither is "not its file"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlens.agents.gemini.settings import load_settings
from memlens.workspace.matrix import agent_matrix

from .conftest import build_tree


def _cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, str]]:
    root = Path(os.path.realpath(tmp_path)) / "repo"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    build_tree(root, {".git": None, "AGENTS.md": "root\n", "sub/AGENTS.md": "nested\n",
                      "GEMINI.md": "gemini\n"})
    settings = load_settings(str(root), home=str(home), cli={"trusted": True}, installed={})
    matrix = agent_matrix(str(root), settings, agents=["codex", "vscode-chat", "gemini"])
    row = next(r for r in matrix.rows if r.relative == "sub/AGENTS.md")
    return {agent: {"word": cell.word, "why": cell.why, "foreign": str(cell.foreign)}
            for agent, cell in row.cells.items()}


def test_a_subfolder_agents_md_is_codexs_file_read_when_it_starts_there(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codex = _cells(tmp_path, monkeypatch)["codex"]
    assert codex["word"] == "not read"
    assert codex["why"] == ("not read working here: Codex reads AGENTS.md only in the folder "
                            "it starts in and above; started in sub/ it reads this one")


def test_vscode_chat_names_the_setting_that_would_read_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chat = _cells(tmp_path, monkeypatch)["vscode-chat"]
    assert chat["word"] == "not read"
    assert "chat.useNestedAgentsMdFiles" in chat["why"]


def test_another_agents_file_is_still_not_its_file(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Gemini CLI reads GEMINI.md, not AGENTS.md (unless configured)
    gemini = _cells(tmp_path, monkeypatch)["gemini"]
    assert gemini["why"] == "not its file"
    assert gemini["foreign"] == "True"  # the editor and the report draw it as a dash


def test_a_reason_worth_reading_is_not_foreign(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    cells = _cells(tmp_path, monkeypatch)
    assert cells["codex"]["foreign"] == cells["vscode-chat"]["foreign"] == "False"


def test_the_markdown_matrix_draws_foreign_cells_as_a_dash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.reports.report import FOREIGN, markdown_summary

    root = Path(os.path.realpath(tmp_path)) / "repo"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    build_tree(root, {".git": None, "AGENTS.md": "root\n", "GEMINI.md": "gemini\n"})
    settings = load_settings(str(root), home=str(home), cli={"trusted": True}, installed={})
    text = markdown_summary(agent_matrix(str(root), settings, agents=["codex", "gemini"]))
    row = next(line for line in text.splitlines() if line.startswith("| `AGENTS.md`"))
    assert row.split(" | ")[1:] == [FOREIGN, "**● at start-up** |"]  # Gemini CLI, Codex
    assert f"{FOREIGN} not its file" in text
