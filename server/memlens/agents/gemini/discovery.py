"""Finding and loading memory exactly as Gemini CLI v0.43.0 does, in jit and classic modes.

Classic mode (`loadServerHierarchicalMemory`): global files, the upward walk (which reads the
git root's *parent* too), the downward breadth-first search under a folder budget, extension
files. Jit mode (`MemoryContextManager.refresh`): global, extension, the upward walk from each
workspace folder to its boundary root, the private project memory; subfolders load later
(`jit.py`). Paths are de-duplicated by (device, inode) before reading.
"""

from __future__ import annotations

import os
import posixpath
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from memlens.agents.gemini import search_trace
from memlens.agents.gemini.ignore import IgnoreFilter
from memlens.agents.gemini.imports import ImportEvent, ImportProcessor, RealPaths
from memlens.agents.gemini.jsonc import read_json_file
from memlens.agents.gemini.projects import PROJECT_MEMORY_INDEX, project_memory_dir
from memlens.agents.gemini.render import concatenate_instructions
from memlens.agents.gemini.trust import decide_trust
from memlens.files import tree
from memlens.files.fsread import FileReader, ReadResult, file_identity, is_readable
from memlens.files.nodecompat import dirname, is_subpath, js_sorted, js_trim, resolve, to_absolute
from memlens.files.roots import ProjectRootFinder
from memlens.model import MemorySettings, is_context_file, join_context_name
from memlens.protocol.memory import HierarchicalMemory
from memlens.protocol.wire import Mode, Tier
from memlens.text.references import ImportToken

GEMINI_DIR = ".gemini"
PROGRESS_EVERY = 1000  # folders between two progress reports of a walk
# flattenMemory's section order (the preview), then files loaded just in time.
_DISPLAY_ORDER = {"global": 0, "userProjectMemory": 1, "extension": 2, "project": 3, "jit": 4}


@dataclass
class LoadedFile:
    path: str
    tier: Tier
    read: ReadResult
    content: str | None  # after import processing; None when Gemini CLI gets nothing
    events: list[ImportEvent] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    truncated: bool = False


@dataclass
class SearchReport:
    """One downward search: where it started and whether the folder budget ran out."""

    root: str
    filename: str
    max_dirs: int
    scanned: int
    pending: list[str]  # folders queued but never read
    unreadable: list[tuple[str, str]]

    @property
    def exhausted(self) -> bool:
        return bool(self.pending)


@dataclass
class AboveRootRead:
    path: str
    start_dir: str
    project_root: str | None


@dataclass
class MemoryLoad:
    mode: Mode
    cwd: str
    trusted: bool
    trust_source: str | None
    paths: list[str]  # Gemini CLI's filePaths, in load order
    files: list[LoadedFile]
    tiers: dict[str, list[str]]
    memory: HierarchicalMemory
    searches: list[SearchReport] = field(default_factory=list)
    above_root: list[AboveRootRead] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    truncated: bool = False

    @property
    def file_count(self) -> int:
        return sum(1 for f in self.files if f.content is not None)

    @property
    def workspace_dirs(self) -> list[str]:
        return self.tiers.get("_workspace", [])


