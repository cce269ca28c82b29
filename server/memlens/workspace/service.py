"""The workspace the language server serves: its folders, each with the settings and trust of
its own (pure engine, no LSP).

Each folder's settings are resolved as Gemini CLI resolves them when started there: the user's
settings, that folder's `.gemini/settings.json` (when that folder is trusted), then the
editor's values for the folder. Folders whose settings come out equal share one
`WorkspaceIndex` (one walk, one budget, one copy of the user's memory, as before multi-root
settings); a folder whose settings differ gets an index of its own.

A file is served by the index of the deepest folder holding it. A file outside every folder
(the user's global GEMINI.md, a file opened from elsewhere) is served by the *default folder*:
the first workspace folder, the one VS Code calls the workspace's root (`rootUri`). Requests
that name no file (the chat, the skills view) also work in the default folder unless they
say which file or folder they are about.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memlens.agent_versions import InstalledAgent, detect_installed
from memlens.agents.gemini.jit import JitSession
from memlens.agents.gemini.settings import load_settings
from memlens.files.nodecompat import is_subpath, resolve
from memlens.model import MemorySettings
from memlens.protocol.matrix import MatrixResult
from memlens.protocol.memory import Diagnostic
from memlens.workspace.answers import AnswerCache
from memlens.workspace.effective import EffectiveState
from memlens.workspace.index import WorkspaceIndex
from memlens.workspace.index_agents import FolderState

if TYPE_CHECKING:
    from memlens.agents.base import AgentJitSession, MemoryAgent

# A server without any folder: its settings are resolved for `/` (no workspace settings
# file is read there), its index has no folder, and it is filed under "" (no folder's key).
NO_FOLDER_CWD = "/"
NO_FOLDER = ""


@dataclass
class EditorSettings:
    """The editor's `memlens.*` values: the window's, and what it sets for single folders
    (per-folder values, per-folder trust) on top."""

    window: dict[str, Any] = field(default_factory=dict)
    folders: dict[str, dict[str, Any]] = field(default_factory=dict)

    def for_folder(self, folder: str | None) -> dict[str, Any]:
        """The values for `folder` (None: for no folder, the window's)."""
        if folder is None:
            return dict(self.window)
        return {**self.window, **self.folders.get(folder, {})}


class WorkspaceService:
    """Every workspace folder with the settings, trust, index and JIT sessions serving it."""

    def __init__(self, folders: list[str], editor: EditorSettings | None = None):
        self.folders = [resolve(f) for f in folders]
        self.editor = editor or EditorSettings()
        # The editor's unsaved buffers (path → text): every index reads them over the disk.
        self.buffers: dict[str, str] = {}
        self._settings: dict[str, MemorySettings] = {}
        self._index_of: dict[str, WorkspaceIndex] = {}
        self._indexes: list[WorkspaceIndex] = []
        self.jit_sessions: dict[str, JitSession] = {}
        # The other agents' JIT sessions, by (agent id, workspace folder).
        self.agent_jit_sessions: dict[tuple[str, str], AgentJitSession] = {}
        # The agents found on PATH (docs/reference.md "Which agent, which version"), detected once:
        # at the first build, re-checked when the server restarts. `detect` is replaced in tests.
        self.installed: dict[str, InstalledAgent] | None = None
        self.detect: Callable[[], dict[str, InstalledAgent]] = detect_installed
        # Called after every build with the settings in force (the language server frees
        # memory and reports dropped settings).
        self.after_build: Callable[[list[MemorySettings]], None] | None = None
        # What each agent sends at start per folder, as last saved (lsp/context_diff.py).
        self.effective = EffectiveState()
        # Moves with every build, buffer change and batch of changed files: what is kept in
        # `answers` (the agent matrix) is good for one generation.
        self.generation = 0
        self.answers = AnswerCache()

    # --- folders ----------------------------------------------------------------------------
    @property
    def default_folder(self) -> str | None:
        """The folder serving files outside every folder and requests that name no file."""
        return next(iter(self.folders), None)

    def folder_for(self, path: str) -> str | None:
        """The deepest workspace folder holding `path` (None when outside every folder)."""
        holders = [f for f in self.folders if is_subpath(f, path)]
        return max(holders, key=len) if holders else None

    def folder_or_default(self, path: str | None) -> str | None:
        """The folder holding `path`; the default folder when `path` is None or outside."""
        folder = self.folder_for(path) if path is not None else None
        return folder or self.default_folder

    def _wanted_settings(self) -> dict[str, MemorySettings]:
        """Each folder's settings, resolved afresh from every source."""
        if self.installed is None:
            self.installed = self.detect()
        if not self.folders:
            return {NO_FOLDER: load_settings(NO_FOLDER_CWD, editor=self.editor.window,
                                             installed=self.installed)}
        return {folder: load_settings(folder, editor=self.editor.for_folder(folder),
                                      installed=self.installed)
                for folder in self.folders}

    # --- indexes ----------------------------------------------------------------------------
    def indexes(self) -> list[WorkspaceIndex]:
        """Each index once, in the order of the first folder each serves."""
        if not self._indexes:
            self.rebuild()
        return list(self._indexes)

    def index_of_folder(self, folder: str | None) -> WorkspaceIndex:
        indexes = self.indexes()
        return self._index_of.get(folder or NO_FOLDER, indexes[0])

    def index_for(self, path: str) -> WorkspaceIndex:
        """The index serving `path`: its folder's, else the default folder's."""
        return self.index_of_folder(self.folder_or_default(path))

    def settings_for(self, path: str) -> MemorySettings:
        return self.index_for(path).settings

    def folder_state(self, folder: str) -> FolderState | None:
        return self.index_of_folder(folder).folder_states.get(folder)

    def trusted(self, folder: str) -> bool:
        state = self.folder_state(folder)
        return bool(state and state.load.trusted)

    def ensure(self) -> bool:
        """Build the indexes unless they exist for the current settings (keeps the JIT
        sessions); True when they were rebuilt."""
        wanted = self._wanted_settings()
        if self._indexes and wanted == self._settings:
            return False
        self.rebuild(wanted)
        return True

    def rebuild(self, wanted: dict[str, MemorySettings] | None = None) -> None:
        """Index every folder from scratch, one index per distinct settings."""
        wanted = wanted or self._wanted_settings()
        # The old indexes are dropped before the build (the build is synchronous), so two
        # full copies never live at once.
        self._indexes, self._index_of = [], {}
        self.forget_sessions()
        groups: list[tuple[MemorySettings, list[str]]] = []
        for folder, settings in wanted.items():
            group = next((g for g in groups if g[0] == settings), None)
            if group is None:
                groups.append((settings, [folder]))
            else:
                group[1].append(folder)
        for settings, folders in groups:
            index = WorkspaceIndex(settings, [] if folders == [NO_FOLDER] else folders)
            index.overrides.update(self.buffers)
            index.build()
            self._indexes.append(index)
            self._index_of.update(dict.fromkeys(folders, index))
        self._settings = wanted
        self.generation += 1
        if self.after_build is not None:
            self.after_build(self.settings_in_force())

    def forget_sessions(self) -> None:
        self.jit_sessions.clear()
        self.agent_jit_sessions.clear()

    # --- changes ----------------------------------------------------------------------------
    def tracks(self, path: str) -> bool:
        """Whether any index cares about `path`'s text (a memory file, an import, a skill,
        another agent's memory)."""
        from memlens.agents import owner_of

        return posixpath.basename(path) == "SKILL.md" or any(
            i.is_memory_file(path) or path in i.graph.forward or path in i.graph.reverse
            or owner_of(path, i.settings) is not None for i in self.indexes())

    def is_memory_file(self, path: str) -> bool:
        """A context file by the names of the folder serving it."""
        return self.index_for(path).is_memory_file(path)

    def set_text(self, path: str, text: str | None) -> set[str]:
        """An editor buffer changed (None: closed, back to the disk). Every index hears it: a
        file in one folder may be imported from another. Returns the touched files."""
        if text is None:
            self.buffers.pop(path, None)
        else:
            self.buffers[path] = text
        self.generation += 1
        touched: set[str] = set()
        for index in self.indexes():
            touched |= index.set_text(path, text)
        return touched

    def forget_buffer(self, path: str) -> None:
        """A buffer gone without being closed (its file was renamed): the disk counts again
        (the caller says which files changed)."""
        self.buffers.pop(path, None)
        self.generation += 1
        for index in self._indexes:
            index.overrides.pop(path, None)

    def file_changed(self, path: str) -> set[str]:
        return self.files_changed([path])

    def files_changed(self, paths: list[str]) -> set[str]:
        """A batch of files changed on disk: each index updates once for all of them
        (WorkspaceIndex.files_changed). Returns the touched files."""
        self.generation += 1
        touched: set[str] = set()
        for index in self.indexes():
            touched |= index.files_changed(paths)
        return touched

    def matrix(self, folder: str, settings: MemorySettings,
               agents: Sequence[str] | None = None) -> MatrixResult:
        """The agent matrix of `folder` (workspace/matrix.py) with `settings` (the folder's:
        `settings_for`), kept until the workspace changes (workspace/answers.py)."""
        from memlens.workspace.matrix_known import index_matrix

        return self.answers.matrix(folder, agents, self.generation, lambda: index_matrix(
            self.index_of_folder(folder), folder, settings, agents))

    # --- queries ----------------------------------------------------------------------------
    def diagnostics_for(self, path: str) -> list[Diagnostic]:
        """`path`'s diagnostics from the index serving it, those of the agents shown where it
        is (workspace/shown.py: the folder holding it, else the default folder); a file
        outside every folder (the user's global memory) gets those of every index that reads
        it, each once."""
        shown = self.agents_shown_for(path)
        if self.folder_for(path) is not None or len(self.indexes()) == 1:
            return self.index_for(path).diagnostics_for(path, shown)
        found: dict[tuple[int, int, str], Diagnostic] = {}
        for index in self.indexes():
            for d in index.diagnostics_for(path, shown):
                found.setdefault((d.line, d.col, d.code), d)
        return sorted(found.values(), key=Diagnostic.sort_key)

    def agents_shown_for(self, path: str) -> set[str]:
        """The agents shown where `path` is: its folder's, else the default folder's."""
        from memlens.workspace.shown import agents_shown

        return set(agents_shown(self, self.folder_or_default(path)).shown)

    def diagnosed_paths(self) -> set[str]:
        paths: set[str] = set()
        for index in self.indexes():
            paths |= index.diagnosed_paths()
        return paths

    def memory_files(self) -> set[str]:
        """Every memory file indexed (each rendered with its imports)."""
        return {path for index in self.indexes() for path in index.roots}

    def notices(self) -> list[str]:
        return list(dict.fromkeys(n for index in self.indexes() for n in index.notices()))

    def walk_stopped(self) -> bool:
        return any(index.index_stops for index in self.indexes())

    def settings_in_force(self) -> list[MemorySettings]:
        """Each distinct settings the folders are served with."""
        return [index.settings for index in self.indexes()]

    def homes(self) -> list[str]:
        return list(dict.fromkeys(index.settings.home for index in self.indexes()))

    def agents_with_files(self, folder: str | None) -> list[str]:
        """The agents whose memory files the workspace folder `folder` holds (the index's walk:
        in a trusted folder; else, and without a folder, a walk of its own), in the
        registry's order (workspace/agents_here.py)."""
        from memlens.workspace.agents_here import agents_of_files, agents_with_files

        index = self.index_of_folder(folder)
        if folder is None or folder not in index.folder_states:
            return agents_with_files([folder], index.settings) if folder else []
        state = index.folder_states[folder]
        if not state.load.trusted or folder in index.refused:
            return agents_with_files([folder], index.settings, index.reader)
        inside = [p for p in index.found if is_subpath(folder, p)
                  and self.folder_for(p) == folder]
        return agents_of_files([folder], inside, index.settings)

    def jit_session_for(self, path: str) -> JitSession | None:
        folder = self.folder_for(path)
        if folder is None:
            return None
        if folder not in self.jit_sessions:
            session = self.index_of_folder(folder).jit_session(folder)
            if session is None:
                return None
            self.jit_sessions[folder] = session
        return self.jit_sessions[folder]

    def agent_jit_session_for(self, agent: MemoryAgent, path: str, *, fresh: bool = False
                              ) -> AgentJitSession | None:
        """An agent's session in the workspace folder holding `path`, every agent through the
        one interface: Gemini CLI's from the index (its folder's start-up load, the editor's
        unsaved text; the chat shares that session), when JIT context is on; any other when
        it has memory in that folder's index (its own files, rules, or the user's). The
        editor's session is kept (each file loads once in it); `fresh`: a session just started
        there, not kept (a preview: nothing is marked loaded in the editor's session)."""
        from memlens.agents.gemini.agent import GeminiJitSession

        folder = self.folder_for(path)
        if folder is None:
            return None
        index = self.index_of_folder(folder)
        if agent.rendered_by_index:
            if not index.settings.jit_context:
                return None
            gemini = index.jit_session(folder) if fresh else self.jit_session_for(path)
            return None if gemini is None else GeminiJitSession(gemini)
        check = index.agent_check(agent)
        if not check.has_memory:
            return None
        if fresh:
            return agent.jit_session(index.settings, folder, index.reader, check)
        key = (agent.id, folder)
        if key not in self.agent_jit_sessions:
            session = agent.jit_session(index.settings, folder, index.reader, check)
            if session is None:
                return None
            self.agent_jit_sessions[key] = session
        return self.agent_jit_sessions[key]

