"""How the workspace index keeps each agent's memory current when files change (pure engine).

The index hands every batch of changed paths to one `IndexedAgent` per registered agent. Each
says which paths concern it (`concerns`) and, when any does, brings its part of the index up
to date once for the whole batch (`update`), returning the files whose diagnostics may have
changed. A path no agent is concerned with costs only the index's own bookkeeping.

The default for an agent is `CheckedAgent`: its workspace check (`MemoryAgent.check_workspace`)
redone once per batch. Gemini CLI's part is its memory rendered file by file, with its import
graph (`RenderedGeminiMemory`, for an agent `rendered_by_index`): its roots, the folders'
start-up loads and the JIT appendix are kept incrementally, since they are the index's own
data for the hovers, links and diagnostics. `indexed_agent` picks the part for an agent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from memlens.agents import all_agents
from memlens.agents.base import MemoryAgent, WorkspaceCheck
from memlens.agents.gemini.discovery import LoadedFile, MemoryEngine, MemoryLoad
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Tier
from memlens.workspace.graph import ImportGraph

# A batch with more paths than this that concern some agent is answered by one full rebuild:
# past it, re-rendering what each path reaches costs more than indexing afresh (a branch
# switch). Paths that concern no agent do not count. docs/architecture.md says the same.
REBUILD_THRESHOLD = 200

# Who hears how a build goes: (message, percentage or None).
Progress = Callable[[str, int | None], None]


@dataclass
class FolderState:
    """A workspace folder's start-up load (Gemini CLI's, rendered) and its diagnostics."""

    folder: str
    load: MemoryLoad
    diagnostics: list[Diagnostic] = field(default_factory=list)


class WorkspaceIndex(Protocol):
    """What an agent's part may use of the index it belongs to (workspace/index.py's
    `WorkspaceIndex`, which imports this module: the parts never import it back)."""

    settings: MemorySettings
    reader: FileReader
    roots: dict[str, LoadedFile]
    root_diagnostics: dict[str, list[Diagnostic]]
    folder_states: dict[str, FolderState]
    graph: ImportGraph

    def engine(self) -> MemoryEngine: ...
    def check_agent(self, agent: MemoryAgent, found: list[str]) -> None: ...
    def agent_check(self, agent: MemoryAgent) -> WorkspaceCheck: ...
    def inside(self, path: str) -> bool: ...
    def render_root(self, path: str, tier: Tier, engine: MemoryEngine | None = None) -> None: ...
    def is_memory_file(self, path: str) -> bool: ...
    def loaded_paths(self) -> set[str]: ...
    def files_of_roots(self, roots: Iterable[str]) -> set[str]: ...
    def affected_roots(self, paths: Iterable[str]) -> set[str]: ...
    def load_folders(self) -> None: ...
    def reload_folders_using(self, paths: set[str]) -> None: ...


class IndexedAgent(Protocol):
    """One agent's part of the workspace index, kept current batch by batch."""

    agent: MemoryAgent

    def build(self, index: WorkspaceIndex, found: Mapping[str, list[str]],
              progress: Progress | None) -> None:
        """Build this agent's part from scratch, given the workspace walk's files by name
        (every agent's names) and the index's folders' start-up loads."""
        ...

    def concerns(self, index: WorkspaceIndex, path: str) -> bool:
        """A change to `path` can change what this agent reads or its diagnostics."""
        ...

    def update(self, index: WorkspaceIndex, paths: list[str]) -> set[str]:
        """Bring this agent's part up to date after `paths` (each one it is concerned with)
        changed, once for all of them; the files whose diagnostics may have changed."""
        ...


