"""The workspace index takes changed files as batches (workspace/index_agents.py): each agent
concerned brings its part up to date once per batch, a path in no agent's context costs no
agent's work, past a threshold one rebuild; the agent matrix is kept per generation.
Counting recomputations, never timing them."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memlens.agents import all_agents
from memlens.workspace.index import WorkspaceIndex
from memlens.workspace.service import EditorSettings, WorkspaceService

from .conftest import build_tree

TREE = {
    ".git": None,
    "GEMINI.md": "# Root rules\n@./docs/style.md\n@./docs/later.md\n",
    "docs/style.md": "Style v1\n",
    "CLAUDE.md": "# Claude rules\n",
    "AGENTS.md": "# Agents\n",
    "api/GEMINI.md": "# API rules\n",
    "api/app.py": "print()\n",
    "web/index.ts": "export {};\n",
    "notes/plain.md": "Nobody reads this.\n",
    "home/.gemini/GEMINI.md": "Global\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    build_tree(root, TREE)
    return root


def _index(repo: Path) -> WorkspaceIndex:
    from memlens.model import MemorySettings

    index = WorkspaceIndex(MemorySettings(home=str(repo / "home"), trusted=True,
                                          discover_gemini_extensions=False), [str(repo)])
    index.build()
    return index


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How often each agent's part is recomputed: every agent's workspace check, and Gemini
    CLI's roots rendered and folder loads redone."""
    calls: Counter[str] = Counter()
    for agent in all_agents():
        original = agent.check_workspace

        def check(*args: Any, _id: str = agent.id, _original: Any = original) -> Any:
            calls[_id] += 1
            return _original(*args)

        monkeypatch.setattr(agent, "check_workspace", check)
    render, load, reload = (WorkspaceIndex.render_root, WorkspaceIndex.load_folders,
                            WorkspaceIndex.reload_folders_using)

    def render_root(self: WorkspaceIndex, *args: Any) -> None:
        calls["gemini render"] += 1
        render(self, *args)

    def load_folders(self: WorkspaceIndex) -> None:
        calls["gemini folders"] += 1
        load(self)

    def reload_folders_using(self: WorkspaceIndex, paths: set[str]) -> None:
        if paths & {p for s in self.folder_states.values() for p in s.load.paths}:
            calls["gemini folders"] += 1
        reload(self, paths)

    monkeypatch.setattr(WorkspaceIndex, "render_root", render_root)
    monkeypatch.setattr(WorkspaceIndex, "load_folders", load_folders)
    monkeypatch.setattr(WorkspaceIndex, "reload_folders_using", reload_folders_using)
    yield calls


def test_a_path_in_no_agents_context_recomputes_nothing(repo: Path,
                                                        counted: Counter[str]) -> None:
    index = _index(repo)
    counted.clear()
    plain = repo / "notes" / "plain.md"
    plain.write_text("Still nobody reads this.\n")
    new = repo / "web" / "README.md"
    new.write_text("A new document nobody imports.\n")
    touched = index.files_changed([str(plain), str(new)])
    assert counted == Counter()
    assert touched == {str(plain), str(new)}
    assert index.rebuilds == 0


def test_a_batch_recomputes_each_agent_at_most_once(repo: Path,
                                                    counted: Counter[str]) -> None:
    index = _index(repo)
    counted.clear()
    written = {
        "api/CLAUDE.md": "# API Claude\n", "web/CLAUDE.md": "# Web Claude\n",
        "api/AGENTS.md": "# API agents\n", "web/AGENTS.md": "# Web agents\n",
        "web/GEMINI.md": "# Web rules\n", "docs/later.md": "Later v1\n",
        "docs/style.md": "Style v2\n", "CLAUDE.md": "# Claude rules v2\n",
    }
    build_tree(repo, written)
    index.files_changed([str(repo / rel) for rel in written])
    assert counted, "the batch changed several agents' memory"
    assert max(counted[a.id] for a in all_agents()) == 1, counted
    # Gemini CLI: the new root rendered once, the root importing both documents once, the
    # folders' loads once.
    assert counted["gemini render"] == 2 and counted["gemini folders"] == 1, counted
    assert index.rebuilds == 0
    # And the answers are right afterwards.
    assert str(repo / "web" / "GEMINI.md") in index.roots
    root = index.roots[str(repo / "GEMINI.md")]
    assert "Style v2" in (root.content or "") and "Later v1" in (root.content or "")
    assert [d.code for d in index.diagnostics_for(str(repo / "GEMINI.md"))
            if d.code == "import-not-found"] == []
    claude = next(a for a in all_agents() if a.id == "claude")
    assert {str(repo / "api" / "CLAUDE.md"), str(repo / "web" / "CLAUDE.md")} <= set(
        index.agent_check(claude).found)


def test_past_the_threshold_a_batch_is_one_rebuild(repo: Path, counted: Counter[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    index = _index(repo)
    counted.clear()
    monkeypatch.setattr("memlens.workspace.index.REBUILD_THRESHOLD", 3)
    written = {f"pkg{k}/GEMINI.md": f"# Package {k}\n" for k in range(5)}
    build_tree(repo, written)
    index.files_changed([str(repo / rel) for rel in written])
    assert index.rebuilds == 1
    assert counted["gemini folders"] == 1  # the rebuild's, once
    assert max(counted[a.id] for a in all_agents() if a.id != "gemini") == 1
    assert all(str(repo / rel) in index.roots for rel in written)


def test_a_deleted_folder_reported_alone_drops_its_files(repo: Path) -> None:
    index = _index(repo)
    gone = str(repo / "api" / "GEMINI.md")
    assert gone in index.roots
    shutil.rmtree(repo / "api")
    index.files_changed([str(repo / "api")])
    assert gone not in index.roots
    assert gone not in index.found


def test_the_matrix_is_computed_once_per_generation(repo: Path) -> None:
    service = WorkspaceService([str(repo)], EditorSettings(window={
        "home": str(repo / "home"), "editorTrusted": True}))
    service.detect = dict
    folder = str(repo)
    settings = service.settings_for(folder)
    first = service.matrix(folder, settings)
    again = service.matrix(folder, settings)
    assert service.answers.computed == 1 and again is first
    (repo / "api" / "CLAUDE.md").write_text("# API Claude\n")
    service.files_changed([str(repo / "api" / "CLAUDE.md")])
    after = service.matrix(folder, settings)
    assert service.answers.computed == 2
    assert "api/CLAUDE.md" in {row.relative for row in after.rows}
    assert "api/CLAUDE.md" not in {row.relative for row in first.rows}
    service.matrix(folder, settings)
    assert service.answers.computed == 2


def test_a_blank_agents_md_that_gains_text_is_read_by_claude_code_again(tmp_path: Path) -> None:
    """Claude Code reads the root AGENTS.md where no CLAUDE.md is; while it was blank its check
    read nothing there. Once it gains text in a batch, Claude Code's part is redone: the
    hidden comment's warning names it among the readers (it named only the others)."""
    root = Path(os.path.realpath(tmp_path)) / "ws"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    build_tree(root, {".git": None, "AGENTS.md": "\n", "CLAUDE.local.md": "\n"})
    service = WorkspaceService([str(root)], EditorSettings(window={"home": str(home),
                                                                   "trusted": True}))
    service.detect = dict
    service.rebuild()
    agents = root / "AGENTS.md"
    agents.write_text("Rules <!-- a note -->\n")
    service.files_changed([str(agents)])
    hidden = [d for d in service.diagnostics_for(str(agents)) if d.code == "hidden-comment"]
    assert hidden and "Claude Code" in hidden[0].message
