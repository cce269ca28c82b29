"""The incremental workspace index the language server keeps (pure engine, no LSP).

It holds every memory file of every tier as a *root* (rendered with its imports, the events
kept), the static import graph, each workspace folder's startup load, and the diagnostics per
root. An edit re-renders only the edited file and the roots that reach it through the graph.
Changed files come in batches (`files_changed`): each agent's part of the index
(index_agents.py) updates once per batch, past REBUILD_THRESHOLD paths the index is rebuilt.
"""

from __future__ import annotations

import bisect
import logging
import os
import posixpath
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from memlens.agents import all_agents, checked_agents, workspace_file_names
from memlens.agents.base import MemoryAgent, WorkspaceCheck
from memlens.agents.gemini.diagnostics import (
    DiagnosticSink,
    add_discovery_diagnostics,
    add_file_diagnostics,
    add_import_diagnostics,
    add_index_stops,
    index_stop_message,
)
from memlens.agents.gemini.discovery import LoadedFile, MemoryEngine, SearchReport
from memlens.agents.gemini.imports import Outcome
from memlens.agents.gemini.jit import JitResult, JitSession
from memlens.agents.gemini.render import append_jit_context, render_prompt_memory
from memlens.files import tree
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import is_subpath, resolve
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic, ShowResult
from memlens.protocol.wire import Tier
from memlens.text.hidden import file_diagnostics
from memlens.workspace.agents_here import agents_of_files, chosen_ids
from memlens.workspace.graph import ImportGraph
from memlens.workspace.index_agents import (
    REBUILD_THRESHOLD,
    FolderState,
    IndexedAgent,
    indexed_agent,
    unique,
)
from memlens.workspace.queries import broad_folder, flattened, truncate, workspace_files_named
from memlens.workspace.readers import readers_of

log = logging.getLogger("memlens.workspace.index")

# Who hears how a build is going: (message, percentage or None). The language server sets it
# around a build to send `$/progress`; nobody listens otherwise.
BUILD_PROGRESS: ContextVar[Callable[[str, int | None], None] | None] = ContextVar(
    "memlens_build_progress", default=None)

# Files whose change decides what every walk sees (a batch holding one rebuilds the index).
IGNORE_FILES = (".gitignore", ".geminiignore")

BROAD_NOTE = ("\n[Memory Lens: {folder} is {what}, so its subfolders were not indexed (a walk "
              "of {scope}); set memlens.allowBroadWorkspace to index it anyway, or open a "
              "project folder]")


