"""`instruction-conflict` and `agents-disagree` in the editor (docs/reference.md "Rules that
disagree"): the squiggles on both lines, with related information pointing at the other.

They need every agent's reading of a workspace folder (workspace/conflicts.py through the
matrix, whose readings the index keeps per agent), so they are computed off the event loop
once a memory file opens, changes or is saved: a change that arrives meanwhile supersedes the
result, and one more computation covers both; then the files that gain or lose one are
published again. Until the first result, none are shown."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from memlens.protocol.memory import Diagnostic
from memlens.workspace.conflicts import CONFLICT, DISAGREE

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer
    from memlens.workspace.service import WorkspaceService


class ConflictRefresh:
    """The conflicts of every workspace folder, recomputed after a batch of memory changes."""

    # Keystrokes this close together make one computation.
    DELAY_SECONDS = 0.3

    def __init__(self, ls: MemlensServer):
        self.ls = ls
        self.epoch = 0
        self.task: asyncio.Task[None] | None = None

    def request(self) -> None:
        self.epoch += 1
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.DELAY_SECONDS)
            epoch, service = self.epoch, self.ls.service
            found = await asyncio.to_thread(conflicts_by_path, service)
            if epoch == self.epoch and service is self.ls.service:
                break  # nothing newer: this result stands
        before = set(self.ls.conflict_diagnostics)
        self.ls.conflict_diagnostics = found
        self.ls.publish(before | set(found))


def conflicts_by_path(service: WorkspaceService) -> dict[str, list[Diagnostic]]:
    """Each file's conflict diagnostics, from every workspace folder's matrix (kept per
    generation: the panel and this share it)."""
    out: dict[str, list[Diagnostic]] = {}
    for folder in service.folders:
        matrix = service.matrix(folder, service.settings_for(folder))
        for d in matrix.diagnostics:
            if d.code in (CONFLICT, DISAGREE):
                out.setdefault(d.path, []).append(d)
    return out


def _may_hold_rules(ls: MemlensServer, path: str) -> bool:
    """A file whose change may change a rule: an agent's by name, a context file, or any
    Markdown (rules folders, includes and imports have no name of their own)."""
    from memlens.agents import owner_of

    return (path.endswith((".md", ".mdc", ".markdown")) or ls.service.is_memory_file(path)
            or owner_of(path, ls.service.settings_for(path)) is not None)


def register(server: MemlensServer) -> None:
    refresh = ConflictRefresh(server)

    def on_documents(event: str, paths: list[str]) -> None:
        if server.service.folders and any(_may_hold_rules(server, p) for p in paths):
            refresh.request()

    server.document_listeners.append(on_documents)
