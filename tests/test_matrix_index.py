"""The language server's matrix, answered from its index (workspace/matrix_known.py), is the
CLI's (`memlens report`: workspace/matrix.py's own walk and checks): the same columns, rows,
cells and diagnostics, for the view-consistency check's trees — also after an edit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlens.workspace.matrix import agent_matrix
from memlens.workspace.service import EditorSettings, WorkspaceService

from .conftest import build_tree
from .test_view_consistency import TREES, _isolated  # noqa: F401  (the same isolation)


def _service(root: Path, home: Path) -> WorkspaceService:
    service = WorkspaceService([str(root)], EditorSettings(
        window={"home": str(home), "trusted": True}))
    service.detect = dict
    service.rebuild()
    return service


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
