"""Ignore files applied where Gemini CLI's FileDiscoveryService applies them (gitignore rules).

The memory search asks `shouldIgnoreFile(path)` for directories too, as if they were files, so a
pattern with a trailing slash (`secret/`) does not stop the search entering `secret` (only the
files inside are filtered), while `secret` does. We reproduce that by always matching the path
without a trailing slash.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import TYPE_CHECKING

from .fsread import FileReader

if TYPE_CHECKING:
    import pathspec


def _in_git_repository(directory: str) -> bool:
    current = posixpath.normpath(directory)
    while True:
        if os.path.exists(posixpath.join(current, ".git")):
            return True
        parent = posixpath.dirname(current)
        if parent == current:
            return False
        current = parent


def _load_spec(path: str) -> pathspec.GitIgnoreSpec | None:
    # Through FileReader: an ignore file that is a FIFO or a device is never opened (opening a
    # FIFO blocks until a writer comes), and a huge one costs a bounded read.
    read = FileReader(max_bytes=4_000_000).read(path)
    if read.content is None:
        return None
    # Lines as Gemini CLI splits them; patterns match case-insensitively (the `ignore`
    # package's default), so both sides are lower-cased.
    lines = [line.lower() for line in re.split(r"\r\n|\n|\r", read.content)]
    import pathspec  # only when an ignore file exists (it costs start-up time)

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError):  # a malformed pattern
        return None


class IgnoreFilter:
    """`.geminiignore` at the root, and (when enabled) the `.gitignore` chain below it."""

    def __init__(self, root: str, *, respect_git_ignore: bool, respect_gemini_ignore: bool):
        self.root = root
        # Git's rules (and `.git` itself) apply only inside a git repository, a `.git` in the
        # root or above, as Gemini CLI's file service decides.
        self.respect_git_ignore = respect_git_ignore and _in_git_repository(root)
        self.gemini = (_load_spec(posixpath.join(root, ".geminiignore"))
                       if respect_gemini_ignore else None)
        self._git_specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._git_exclude = (_load_spec(posixpath.join(root, ".git", "info", "exclude"))
                             if respect_git_ignore else None)

    @property
    def active(self) -> bool:
        return self.gemini is not None or self.respect_git_ignore

    def _git_spec(self, directory: str) -> pathspec.GitIgnoreSpec | None:
        if directory not in self._git_specs:
            self._git_specs[directory] = _load_spec(posixpath.join(directory, ".gitignore"))
        return self._git_specs[directory]

    def ignored(self, path: str) -> bool:
        prefix = self.root.rstrip("/") + "/"
        if not path.startswith(prefix):
            return False
        # relative as Gemini CLI makes it: backslashes become slashes, and case is ignored
        rel = path[len(prefix):].replace("\\", "/").lower()
        if self.gemini is not None and self.gemini.match_file(rel):
            return True
        if not self.respect_git_ignore:
            return False
        if rel == ".git" or rel.startswith(".git/"):
            return True
        verdict: bool | None = None
        if self._git_exclude is not None and self._git_exclude.match_file(rel):
            verdict = True
        # Deeper .gitignore files take precedence; each matches paths relative to its folder.
        parts = rel.split("/")
        directory = self.root
        for depth in range(len(parts)):
            spec = self._git_spec(directory)
            if spec is not None:
                sub = "/".join(parts[depth:])
                result = spec.check_file(sub)
                if result.include is not None:
                    verdict = result.include
            directory = posixpath.join(directory, parts[depth])
        return bool(verdict)


def is_dir_entry_ignored(ignore: IgnoreFilter | None, path: str) -> bool:
    return ignore is not None and ignore.active and ignore.ignored(path)