@dataclass
class CheckedAgent:
    """An agent whose part of the index is its workspace check, redone once per batch."""

    agent: MemoryAgent

    def build(self, index: WorkspaceIndex, found: Mapping[str, list[str]],
              progress: Progress | None) -> None:
        index.check_agent(self.agent, [p for n in self.agent.file_names(index.settings)
                                       for p in found.get(n, [])])

    def concerns(self, index: WorkspaceIndex, path: str) -> bool:
        check = index.agent_check(self.agent)
        return (self.agent.claims(path) or path in check.watched
                or (self.agent.owns(path, index.settings) and index.inside(path)))

    def update(self, index: WorkspaceIndex, paths: list[str]) -> set[str]:
        before = index.agent_check(self.agent)
        found = list(before.found)
        for path in paths:
            if not (self.agent.owns(path, index.settings) and index.inside(path)):
                continue
            if index.reader.read(path).content is None:
                found = [p for p in found if p != path]
            elif path not in found:
                found.append(path)
        # An agent's files are few: read them all afresh (an include target outside the
        # watched folders may have appeared or changed meanwhile).
        for watched in before.watched:
            index.reader.forget(watched)
        index.check_agent(self.agent, found)
        after = index.agent_check(self.agent)
        return ({d.path for d in before.diagnostics} | {d.path for d in after.diagnostics}
                | set(paths))


@dataclass
class RenderedGeminiMemory:
    """Gemini CLI's memory as the index renders it: every memory file a root (rendered with
    its imports), the import graph, and each folder's start-up load."""

    agent: MemoryAgent

    def build(self, index: WorkspaceIndex, found: Mapping[str, list[str]],
              progress: Progress | None) -> None:
        """Every file the folders load at start-up, then every memory file the walk found,
        each rendered as a root."""
        tiers: dict[str, Tier] = {}
        for state in index.folder_states.values():
            for loaded in state.load.files:
                if loaded.content is not None:
                    tiers.setdefault(loaded.path, loaded.tier)
        for name in index.settings.context_file_names:
            for path in found.get(name, []):
                tiers.setdefault(path, "jit")
        # One engine for the whole build: its real-path and project-root caches are shared
        # by the 500 roots of a big workspace (a fresh engine per root re-resolved them).
        engine = index.engine()
        total = len(tiers)
        for done, (path, tier) in enumerate(tiers.items()):
            index.render_root(path, tier, engine)
            if progress is not None and done % 50 == 49:
                progress(f"Reading memory files: {done + 1:,} of {total:,}",
                         (done + 1) * 100 // total)

    def concerns(self, index: WorkspaceIndex, path: str) -> bool:
        if any(a.claims(path) for a in all_agents()):
            return False  # another agent's own file: nothing Gemini CLI renders
        return (index.is_memory_file(path) or path in index.roots
                or path in index.graph.forward or path in index.graph.reverse
                or path in index.loaded_paths())

    def update(self, index: WorkspaceIndex, paths: list[str]) -> set[str]:
        before = index.files_of_roots(index.affected_roots(paths))
        structural = False
        rendered: set[str] = set()
        for path in paths:
            content = index.reader.read(path).content
            exists = content is not None
            index.graph.update_file(path, content)
            if not index.is_memory_file(path):
                continue
            if exists != (path in index.roots):
                structural = True  # a memory file appeared or vanished: the load order moves
            if exists and path not in index.roots and index.inside(path):
                index.render_root(path, "jit")
                rendered.add(path)
            elif not exists and path in index.roots:
                del index.roots[path]
                index.root_diagnostics.pop(path, None)
        affected = index.affected_roots(paths)
        for root in affected - rendered:
            index.render_root(root, index.roots[root].tier)
        if structural:
            index.load_folders()
        else:
            index.reload_folders_using(affected | set(paths))
        return before | index.files_of_roots(index.affected_roots(paths)) | set(paths)


def indexed_agent(agent: MemoryAgent) -> IndexedAgent:
    """The index's part for `agent`: its memory rendered (`rendered_by_index`: Gemini CLI's),
    else its workspace check."""
    if agent.rendered_by_index:
        return RenderedGeminiMemory(agent)
    return CheckedAgent(agent)


def unique(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(paths))
