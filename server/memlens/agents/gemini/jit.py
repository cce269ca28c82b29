"""Just-in-time subfolder memory (`loadJitSubdirectoryMemory`), with the per-session loaded set.

When a tool (or the editor) touches a path, Gemini CLI walks up from it to the boundary root of
the deepest workspace folder holding it and injects the memory files it has not loaded yet, each
at most once per session.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from memlens.agents.gemini.discovery import LoadedFile, MemoryEngine, MemoryLoad, dedupe_by_identity
from memlens.agents.gemini.ignore import IgnoreFilter
from memlens.agents.gemini.imports import RealPaths
from memlens.agents.gemini.render import append_jit_context, concatenate_instructions
from memlens.files.fsread import file_identity
from memlens.files.nodecompat import dirname, is_subpath, resolve, to_absolute

# Gemini CLI 0.44+ (`hasBlockedPathSegment`): a path under the workspace with one of these
# segments (case-insensitive, a `:stream` and trailing spaces and dots cut off, Windows short
# names too) is not "within the workspace", so every file tool refuses it.
_BLOCKED_SEGMENTS = frozenset({".git", ".env", "node_modules"})
_BLOCKED_SHORT_NAMES = re.compile(
    r"^(?:(?:git|gi[0-9a-f]{4})~\d+|(?:env|en[0-9a-f]{4})~\d+|(?:node_m|no[0-9a-f]{4})~\d+"
    r"|(?:gha-cr|gh[0-9a-f]{4})~\d+\.jso(?:n)?)$")


def has_blocked_segment(relative: str) -> bool:
    for segment in re.split(r"[/\\]", relative):
        clean = segment.split(":")[0].rstrip(" .").lower()
        if clean in _BLOCKED_SEGMENTS or _BLOCKED_SHORT_NAMES.match(clean):
            return True
        if clean.startswith("gha-creds-") and clean.endswith(".json"):
            return True
    return False


@dataclass
class JitResult:
    target: str
    files: list[LoadedFile]
    context: str  # concatenated blocks, '' when nothing new

    @property
    def appendix(self) -> str:
        """What Gemini CLI appends to the tool output (starting with the JIT prefix)."""
        return append_jit_context("", self.context)


@dataclass
class JitSession:
    engine: MemoryEngine
    trusted_roots: list[str]
    trusted: bool = True
    loaded_paths: set[str] = field(default_factory=set)
    loaded_identities: set[tuple[int, int]] = field(default_factory=set)
    # The folder Gemini CLI started in: its read_file tool applies the ignore files from there
    # (None: no read_file check, as when the editor touches a path).
    cwd: str | None = None

    @classmethod
    def after_startup(cls, engine: MemoryEngine, startup: MemoryLoad) -> JitSession:
        """A session whose loaded set holds what startup memory already loaded."""
        session = cls(engine, startup.workspace_dirs or [startup.cwd], startup.trusted,
                      cwd=startup.cwd)
        for loaded in startup.files:
            if loaded.content is not None:
                session.mark_loaded(loaded.path)
        return session

    def mark_loaded(self, path: str) -> None:
        self.loaded_paths.add(path)
        identity = file_identity(path)
        if identity is not None:
            self.loaded_identities.add(identity)

    def best_root(self, target: str) -> str | None:
        # toAbsolutePath on the root found (its backslashes become separators, as Gemini
        # CLI reads it for the ceiling).
        candidates = [to_absolute(r) for r in self.trusted_roots
                      if is_subpath(resolve(r), target)]
        return max(candidates, key=len) if candidates else None

    def discover(self, target: str) -> JitResult:
        """Files newly loaded for `target`; marks them loaded. Never raises."""
        target = resolve(target)
        try:
            files = self._discover(target)
        except (OSError, ValueError):
            files = []
        context = concatenate_instructions((f.path, f.content) for f in files)
        return JitResult(target, files, context)

    def preview(self, target: str) -> JitResult:
        """What `discover` would load, without marking anything loaded."""
        paths, identities = set(self.loaded_paths), set(self.loaded_identities)
        try:
            return self.discover(target)
        finally:
            self.loaded_paths, self.loaded_identities = paths, identities

    def _really_inside(self, target: str) -> bool:
        """Gemini CLI's tools refuse a path whose real path leaves the workspace folders, and
        (0.44+) one under `node_modules`, `.git` or `.env` in the first folder holding it."""
        real = os.path.realpath(target)
        for root in self.trusted_roots:
            real_root = os.path.realpath(root)
            if is_subpath(real_root, real):
                return (self.engine.settings.gemini_profile == "0.43"
                        or not has_blocked_segment(os.path.relpath(real, real_root)))
        return False

    def _refused_by_read_file(self, target: str) -> bool:
        """Gemini CLI's read_file refuses a file its ignore files ignore (`.gitignore`,
        `.geminiignore` from the folder it started in, as context.fileFiltering says), by the
        path it is given and (0.44+) by its real path; a refused read appends nothing, so no
        memory loads just in time. (A folder target stands for list_directory and a missing
        file for write_file creating it: both load the folder's memory.)"""
        if self.cwd is None or not os.path.isfile(target):
            return False
        settings = self.engine.settings
        ignore = IgnoreFilter(self.cwd, respect_git_ignore=settings.respect_git_ignore,
                              respect_gemini_ignore=settings.respect_gemini_ignore)
        if not ignore.active:
            return False
        real = settings.gemini_profile != "0.43" and ignore.ignored(os.path.realpath(target))
        return ignore.ignored(target) or real

    def _discover(self, target: str) -> list[LoadedFile]:
        if not self.trusted:
            return []
        root = self.best_root(target)
        if root is None or not self._really_inside(target) or self._refused_by_read_file(target):
            return []
        # A session lives as long as the editor: real paths are looked up afresh each time
        # (a file may have become a symbolic link since).
        self.engine.real_paths = RealPaths()
        ceiling = self.engine.project_root(root) or root
        # toAbsolutePath: a backslash in the target's path is read as a separator.
        target = to_absolute(target)
        start = target if os.path.isdir(target) else dirname(target)
        candidates = dedupe_by_identity(self.engine.upward_to_ceiling(start, ceiling))
        fresh = []
        for path in candidates:
            identity = file_identity(path)
            if path in self.loaded_paths or (identity is not None
                                             and identity in self.loaded_identities):
                continue
            fresh.append(path)
        loaded = [self.engine.load_file(p, "jit", import_format="tree") for p in fresh]
        loaded = [f for f in loaded if f.content is not None]
        for f in loaded:
            self.mark_loaded(f.path)
        return loaded
