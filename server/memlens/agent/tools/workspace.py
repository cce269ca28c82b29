"""The folders a tool set works in, confined by real path.

Every path a tool touches goes through one `PathPolicy` (real path inside an allowed root,
regular files only, so a symbolic link out of the workspace, a FIFO, socket or device is
refused or skipped the same way by every tool) and the workspace's ignore files. An agent
with narrower rights (the memory manager, skill extraction) subclasses `Workspace` and
overrides its rules: `allow_file`, `listed` and `allow_listing`.
"""

from __future__ import annotations

import os
import posixpath
import stat
import threading
import time
from typing import Any

from memlens.agent.tools.base import ToolRefused
from memlens.agents.gemini.discovery import LoadedFile
from memlens.agents.gemini.ignore import IgnoreFilter
from memlens.agents.gemini.jit import JitSession
from memlens.agents.gemini.render import append_jit_context, concatenate_instructions
from memlens.files.nodecompat import is_subpath, resolve
from memlens.files.pathpolicy import PathPolicy, PathRefused
from memlens.model import MemorySettings

MAX_WALK = 50_000  # files a glob or a search looks at


class Workspace:
    def __init__(self, settings: MemorySettings, roots: list[str], jit: JitSession | None,
                 memory_policy: PathPolicy | None = None):
        self.settings = settings
        self.roots = [resolve(r) for r in roots]
        self.policy = PathPolicy(self.roots)
        # Which memory files JIT context may bring into the chat (default: the same roots).
        self.memory_policy = memory_policy or self.policy
        self.jit = jit
        self.ignores = [IgnoreFilter(r, respect_git_ignore=settings.respect_git_ignore,
                                     respect_gemini_ignore=settings.respect_gemini_ignore)
                        for r in self.roots]

    # --- the rules a narrower workspace overrides -------------------------------------------
    def allow_file(self, tool: str, path: str, real: str, write: bool) -> None:
        """A subclass's own rule for a file a tool reads or writes (raises ToolRefused)."""

    def listed(self, path: str, real: str, is_dir: bool) -> bool:
        """Whether a listing (list_directory, glob, search) shows an entry."""
        return self.visible(path)

    def allow_listing(self, raw: str | None) -> None:
        """A subclass's own rule for the folder a listing or a glob starts from (None: the
        first root); raises ToolRefused."""

    # --- paths ------------------------------------------------------------------------------
    def path(self, raw: Any, what: str = "path") -> str:
        """The absolute path the model means, refused when its real path leaves the roots or
        the workspace's ignore files hide it."""
        if not isinstance(raw, str) or not raw.strip():
            raise ToolRefused(f"Parameter '{what}' must be a non-empty string.")
        path = resolve(self.roots[0], raw.strip())
        if not self.policy.inside(path):
            raise ToolRefused(f"Path is outside the workspace folders: {path}. Allowed: "
                              f"{', '.join(self.roots)}")
        for root, ignore in zip(self.roots, self.ignores, strict=True):
            if is_subpath(root, path) and ignore.active and ignore.ignored(path):
                raise ToolRefused(f"File path '{path}' is ignored by the workspace's ignore "
                                  "files (.geminiignore).")
        return path

    def read_target(self, tool: str, raw: Any, what: str) -> tuple[str, str]:
        """(path, real path) of a regular file inside the roots that `tool` may read."""
        return self._target(tool, raw, what, write=False)

    def write_target(self, tool: str, raw: Any, what: str) -> tuple[str, str]:
        """(path, real path) that a write by `tool` may land on."""
        return self._target(tool, raw, what, write=True)

    def _target(self, tool: str, raw: Any, what: str, *, write: bool) -> tuple[str, str]:
        path = self.path(raw, what)
        check = self.policy.check_write if write else self.policy.check_read
        try:
            real = check(path)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None
        self.allow_file(tool, path, real, write)
        return path, real

    def directory(self, raw: Any, what: str = "path") -> str:
        path = self.path(raw, what)
        try:
            self.policy.check_directory(path)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None
        return path

    def read(self, path: str) -> str:
        """A file's text through the policy (never blocks on a FIFO)."""
        try:
            return self.policy.read_text(path)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None

    def current(self, path: str) -> str | None:
        """What a file to be written holds now (None: it does not exist)."""
        if not os.path.lexists(os.path.realpath(path)):
            return None
        return self.read(path)

    def with_jit(self, output: str, path: str) -> tuple[str, list[LoadedFile]]:
        """A tool's output with the memory JIT loads for `path` appended, exactly as Gemini
        CLI appends it, and the files it loaded."""
        if self.jit is None:
            return output, []
        result = self.jit.discover(path)
        # Only memory whose real path is inside the allowed roots reaches the model.
        files = [f for f in result.files if self.memory_policy.readable(f.path)]
        context = (result.context if len(files) == len(result.files) else
                   concatenate_instructions((f.path, f.content) for f in files))
        return append_jit_context(output, context), files

    def visible(self, path: str) -> bool:
        for root, ignore in zip(self.roots, self.ignores, strict=True):
            if is_subpath(root, path) and ignore.active and ignore.ignored(path):
                return False
        return True

    # --- listing ----------------------------------------------------------------------------
    def entries(self, directory: str) -> list[tuple[str, str, bool]]:
        """(path, real path, is a folder) of a folder's entries that the policy allows: a
        symbolic link only when its real path stays inside the roots, folders and regular
        files only (never a FIFO, socket or device)."""
        out: list[tuple[str, str, bool]] = []
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            return out
        for entry in entries:
            full = posixpath.join(directory, entry.name)
            try:
                if entry.is_symlink():
                    real = os.path.realpath(full)
                    if not self.policy.contains_real(real):
                        continue
                    mode = os.stat(real).st_mode
                    is_dir, regular = stat.S_ISDIR(mode), stat.S_ISREG(mode)
                else:  # the entry's type from the folder listing, no stat needed
                    real = full
                    is_dir = entry.is_dir(follow_symlinks=False)
                    regular = entry.is_file(follow_symlinks=False)
            except (OSError, ValueError):
                continue
            if not (is_dir or regular):
                continue
            if self.listed(full, real, is_dir):
                out.append((full, real, is_dir))
        return out

    def walk(self, base: str, stop: threading.Event | None = None,
             deadline: float | None = None) -> list[str]:
        """Regular files under `base` the policy allows, folder by folder in sorted order;
        folders reached through a symbolic link are not entered (as os.walk does not)."""
        found: list[str] = []
        pending = [base]
        while pending and len(found) <= MAX_WALK:
            if (stop is not None and stop.is_set()) or (deadline is not None
                                                         and time.monotonic() > deadline):
                break
            current = pending.pop()
            entries = sorted(self.entries(current))
            subdirs = []
            for full, real, is_dir in entries:
                name = posixpath.basename(full)
                if is_dir:
                    if real == full and name not in (".git", "node_modules"):
                        subdirs.append(full)
                else:
                    found.append(full)
            pending.extend(reversed(subdirs))
        return found