def _name_key(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")


def _sort_as_strcmp(names: list[str]) -> None:
    """Sort as strcmp sorts the names' bytes. For ASCII names (nearly all) that is plain string
    order; UTF-8 keeps code-point order too, but an undecodable byte (a surrogate escape) does
    not, so anything else sorts by its bytes."""
    if len(names) < 2:
        return
    if "".join(names).isascii():
        names.sort()
    else:
        names.sort(key=_name_key)


def _from_listing(listed: tree.Listing, names: set[str], skip_dirs: frozenset[str],
                  include_special: bool, subdirs: list[str], matched: list[str]) -> None:
    """The search's reading of one folder's entries, from the run's listing."""
    subdirs += [d for d in listed.real_dirs if d not in skip_dirs] if skip_dirs else \
        listed.real_dirs
    _matches(listed, names, include_special, matched)


def _matches(listed: tree.Listing, names: set[str], include_special: bool,
             matched: list[str]) -> None:
    kinds = listed.kinds
    # the names the folder holds (in no order: the caller sorts them)
    for name in names.intersection(kinds):
        kind = kinds[name]
        if kind != tree.DIR and kind != tree.UNKNOWN and (include_special or kind == tree.FILE):
            matched.append(name)


def _replay(trace: search_trace.Trace, root: str, label: str, names: set[str],
            ignore: IgnoreFilter | None, max_dirs: int | None, include_special: bool,
            progress: Callable[[int], None] | None) -> tuple[list[str], SearchReport]:
    """`MemoryEngine.downward_search` from a finished search's trace (search_trace.py): the
    same folders in the same order, each asked only for `names`."""
    use_ignore = ignore is not None and ignore.active
    found: list[str] = []
    scanned = 0
    for current, listed in trace.visited:
        scanned += 1
        if progress is not None and scanned % PROGRESS_EVERY == 0:
            progress(scanned)
        if listed is None:
            continue
        matched: list[str] = []
        _matches(listed, names, include_special, matched)
        if not matched:
            continue
        _sort_as_strcmp(matched)
        prefix = current + "/" if current != "/" else "/"
        if use_ignore and ignore is not None:
            verdicts = (ignore.ignored_entries(current, matched) if current != "/"
                        else [ignore.ignored(prefix + n) for n in matched])
            found += [prefix + n for n, out in zip(matched, verdicts, strict=True) if not out]
        else:
            found += [prefix + n for n in matched]
    return found, SearchReport(root, label, -1 if max_dirs is None else max_dirs, scanned, [],
                               list(trace.unreadable))


def dedupe_by_identity(paths: Iterable[str]) -> list[str]:
    """First path per (device, inode); paths that cannot be stat'ed are kept."""
    seen: set[tuple[int, int]] = set()
    out: list[str] = []
    for path in dict.fromkeys(paths):
        identity = file_identity(path)
        if identity is not None:
            if identity in seen:
                continue
            seen.add(identity)
        out.append(path)
    return out


class MemoryEngine:
    """Everything one run needs: settings, one file reader, one import processor."""

    def __init__(self, settings: MemorySettings, reader: FileReader | None = None):
        self.settings = settings
        self.reader = reader or FileReader(max_bytes=settings.max_context_chars * 4 + 4)
        self.root_finder = ProjectRootFinder(settings.memory_boundary_markers)
        self.real_paths = RealPaths()
        # Characters of preview text left (memlens.maxContextChars): files render in the
        # order the preview shows them, each bounded by what is left (import diagnostics
        # still cover every file: the walk goes on without building text).
        self._budget = settings.max_context_chars
        # False when nobody reads the import events (a plain-text preview).
        self.collect_events = True
        self.token_cache: dict[str, tuple[str, list[ImportToken]]] = {}

    # --- paths -------------------------------------------------------------------------
    @property
    def home(self) -> str:
        return resolve(self.settings.home)

    @property
    def global_dir(self) -> str:
        return posixpath.join(self.home, GEMINI_DIR)

    def is_candidate(self, path: str) -> bool:
        """A path Gemini CLI goes on to read as a context file: one it can access (0.43 then
        fails to read a folder, EISDIR); 0.44+ skips a folder named like a context file."""
        if not is_readable(path):
            return False
        return self.settings.gemini_profile == "0.43" or not os.path.isdir(path)

    def global_paths(self) -> list[str]:
        out = []
        for name in self.settings.context_file_names:
            path = join_context_name(self.global_dir, name)
            if self.is_candidate(path):
                out.append(path)
        return out

    def extension_paths(self, cwd: str) -> list[str]:
        candidates = [resolve(cwd, p) for p in self.settings.extension_context_files]
        if self.settings.discover_gemini_extensions:
            candidates += self._installed_extension_files()
        unique: dict[str, str] = {}
        for path in candidates:
            unique.setdefault(path.lower(), path)
        return js_sorted(list(unique.values()))

    def _installed_extension_files(self) -> list[str]:
        """Context files of extensions installed under HOME/.gemini/extensions."""
        base = posixpath.join(self.global_dir, "extensions")
        try:
            names = sorted(os.listdir(base))
        except OSError:
            return []
        out = []
        for name in names:
            ext_dir = posixpath.join(base, name)
            manifest = read_json_file(posixpath.join(ext_dir, "gemini-extension.json"))
            if not isinstance(manifest, dict):
                continue
            declared = manifest.get("contextFileName")
            files = ([declared] if isinstance(declared, str)
                     else [f for f in declared if isinstance(f, str)]
                     if isinstance(declared, list) else ["GEMINI.md"])
            for file_name in files:
                path = posixpath.join(ext_dir, file_name)
                if os.path.exists(path):
                    out.append(path)
        return out

    def project_root(self, start: str) -> str | None:
        return self.root_finder.find(start)

    # --- reading -----------------------------------------------------------------------
    def load_file(self, path: str, tier: Tier, import_format: str | None = None) -> LoadedFile:
        """`readGeminiMdFiles` for one path: read, then expand its imports."""
        read = self.reader.read(path)
        if read.content is None:
            return LoadedFile(path, tier, read, None)
        processor = ImportProcessor(self.reader, self.root_finder, max_chars=max(self._budget, 0),
                                    real_paths=self.real_paths,
                                    collect_events=self.collect_events,
                                    token_cache=self.token_cache)
        result = processor.process(read.content, dirname(path),
                                   import_format="flat" if (import_format or
                                                            self.settings.import_format) == "flat"
                                   else "tree",
                                   source_file=path)
        content = result.content
        truncated = result.truncated or read.truncated
        # What the file takes in the preview at the least (its block shows it trimmed).
        self._budget -= len(js_trim(content)) if not truncated else len(content)
        return LoadedFile(path, tier, read, content, result.events, result.logs, truncated)

    def _read_all(self, ordered: list[tuple[str, Tier]]) -> list[LoadedFile]:
        """Load in the order the preview shows the tiers (so the text budget is spent where
        the preview is cut), returned in load order."""
        loaded: list[LoadedFile | None] = [None] * len(ordered)
        for k in sorted(range(len(ordered)), key=lambda k: _DISPLAY_ORDER[ordered[k][1]]):
            loaded[k] = self.load_file(*ordered[k])
        return [f for f in loaded if f is not None]

    # --- trust -------------------------------------------------------------------------
    def trust_for(self, cwd: str) -> tuple[bool, str | None]:
        return decide_trust(cwd, self.home, explicit=self.settings.trusted,
                            editor=self.settings.editor_trusted,
                            folder_trust_enabled=self.settings.folder_trust_enabled)

    # --- classic mode --------------------------------------------------------------------
    def upward_classic(self, directory: str, filename: str) -> tuple[list[str], list[str]]:
        """Upward paths root→leaf, plus those read above the project root (the quirk)."""
        start = resolve(directory)
        project_root = self.project_root(start)
        stop = dirname(project_root) if project_root else dirname(self.home)
        global_file = join_context_name(self.global_dir, filename)
        found: list[str] = []
        above: list[str] = []
        current = start
        while current and current != dirname(current):
            if current == self.global_dir:
                break
            candidate = join_context_name(current, filename)
            if candidate != global_file and is_readable(candidate):
                found.insert(0, candidate)
                outside = (current == stop) if project_root else current != start
                if outside:
                    above.append(candidate)
            if current == stop:
                break
            current = dirname(current)
        return found, above

    def downward_search(self, root: str, filename: str | tuple[str, ...],
                        ignore: IgnoreFilter | None, max_dirs: int | None, *,
                        include_special: bool = False,
                        skip_dirs: frozenset[str] = frozenset(),
                        progress: Callable[[int], None] | None = None
                        ) -> tuple[list[str], SearchReport]:
        """`bfsFileSearch`: breadth-first, Dirent types (no symlinks), a folder budget.

        Several names may be searched in one walk (the folders visited do not depend on the
        names, so each name's matches come out in the order a search for it alone gives).
        `progress` hears the number of folders read, every `PROGRESS_EVERY`."""
        names = {filename} if isinstance(filename, str) else set(filename)
        label = filename if isinstance(filename, str) else ", ".join(filename)
        shared = tree.active()  # one listing per folder per run (files/tree.py)
        if shared:
            known = search_trace.find(root, ignore, skip_dirs, max_dirs)
            if known is not None:
                return _replay(known, root, label, names, ignore, max_dirs, include_special,
                               progress)
        trace = search_trace.Trace() if shared else None
        queue: deque[str] = deque([root])
        visited: set[str] = set()
        found: list[str] = []
        unreadable: list[tuple[str, str]] = []
        scanned = 0
        use_ignore = ignore is not None and ignore.active
        while queue and (max_dirs is None or scanned < max_dirs):
            current = queue.popleft()
            if current in visited:
                continue
            visited.add(current)
            scanned += 1
            if progress is not None and scanned % PROGRESS_EVERY == 0:
                progress(scanned)
            subdirs: list[str] = []
            matched: list[str] = []
            try:
                if trace is not None:
                    listed = tree.listing(current)
                    trace.visited.append((current, listed))
                    _from_listing(listed, names, skip_dirs, include_special, subdirs, matched)
                else:
                    with os.scandir(current) as it:
                        for entry in it:
                            name = entry.name
                            try:
                                if entry.is_dir(follow_symlinks=False):
                                    if name not in skip_dirs:
                                        subdirs.append(name)
                                elif name in names and (
                                        include_special or entry.is_file(follow_symlinks=False)):
                                    matched.append(name)
                            except OSError:
                                continue
            except OSError as err:
                unreadable.append((current, err.strerror or str(err)))
                if trace is not None:
                    trace.visited.append((current, None))
                continue
            # libuv hands entries over in strcmp order; folders queue and matches are found in
            # that order (the two lists are separate, so each is sorted on its own).
            _sort_as_strcmp(subdirs)
            _sort_as_strcmp(matched)
            prefix = current + "/" if current != "/" else "/"
            if use_ignore and ignore is not None and current != "/":
                # the folder's entries share its rules: asked once for all of them
                verdicts = ignore.ignored_entries(current, matched + subdirs)
                cut = len(matched)
                found += [prefix + n for n, out in zip(matched, verdicts[:cut], strict=True)
                          if not out]
                kept = [n for n, out in zip(subdirs, verdicts[cut:], strict=True) if not out]
            else:
                for name in matched:
                    full = prefix + name
                    if not (use_ignore and ignore is not None and ignore.ignored(full)):
                        found.append(full)
                kept = [n for n in subdirs
                        if not (use_ignore and ignore is not None and ignore.ignored(prefix + n))]
            queue += [prefix + n for n in kept]
            if trace is not None:
                trace.dir_names.update(kept)
        pending = [d for d in dict.fromkeys(queue) if d not in visited]
        if trace is not None and not pending:
            trace.unreadable = list(unreadable)
            search_trace.keep(root, ignore, skip_dirs, trace)
        report = SearchReport(root, label, -1 if max_dirs is None else max_dirs, scanned,
                              pending, unreadable)
        return found, report

    def load_classic(self, cwd: str, *, include_dirs: list[str] | None = None,
                     ignore_root: str | None = None) -> MemoryLoad:
        cwd = resolve(cwd)
        trusted, source = self.trust_for(cwd)
        includes = include_dirs if include_dirs is not None else (
            [resolve(cwd, d) for d in self.settings.include_directories]
            if self.settings.load_memory_from_include_directories else [])
        scan_cwd = "" if _same_real(cwd, self.home) else cwd
        dirs = list(dict.fromkeys([*includes, scan_cwd]))
        max_dirs = self.settings.discovery_max_dirs
        budget = None if max_dirs < 0 else max_dirs
        ignore = IgnoreFilter(ignore_root or cwd,
                              respect_git_ignore=self.settings.respect_git_ignore,
                              respect_gemini_ignore=self.settings.respect_gemini_ignore)
        global_set: dict[str, None] = {}
        project_set: dict[str, None] = {}
        searches: list[SearchReport] = []
        above: list[AboveRootRead] = []
        for directory in dirs:
            # toAbsolutePath: a backslash in a folder's name is read as a separator.
            start = to_absolute(directory) if directory else ""
            for name in self.settings.context_file_names:
                for path in self.global_paths_for(name):
                    global_set[path] = None
                if not (start and trusted):
                    continue
                upward, above_paths = self.upward_classic(start, name)
                for path in upward:
                    project_set[path] = None
                root = self.project_root(start)
                above += [AboveRootRead(p, start, root) for p in above_paths]
                downward, report = self.downward_search(start, name, ignore, budget,
                                                        skip_dirs=self.classic_skip_dirs(cwd))
                searches.append(report)
                for path in js_sorted(downward):
                    project_set[to_absolute(path)] = None
        extension = self.extension_paths(cwd)
        all_paths = dedupe_by_identity([*global_set, *project_set, *extension])
        tier_of: dict[str, Tier] = {}
        for path in extension:
            tier_of.setdefault(path, "extension")
        for path in project_set:
            tier_of[path] = "project"
        for path in global_set:
            tier_of[path] = "global"
        files = self._read_all([(p, tier_of[p]) for p in all_paths])
        # Each tier renders its own list: a file both global and found by the search (HOME
        # inside the working folder, `~/.gemini` an include directory) shows in both.
        return self._assemble("classic", cwd, trusted, source, all_paths, files, searches,
                              above, dirs, tier_lists={"global": list(global_set),
                                                       "project": list(project_set),
                                                       "extension": extension})

    def classic_skip_dirs(self, cwd: str) -> frozenset[str]:
        """Folders the classic downward search never enters. Gemini CLI's file service (made
        for the working folder) ignores every `.git` folder when that folder is inside a git
        repository (a `.git` there or above) and git-ignore rules are on, which is their
        default in its settings: so `.git` uses up none of `discoveryMaxDirs` (class G2).
        Only a user who turns `respectGitIgnore` off explicitly sees `.git` counted."""
        if not self.settings.skips_git_folders or not in_git_repository(cwd):
            return frozenset()
        return frozenset({".git"})

    def global_paths_for(self, name: str) -> list[str]:
        path = join_context_name(self.global_dir, name)
        return [path] if is_readable(path) else []

    # --- jit mode --------------------------------------------------------------------
    def upward_to_ceiling(self, start: str, ceiling: str) -> list[str]:
        """`findUpwardGeminiFiles`: root→leaf, every name per folder, ceiling inclusive."""
        found: list[list[str]] = []
        current = resolve(start)
        names = self.settings.context_file_names
        while True:
            if current == self.global_dir:
                break
            here = [join_context_name(current, n) for n in names]
            here = [p for p in here if self.is_candidate(p)]
            if here:
                found.insert(0, here)
            if current == ceiling or current == dirname(current):
                break
            current = dirname(current)
        return [p for group in found for p in group]

    def environment_paths(self, roots: list[str]) -> list[str]:
        paths: list[str] = []
        for root in roots:
            start = to_absolute(root)
            ceiling = self.project_root(start) or start
            paths += self.upward_to_ceiling(start, ceiling)
        return js_sorted(dedupe_by_identity(paths))

    def user_project_memory_paths(self, cwd: str) -> list[str]:
        memory_dir = project_memory_dir(self.home, cwd)
        if memory_dir is None:
            return []
        preferred = posixpath.join(memory_dir, PROJECT_MEMORY_INDEX)
        if is_readable(preferred):
            return [preferred]
        return [p for p in (join_context_name(memory_dir, n)
                            for n in self.settings.context_file_names) if is_readable(p)]

    def workspace_roots(self, cwd: str) -> list[str]:
        return list(dict.fromkeys(
            [cwd, *(resolve(cwd, d) for d in self.settings.include_directories)]))

    def load_jit(self, cwd: str) -> MemoryLoad:
        cwd = resolve(cwd)
        trusted, source = self.trust_for(cwd)
        roots = self.workspace_roots(cwd)
        global_paths = self.global_paths()
        extension = self.extension_paths(cwd)
        environment = self.environment_paths(roots) if trusted else []
        user_project = self.user_project_memory_paths(cwd)
        groups: list[tuple[Tier, list[str]]] = [
            ("global", global_paths), ("extension", extension),
            ("project", environment), ("userProjectMemory", user_project)]
        all_paths = dedupe_by_identity(p for _, paths in groups for p in paths)
        tier_of: dict[str, Tier] = {}
        for tier, paths in groups:
            for path in paths:
                tier_of.setdefault(path, tier)
        files = self._read_all([(p, tier_of[p]) for p in all_paths])
        # Each tier renders its own list (a context file name given twice shows the global
        # file twice).
        # Its file list holds the files it read (a folder named like a context file is
        # looked at, but not listed).
        read = {f.path for f in files if f.content is not None}
        return self._assemble("jit", cwd, trusted, source,
                              [p for p in all_paths if p in read], files, [], [], roots,
                              tier_lists={tier: paths for tier, paths in groups})

    def load(self, cwd: str) -> MemoryLoad:
        # The 0.44+ profile has no classic mode (its settings always say jit).
        return self.load_jit(cwd) if self.settings.jit_context else self.load_classic(cwd)

    # --- result --------------------------------------------------------------------------
    def _assemble(self, mode: Mode, cwd: str, trusted: bool, source: str | None,
                  paths: list[str], files: list[LoadedFile], searches: list[SearchReport],
                  above: list[AboveRootRead], workspace: list[str],
                  tier_lists: dict[str, list[str]] | None = None) -> MemoryLoad:
        by_tier: dict[str, list[LoadedFile]] = {}
        for loaded in files:
            by_tier.setdefault(loaded.tier, []).append(loaded)
        if tier_lists is not None:
            by_path = {f.path: f for f in files}
            by_tier = {tier: [by_path[p] for p in paths if p in by_path]
                       for tier, paths in tier_lists.items()}

        def text(tier: str) -> str:
            group = by_tier.get(tier, [])
            return concatenate_instructions(((f.path, f.content) for f in group),
                                            open_ended={f.path for f in group if f.truncated})

        memory = HierarchicalMemory.model_validate({
            "global": text("global"), "extension": text("extension"),
            "project": text("project"), "userProjectMemory": text("userProjectMemory")})
        tiers: dict[str, list[str]] = {}
        for loaded in files:
            tiers.setdefault(loaded.tier, []).append(loaded.path)
        tiers["_workspace"] = [d for d in workspace if d]
        return MemoryLoad(mode, cwd, trusted, source, paths, files, tiers, memory, searches,
                          above, truncated=any(f.truncated for f in files))


def in_git_repository(directory: str) -> bool:
    """Gemini CLI's `isGitRepository`: a `.git` (folder or file) in `directory` or above."""
    current = resolve(directory)
    while True:
        if os.path.exists(posixpath.join(current, ".git")):
            return True
        parent = dirname(current)
        if parent == current:
            return False
        current = parent


def _same_real(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def is_memory_name(path: str, settings: MemorySettings) -> bool:
    return is_context_file(path, settings.context_file_names)


def inside_any(path: str, roots: Iterable[str]) -> bool:
    return any(is_subpath(r, path) for r in roots)
