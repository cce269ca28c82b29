"""The agent matrix answered from the language server's index (pure engine).

`agent_matrix` (workspace/matrix.py) given what the index already holds for the folder: the
memory files its walk found (`WorkspaceIndex.found`), the folder's file list for glob-scoped
rules (kept per tree generation), and each agent's reading and checks kept while no agent's part
of the index changed and no file appeared or vanished. The answers are the CLI's
(`memlens report`): the same code runs, with the index's data (tests/test_matrix_index.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar, cast

from memlens.files import tree
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import is_subpath
from memlens.model import MemorySettings
from memlens.protocol.matrix import MatrixResult
from memlens.workspace.index import WorkspaceIndex
from memlens.workspace.matrix import Known, agent_matrix

T = TypeVar("T")


def index_matrix(index: WorkspaceIndex, folder: str, settings: MemorySettings,
                 agents: Sequence[str] | None) -> MatrixResult:
    """The matrix of the index's workspace folder `folder`, from the index's data."""
    state = index.folder_states.get(folder)
    if state is None or not state.load.trusted or folder in index.refused:
        # Not walked by the index (untrusted, `/` or HOME): the matrix walks for itself.
        with tree.one_walk():
            return agent_matrix(folder, settings, agents=agents)

    def stamp(what: str, agent: str) -> Hashable:
        # An agent reads other agents' files too (Claude Code an AGENTS.md where no CLAUDE.md
        # is, Gemini CLI's check every agent's hidden content), and a part is told only of
        # its own: what is kept is good while no agent's part changed and no file moved.
        return (index.tree_generation, tuple(sorted(index.part_generations.items())))

    def keep(what: str, agent: str, compute: Callable[[], T]) -> T:
        key = ("matrix", folder, what, agent)
        now = stamp(what, agent)
        kept = index.kept.get(key)
        if kept is not None and kept[0] == now:
            return cast(T, kept[1])
        value = compute()
        index.kept[key] = (now, value)
        return value

    found = [p for p in index.found if is_subpath(folder, p)]
    # The files as the editor has them (its unsaved buffers over the disk), as every other
    # view of the language server shows them; Gemini CLI's check is what the index already
    # holds when it indexes this folder alone.
    alone = index.folders == [folder]
    known = Known(found, files=index.files_under, keep=keep,
                  rendered=index.rendered_check if alone else None,
                  reader=FileReader(overrides=index.overrides))
    # What is computed afresh lists each folder once (files.tree): nothing here writes. The
    # walks the index's build made (or the last matrix) are good while no file appeared or
    # vanished: the checks asked afresh start from them instead of walking the tree again.
    with index.walks_reused():
        return agent_matrix(folder, settings, agents=agents, known=known)