class WorkspaceIndex:
    def __init__(self, settings: MemorySettings, folders: list[str]):
        self.settings = settings
        self.folders = [resolve(f) for f in folders]
        self.overrides: dict[str, str] = {}
        self.reader = FileReader(max_bytes=settings.max_context_chars * 4 + 4,
                                 overrides=self.overrides)
        self.graph = ImportGraph()
        self.roots: dict[str, LoadedFile] = {}
        self.root_diagnostics: dict[str, list[Diagnostic]] = {}
        self.folder_states: dict[str, FolderState] = {}
        # Each agent's verdicts on its skills (workspace/skills.py), by agent id: shown only
        # where that agent is.
        self.skill_problems: dict[str, list[Diagnostic]] = {}
        # Each checked agent's memory here (`agents.checked_agents`, by agent id): its files
        # the walk found, what it reads, its problems.
        self.agent_checks: dict[str, WorkspaceCheck] = {}
        # Folders not walked because they are `/` or HOME (folder → what it is), and roots
        # whose walk stopped at memlens.maxIndexedFolders.
        self.refused: dict[str, str] = {}
        self.index_stops: list[SearchReport] = []
        self.walk_problems: list[Diagnostic] = []
        # What the chosen agents' profiles add
        # (docs/reference.md "Which agent, which version", "Diagnostics"): the memory files each
        # will not read (`agent-ignores-file`) and `agent-version-unverified`; `found` is every
        # agent's memory file the walk found, which those checks look at.
        self.profile_problems: list[Diagnostic] = []
        self.found: list[str] = []
        # hidden-text / hidden-comment by file, for every file some agent reads (hidden.py),
        # and the cache behind it: (path, text, reading agents) → its diagnostics.
        self.hidden_problems: dict[str, list[Diagnostic]] = {}
        self._hidden_cache: dict[tuple[str, str, tuple[str, ...]], list[Diagnostic]] = {}
        # Each file some agent reads: its text and those agents (the check above is theirs);
        # and the same check for fewer of them, the agents shown where the file is
        # (`hidden_for`), by (path, text, agent ids).
        self.hidden_readers: dict[str, tuple[str, list[MemoryAgent]]] = {}
        self._hidden_shown: dict[tuple[str, str, tuple[str, ...]], list[Diagnostic]] = {}
        # Diagnostics by file, built on the first query after a change (a workspace pull asks
        # for every file: scanning every diagnostic per file was quadratic).
        # Each with the agent whose own check it is (None: the index's own).
        self._by_path: dict[str, list[tuple[str | None, Diagnostic]]] | None = None
        # Bumped by every build and every batch of changes: what is cached per index
        # (workspace/answers.py) is good for one generation.
        self.generation = 0
        # Each agent's part, kept current batch by batch (index_agents.py); how many batches
        # ended in a full rebuild.
        self.parts: list[IndexedAgent] = [indexed_agent(a) for a in all_agents()]
        self.rebuilds = 0
        self._loaded: tuple[int, set[str]] = (-1, set())
        # The generation each agent's part last changed at, and the one at which a file
        # appeared or vanished (`tree_generation`): what is kept per agent (`kept`, the
        # matrix's readings and checks) is good while both stay. The files under each folder
        # a glob-scoped rule may match (reading.folder_files), listed once per tree generation.
        self.part_generations: dict[str, int] = {}
        self.tree_generation = 0
        self._listings: dict[str, list[str]] = {}
        self._listed: set[str] = set()
        self.kept: dict[Hashable, tuple[Hashable, object]] = {}
        # The walks of the tree the last build (or matrix) made (files.tree.kept_walks), and
        # the tree generation they are good for.
        self.walks: tuple[int, dict[Hashable, object]] = (-1, {})

    # --- building -------------------------------------------------------------------------
    def engine(self) -> MemoryEngine:
        return MemoryEngine(self.settings, self.reader)

    def notices(self) -> list[str]:
        """What the user should be told about this build (refused folders, a stopped walk)."""
        out = [f"Memory Lens did not index {folder}: it is {what}. Open a project folder, or "
               "set memlens.allowBroadWorkspace to index it anyway."
               for folder, what in self.refused.items()]
        out += [index_stop_message(report) for report in self.index_stops]
        return out

    def build(self) -> None:
        """Index everything from scratch (start-up, `memlens/refresh`, settings change). Its
        walks share one listing of each folder (nothing is written meanwhile), and what they
        found is kept for the matrix while no file appears or vanishes (`walks`)."""
        with tree.one_walk():
            self._build()
            self.walks = (self.tree_generation, tree.kept_walks())

    @contextmanager
    def walks_reused(self) -> Iterator[None]:
        """A read-only run (files.tree.one_walk) that starts from the walks of the last build
        or run while no file appeared or vanished since, and keeps its own for the next."""
        generation, walks = self.walks
        with tree.one_walk(kept=walks if generation == self.tree_generation else None):
            yield
            self.walks = (self.tree_generation, tree.kept_walks())

    def _build(self) -> None:
        progress = BUILD_PROGRESS.get()
        self._by_path = None
        self.reader = FileReader(max_bytes=self.settings.max_context_chars * 4 + 4,
                                 overrides=self.overrides)
        self.graph = ImportGraph()
        self.roots.clear()
        self.root_diagnostics.clear()
        self.refused = {f: what for f in self.folders
                        if (what := broad_folder(f, self.settings)) is not None}
        for folder, what in self.refused.items():
            log.warning("not indexing %s: it is %s (memlens.allowBroadWorkspace)", folder,
                        what)
        self.load_folders()
        engine = self.engine()
        trusted_folders = [s.folder for s in self.folder_states.values()
                           if s.load.trusted and s.folder not in self.refused]
        # One walk finds every agent's memory files (GEMINI.md, CLAUDE.md, AGENTS.md...).
        names = workspace_file_names(self.settings)
        self.index_stops = []
        by_name = workspace_files_named(
            engine, trusted_folders, names, stops=self.index_stops,
            progress=None if progress is None else (
                lambda n: progress(f"Scanning folders: {n:,} read", None)))
        for report in self.index_stops:
            log.warning("stopped walking %s after %d folders (memlens.maxIndexedFolders)",
                        report.root, report.max_dirs)
        sink = DiagnosticSink(engine)
        add_index_stops(sink, self.index_stops)
        for folder, what in self.refused.items():
            sink.add_folder(folder, "warning", "workspace-not-indexed",
                            f"Memory Lens did not index the subfolders of {folder}: it is "
                            f"{what}, and walking it reads everything below. Open a project "
                            "folder, or set memlens.allowBroadWorkspace to index it anyway")
        self.walk_problems = sink.sorted()
        self._check_skills()
        # Each agent's part from the one walk (Gemini CLI's: its roots rendered; another
        # agent's: its workspace check).
        for part in self.parts:
            part.build(self, by_name, progress)
        self.found = list(dict.fromkeys(p for n in names for p in by_name[n]))
        # What the agents' views walk, walked now over this build's listings (kept for the
        # matrix with the rest: `walks`), for the agents in use and those whose files are in
        # each folder (the matrix's columns, agents_here.agents_shown, but for files above).
        for folder in trusted_folders:
            here = {*chosen_ids(self.settings),
                    *agents_of_files([folder], [p for p in self.found if is_subpath(folder, p)],
                                     self.settings)}
            for agent in all_agents():
                if agent.id in here:
                    agent.walk_for_views(folder)
        self._check_profiles()
        self._hidden_cache.clear()
        self._check_hidden()
        self.generation += 1
        self._tree_moved()
        self.part_generations = {part.agent.id: self.generation for part in self.parts}

    def _check_profiles(self) -> None:
        """What the chosen agents' profiles say about the workspace (see `profile_problems`)."""
        from memlens.workspace.queries import profile_diagnostics

        folders = [s.folder for s in self.folder_states.values()
                   if s.load.trusted and s.folder not in self.refused]
        self.profile_problems = profile_diagnostics(self.settings, folders, self.found,
                                                    self.reader)

    def _recheck_profiles(self, paths: list[str]) -> set[str]:
        """After a batch: the profiles' problems again, once, when any path can change them
        (a memory file of any agent, an ignore file, a Claude Code rules folder's file)."""
        names = set(workspace_file_names(self.settings))
        mine = [p for p in paths if posixpath.basename(p) in names
                or posixpath.basename(p) in IGNORE_FILES or "/.claude/rules/" in p]
        if not mine:
            return set()
        for path in mine:
            exists = self.reader.read(path).content is not None
            if exists and path not in self.found and self.inside(path):
                self.found.append(path)
            elif not exists and path in self.found:
                self.found.remove(path)
        before = {d.path for d in self.profile_problems}
        self._check_profiles()
        return before | {d.path for d in self.profile_problems}

    def _check_hidden(self) -> set[str]:
        """Re-check every file some agent reads for hidden content; the files whose
        diagnostics changed."""
        files = [*self.roots.values(),
                 *(f for s in self.folder_states.values() for f in s.load.files)]
        readers = readers_of(files, [(a, self.agent_check(a)) for a in checked_agents()])
        found: dict[str, list[Diagnostic]] = {}
        cache: dict[tuple[str, str, tuple[str, ...]], list[Diagnostic]] = {}
        readers_before = {p: (t, [a.id for a in agents])
                          for p, (t, agents) in self.hidden_readers.items()}
        self.hidden_readers = {}
        self._hidden_shown = {}
        for path, agents in readers.items():
            text = self.reader.read(path).content
            if not text:
                continue
            self.hidden_readers[path] = (text, list(agents))
            key = (path, text, tuple(a.id for a in agents))
            diagnostics = self._hidden_cache.get(key)
            if diagnostics is None:
                diagnostics = file_diagnostics(path, text, agents)
            cache[key] = diagnostics
            if diagnostics:
                found[path] = diagnostics
        self._hidden_cache = cache
        changed = {p for p in found.keys() | self.hidden_problems.keys()
                   if found.get(p) != self.hidden_problems.get(p)}
        # A file whose readers changed may say something else for the agents shown, though
        # the check for all of them says the same.
        readers_after = {p: (t, [a.id for a in agents])
                         for p, (t, agents) in self.hidden_readers.items()}
        changed |= {p for p in readers_before.keys() | readers_after.keys()
                    if readers_before.get(p) != readers_after.get(p)}
        self.hidden_problems = found
        return changed

    def _check_skills(self) -> None:
        from memlens.workspace.skills import SKILL_AGENTS, skill_diagnostics

        self.skill_problems = {agent: [d for folder, state in self.folder_states.items()
                                       for d in skill_diagnostics(
                                           agent, self.settings, folder,
                                           trusted=state.load.trusted, buffers=self.overrides)]
                               for agent in SKILL_AGENTS}

    def skill_paths(self) -> set[str]:
        """Every SKILL.md some agent has a verdict on."""
        return {d.path for problems in self.skill_problems.values() for d in problems}

    def check_agent(self, agent: MemoryAgent, found: list[str]) -> None:
        self.agent_checks[agent.id] = agent.check_workspace(
            self.settings, list(self.folder_states), found, self.reader)

    def agent_check(self, agent: MemoryAgent) -> WorkspaceCheck:
        """A checked agent's memory in the workspace (empty before the first build, and for
        an agent the index renders itself)."""
        return self.agent_checks.get(agent.id) or WorkspaceCheck()

    def _folder_engine(self, folder: str) -> MemoryEngine:
        """The engine for a folder's startup load. In a refused folder (`/`, HOME) classic
        mode's downward search is held to memlens.maxIndexedFolders even when
        context.discoveryMaxDirs sets no cap."""
        cap = self.settings.max_indexed_folders
        wanted = self.settings.discovery_max_dirs
        if folder in self.refused and not self.settings.jit_context and not 0 <= wanted <= cap:
            return MemoryEngine(self.settings.model_copy(update={"discovery_max_dirs": cap}),
                                self.reader)
        return self.engine()

    def load_folders(self) -> None:
        self.folder_states.clear()
        for folder in self.folders:
            engine = self._folder_engine(folder)
            load = engine.load(folder)
            sink = DiagnosticSink(engine)
            add_discovery_diagnostics(sink, load, engine)
            self.folder_states[folder] = FolderState(folder, load, sink.sorted())

    def render_root(self, path: str, tier: Tier, engine: MemoryEngine | None = None) -> None:
        engine = engine or self.engine()
        fmt = "tree" if tier == "jit" else None
        loaded = engine.load_file(path, tier, import_format=fmt)
        self.roots[path] = loaded
        self.graph.update_file(path, loaded.read.content)
        for event in loaded.events:
            if event.outcome is Outcome.IMPORTED and event.target not in self.graph.forward:
                self.graph.update_file(event.target, self.reader.read(event.target).content)
        sink = DiagnosticSink(engine)
        add_import_diagnostics(sink, [loaded])
        add_file_diagnostics(sink, [loaded], self.settings.large_file_bytes)
        self.root_diagnostics[path] = sink.sorted()

    # --- changes ------------------------------------------------------------------------
    def is_memory_file(self, path: str) -> bool:
        return posixpath.basename(path) in self.settings.context_file_names

    def inside(self, path: str) -> bool:
        """`path` is in one of the index's workspace folders."""
        return any(is_subpath(f, path) for f in self.folders)

    def set_text(self, path: str, text: str | None) -> set[str]:
        """An editor buffer changed (None: closed, back to the disk). Returns touched files."""
        if text is None:
            self.overrides.pop(path, None)
        else:
            self.overrides[path] = text
        # A buffer never adds or removes a file on the disk, which is all the walks see (a
        # saved or deleted file comes as a disk change).
        return self.files_changed([path], moves_tree=False)

    def file_changed(self, path: str) -> set[str]:
        """`path` changed (buffer or disk): a batch of one."""
        return self.files_changed([path])

    def files_changed(self, paths: Iterable[str], *, moves_tree: bool = True) -> set[str]:
        """A batch of paths changed (buffer or disk): each agent concerned by any of them
        brings its part up to date once (index_agents.py); past REBUILD_THRESHOLD such paths,
        or when an ignore file changed, one full rebuild. Returns the files whose diagnostics
        may have changed."""
        changed = unique(paths)
        if not changed:
            return set()
        self._by_path = None
        changed = unique([*changed, *self._known_below(changed)])
        for path in changed:
            self.reader.forget(path)
        parts = [(part, [p for p in changed if part.concerns(self, p)]) for part in self.parts]
        relevant = {p for _, mine in parts for p in mine}
        self.generation += 1
        if len(relevant) > REBUILD_THRESHOLD or any(
                posixpath.basename(p) in IGNORE_FILES for p in changed):
            # An ignore file decides what every walk sees: only a rebuild is sure.
            before = self.diagnosed_paths()
            self.build()
            self.rebuilds += 1
            return before | self.diagnosed_paths() | set(changed)
        if moves_tree and self._moves_tree(changed):
            self._tree_moved()
        touched = set(changed)
        for part, mine in parts:
            if mine:
                self.part_generations[part.agent.id] = self.generation
                touched |= part.update(self, mine)
        touched |= self._recheck_profiles(changed)
        if any(posixpath.basename(p) == "SKILL.md" for p in changed):
            touched |= self.skill_paths()
            self._check_skills()
            touched |= self.skill_paths()
        if relevant:
            touched |= self._check_hidden()
        return touched

    def _tree_moved(self) -> None:
        self.tree_generation = self.generation
        self._listings.clear()
        self._listed.clear()

    def _moves_tree(self, paths: list[str]) -> bool:
        """Some path of a batch is a file that appeared or vanished, or a folder: which files
        exist moved (an edited file's text did not). Without a listing, say it did."""
        if not self._listings:
            return True
        for path in paths:
            if os.path.isdir(path) or os.path.lexists(path) != (path in self._listed):
                return True
        return False

    def files_under(self, folder: str) -> list[str]:
        """The files under `folder` a tool may read (reading.folder_files), listed once per
        tree generation."""
        from memlens.workspace.reading import folder_files

        listing = self._listings.get(folder)
        if listing is None:
            listing = self._listings[folder] = list(folder_files(folder))
            self._listed.update(listing)
        return listing

    def _known_below(self, paths: list[str]) -> list[str]:
        """The indexed files inside any of `paths` that is a folder no longer there (a
        deleted folder is reported once, not file by file)."""
        gone = [p for p in paths if p not in self.overrides and not os.path.lexists(p)]
        if not gone:
            return []
        known = sorted({*self.roots, *self.graph.forward, *self.graph.reverse, *self.found,
                        *(p for c in self.agent_checks.values()
                          for p in (*c.found, *c.sources, *c.watched)),
                        *self.loaded_paths()})
        out: list[str] = []
        for folder in gone:
            prefix = folder.rstrip("/") + "/"
            start = bisect.bisect_left(known, prefix)
            for path in known[start:]:
                if not path.startswith(prefix):
                    break
                out.append(path)
        return out

    def loaded_paths(self) -> set[str]:
        """Every file some folder's start-up load reads (Gemini CLI's), cached per
        generation."""
        if self._loaded[0] != self.generation:
            self._loaded = (self.generation, {p for s in self.folder_states.values()
                                              for p in s.load.paths})
        return self._loaded[1]

    def reload_folders_using(self, paths: set[str]) -> None:
        """Recompute the startup load of each folder whose merged context includes `paths`."""
        for folder, state in list(self.folder_states.items()):
            if paths & set(state.load.paths):
                engine = self._folder_engine(folder)
                load = engine.load(folder)
                sink = DiagnosticSink(engine)
                add_discovery_diagnostics(sink, load, engine)
                self.folder_states[folder] = FolderState(folder, load, sink.sorted())

    def affected_roots(self, paths: Iterable[str]) -> set[str]:
        """The roots whose rendering reads any of `paths` (themselves included)."""
        out: set[str] = set()
        for path in paths:
            out |= {path} | self.graph.dependents(path)
        return out & set(self.roots)

    def files_of_roots(self, roots: Iterable[str]) -> set[str]:
        files: set[str] = set()
        for root in roots:
            files.add(root)
            files.update(d.path for d in self.root_diagnostics.get(root, []))
        return files

    # --- queries --------------------------------------------------------------------------
    def diagnostics_for(self, path: str, shown: Collection[str] | None = None
                        ) -> list[Diagnostic]:
        """`path`'s diagnostics; with `shown`, only those of the agents shown where it is
        (workspace/shown.py): another agent's own checks are left out, and the hidden
        content check names only the shown agents that read the file."""
        if self._by_path is None:
            found: dict[str, list[tuple[str | None, Diagnostic]]] = {}
            sources: list[tuple[str | None, list[Diagnostic]]] = [
                *((None, g) for g in self.root_diagnostics.values()),
                *((None, s.diagnostics) for s in self.folder_states.values()),
                *self.skill_problems.items(),
                *((agent_id, c.diagnostics) for agent_id, c in self.agent_checks.items()),
                (None, self.walk_problems), (None, self.profile_problems)]
            for agent, group in sources:
                for d in group:
                    found.setdefault(d.path, []).append((agent, d))
            self._by_path = found
        kept: dict[tuple[int, int, str], Diagnostic] = {}
        for agent, d in self._by_path.get(path, []):
            if agent is None or shown is None or agent in shown:
                kept.setdefault((d.line, d.col, d.code), d)
        for d in self.hidden_for(path, shown):
            kept.setdefault((d.line, d.col, d.code), d)
        return sorted(kept.values(), key=Diagnostic.sort_key)

    def hidden_for(self, path: str, shown: Collection[str] | None) -> list[Diagnostic]:
        """`hidden-text` / `hidden-comment` in `path` for the agents of `shown` that read it
        (None: every agent that reads it)."""
        text, readers = self.hidden_readers.get(path, ("", []))
        mine = readers if shown is None else [a for a in readers if a.id in shown]
        if len(mine) == len(readers):
            return list(self.hidden_problems.get(path, []))
        if not mine:
            return []
        key = (path, text, tuple(a.id for a in mine))
        found = self._hidden_shown.get(key)
        if found is None:
            found = self._hidden_shown[key] = file_diagnostics(path, text, mine)
        return list(found)

    def rendered_check(self, receivers: Collection[str] | None = None) -> list[Diagnostic]:
        """Gemini CLI's check of the workspace as the index keeps it — its folders' loads,
        every memory file rendered, the walk's and its skills' problems, hidden content in
        what the agents of `receivers` read (None: every agent) — which is `queries.check`'s
        for a folder indexed alone (tests/test_matrix_index.py): the matrix's Gemini CLI
        column without a second check."""
        found: dict[tuple[str, int, int, str], Diagnostic] = {}
        for group in [*self.root_diagnostics.values(),
                      *(s.diagnostics for s in self.folder_states.values()),
                      self.skill_problems.get("gemini", []), self.walk_problems,
                      *(self.hidden_for(p, receivers) for p in self.hidden_readers)]:
            for d in group:
                found.setdefault((d.path, d.line, d.col, d.code), d)
        return sorted(found.values(), key=Diagnostic.sort_key)

    def diagnosed_paths(self) -> set[str]:
        """Every file the index has an opinion on (its diagnostics may be empty)."""
        paths = {d.path for group in self.root_diagnostics.values() for d in group}
        paths |= {d.path for s in self.folder_states.values() for d in s.diagnostics}
        paths |= self.skill_paths()
        paths |= {d.path for c in self.agent_checks.values() for d in c.diagnostics}
        paths |= {d.path for d in self.walk_problems}
        paths |= {d.path for d in self.profile_problems}
        paths |= set(self.hidden_problems)
        return paths | set(self.roots)

    def all_diagnostics(self) -> dict[str, list[Diagnostic]]:
        return {p: self.diagnostics_for(p) for p in sorted(self.diagnosed_paths())}

    def indexed_files(self) -> list[str]:
        return sorted(set(self.roots) | set(self.graph.forward))

    def folder_for(self, path: str) -> str | None:
        """The deepest workspace folder holding `path` (None when outside every folder)."""
        holders = [f for f in self.folders if is_subpath(f, path)]
        return max(holders, key=len) if holders else None

    def folder_state(self, path: str) -> FolderState | None:
        # Outside every folder: this index's first folder. The language server hands such a
        # file to the index of its default folder, which is that index's first (workspace.py).
        folder = self.folder_for(path) or (self.folders[0] if self.folders else None)
        return self.folder_states.get(folder) if folder else None

    def show(self, folder: str) -> ShowResult:
        """What `memlens show` prints for a workspace folder, from the index's buffers."""
        state = self.folder_states.get(folder)
        load = state.load if state else self.engine().load(folder)
        m = load.memory
        content, truncated = truncate(flattened(load), self.settings.max_context_chars)
        if folder in self.refused:
            scope = "the whole file system" if self.refused[folder].endswith("root") else (
                "every project you have")
            content += BROAD_NOTE.format(folder=folder, what=self.refused[folder], scope=scope)
        system, session = render_prompt_memory(load.mode, m.global_, m.user_project_memory,
                                               m.extension, m.project,
                                               self.settings.context_file_names)
        return ShowResult(cwd=load.cwd, mode=load.mode, trusted=load.trusted, files=load.paths,
                          file_count=load.file_count, content=content, hierarchical=m,
                          prompt=system, session_memory=session,
                          truncated=truncated or load.truncated,
                          diagnostics=[*(state.diagnostics if state else []),
                                       *(d for d in self.walk_problems if d.path == folder)])

    def jit_session(self, folder: str) -> JitSession | None:
        state = self.folder_states.get(folder)
        if state is None:
            return None
        return JitSession.after_startup(self.engine(), state.load)

    def merged_for(self, path: str) -> tuple[str, list[str], JitResult | None]:
        """Startup memory plus what JIT adds for `path`: (text, files, jit part)."""
        state = self.folder_state(path)
        if state is None:
            return "", [], None
        text = flattened(state.load)
        files = [f.path for f in state.load.files if f.content is not None]
        jit: JitResult | None = None
        if self.settings.jit_context:
            session = JitSession.after_startup(self.engine(), state.load)
            jit = session.preview(path)
            text = append_jit_context(text, jit.context)
            files += [f.path for f in jit.files]
        return text, files, jit

