"""The language server's matrix, answered from its index (workspace/matrix_known.py), is the
CLI's (`memlens report`: workspace/matrix.py's own walk and checks): the same columns, rows,
cells and diagnostics, for the view-consistency check's trees — also after an edit."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from bench.walks import OVERLAY

from memlens.agents import AGENT_IDS
from memlens.workspace.matrix import agent_matrix
from memlens.workspace.service import EditorSettings, WorkspaceService

from .conftest import build_tree
from .test_view_consistency import TREES, _isolated  # noqa: F401  (the same isolation)


def _service(root: Path, home: Path, agents: Sequence[str] = ()) -> WorkspaceService:
    window: dict[str, object] = {"home": str(home), "trusted": True}
    if agents:
        window["agents"] = list(agents)  # `memlens.agents`: the agents in use
    service = WorkspaceService([str(root)], EditorSettings(window=window))
    service.detect = dict
    service.rebuild()
    return service


def _count_listings(monkeypatch: pytest.MonkeyPatch, prefix: str) -> list[str]:
    """The folders under `prefix` read from the disk from now on (files.tree.read_listing)."""
    from memlens.files import tree

    listed: list[str] = []
    real = tree.read_listing

    def counting(path: str) -> tree.Listing:
        if path.startswith(prefix):
            listed.append(path)
        return real(path)

    monkeypatch.setattr(tree, "read_listing", counting)
    return listed


@pytest.mark.parametrize("tree", sorted(TREES))
def test_the_index_matrix_is_the_clis(tree: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(os.path.realpath(tmp_path)) / "repo"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    build_tree(root, TREES[tree])
    service = _service(root, home)
    folder = service.folders[0]
    settings = service.settings_for(folder)
    assert service.matrix(folder, settings) == agent_matrix(folder, settings)
    # An agent's file edited on disk: the kept readings of that agent are redone.
    memory = next((root / p for p in sorted(TREES[tree]) if p.endswith(".md")), None)
    if memory is not None:
        memory.write_text(memory.read_text(encoding="utf-8") + "more <!-- x -->\n")
        service.files_changed([str(memory)])
        assert service.matrix(folder, settings) == agent_matrix(folder, settings)


def test_the_first_matrix_after_a_build_walks_nothing_the_build_walked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build's walks (which memory files, what the agents' views walk) are kept while no
    file appears or vanishes: the first matrix, every agent asked for, lists no ordinary
    folder again; once a file appears it walks afresh, and its answer is still the CLI's."""

    root = Path(os.path.realpath(tmp_path)) / "repo"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    # Every agent's files (bench/walks.py's overlay) and nested ones, so every column's
    # reading and checks run.
    # `lib/` is ordinary code: 24 folders no agent reads anything from.
    plain = {f"lib/p{i}/q{j}/code.ts": "" for i in range(4) for j in range(5)}
    build_tree(root, {**OVERLAY, **plain, "GEMINI.md": "root\n", "src/a/GEMINI.md": "a\n",
                      "src/a/CLAUDE.md": "a\n", "src/a/AGENTS.md": "a\n", "src/a/x.ts": "",
                      "src/b/y.py": "", "src/b/.cursor/rules/b.mdc": "b\n"})
    # Every agent in use, as the matrix below asks for every agent: the build walks what the
    # views of the agents in use (and of those whose files are here) walk.
    service = _service(root, home, AGENT_IDS)
    folder = service.folders[0]
    settings = service.settings_for(folder)
    # The index's own list of the files under the folder (for the globs) is made on first use
    # and kept for the tree generation: made now, before counting.
    service.index_of_folder(folder).files_under(folder)
    assert any("/lib/p0/q0/" in p for p in service.index_of_folder(folder).files_under(folder))
    listed = _count_listings(monkeypatch, f"{root}/lib")  # only a walk of the whole tree
    first = service.matrix(folder, settings, AGENT_IDS)
    assert listed == []
    (root / "src" / "b" / "GEMINI.md").write_text("b\n")
    service.files_changed([str(root / "src" / "b" / "GEMINI.md")])
    again = service.matrix(folder, settings, AGENT_IDS)
    assert listed  # a file appeared: the walks are redone
    assert again != first
    assert again == agent_matrix(folder, settings, agents=AGENT_IDS)


def test_an_editor_buffer_keeps_the_walks_and_the_matrix_shows_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Typing in a buffer adds no file to the disk: the build's walks stay good. The matrix
    shows the files as the editor has them, as every other view of the language server does:
    with an unsaved fix it is the matrix `memlens report` gives once the fix is saved."""

    root = Path(os.path.realpath(tmp_path)) / "repo"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    plain = {f"lib/p{i}/code.ts": "" for i in range(5)}
    build_tree(root, {**plain, "GEMINI.md": "root @./missing.md\n", "src/GEMINI.md": "s\n",
                      "CLAUDE.md": "claude\n"})
    service = _service(root, home)
    folder = service.folders[0]
    settings = service.settings_for(folder)
    listed = _count_listings(monkeypatch, f"{root}/lib")  # only a walk of the whole tree
    gemini = root / "GEMINI.md"
    service.set_text(str(gemini), gemini.read_text())  # opened: the same text as the disk
    opened = service.matrix(folder, settings)
    assert listed == []
    fixed = "root, the import fixed <!-- and a note -->\n"
    service.set_text(str(gemini), fixed)  # typed, not saved
    typed = service.matrix(folder, settings)
    assert listed == []
    assert opened == agent_matrix(folder, settings)
    assert any(d.code == "import-not-found" for d in opened.diagnostics)
    assert not any(d.code == "import-not-found" for d in typed.diagnostics)
    gemini.write_text(fixed)
    assert typed == agent_matrix(folder, settings)


def test_the_skills_found_on_a_read_come_from_the_builds_walks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Skills view's payload (`memlens/agentSkills`, lsp/skills.py) asks for Claude Code's
    skills below the folder inside `walks_reused()`: after a build it lists no folder the
    build walked, and its answer is the one a walk of its own gives."""
    from memlens.workspace.skills import agent_skills

    root = Path(os.path.realpath(tmp_path)) / "repo"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    plain = {f"lib/p{i}/q{j}/code.ts": "" for i in range(3) for j in range(3)}
    build_tree(root, {**plain, "CLAUDE.md": "root\n",
                      "web/.claude/skills/lint/SKILL.md": "---\ndescription: Lint.\n---\nx\n"})
    service = _service(root, home, ["claude"])
    folder = service.folders[0]
    index = service.index_of_folder(folder)
    alone = agent_skills("claude", str(home), folder, below=True)
    assert [s.on_read for s in alone.skills] == ["when Claude Code reads a file under web/"]
    listed = _count_listings(monkeypatch, f"{root}/lib")  # only a walk of the whole tree
    with index.walks_reused():
        reused = agent_skills("claude", str(home), folder, below=True)
    assert listed == []
    assert reused == alone
    (root / "lib" / "p0" / "new.ts").write_text("")  # a file appears: the walks are redone
    service.files_changed([str(root / "lib" / "p0" / "new.ts")])
    with index.walks_reused():
        assert agent_skills("claude", str(home), folder, below=True) == alone
    assert listed
