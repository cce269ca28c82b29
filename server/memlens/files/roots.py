"""Project roots: the nearest folder at or above a path holding a boundary marker."""

from __future__ import annotations

import os
import posixpath

from memlens.files import tree
from memlens.files.nodecompat import dirname, resolve


def valid_markers(markers: list[str]) -> list[str]:
    return [m for m in markers if m and not m.startswith("/") and ".." not in m]


class ProjectRootFinder:
    """`findProjectRoot`: nearest ancestor holding a boundary marker (cached per run)."""

    def __init__(self, markers: list[str]):
        self.markers = valid_markers(markers)
        self._cache: dict[str, str | None] = {}

    def find(self, start: str) -> str | None:
        if not self.markers:
            return None
        current = resolve(start)
        visited: list[str] = []
        result: str | None = None
        while True:
            if current in self._cache:
                result = self._cache[current]
                break
            visited.append(current)
            if any(os.path.exists(posixpath.join(current, m)) for m in self.markers):
                result = current
                break
            parent = dirname(current)
            if parent == current:
                break
            current = parent
        for d in visited:
            self._cache[d] = result
        return result


def repository_root(start: str) -> str | None:
    """The nearest folder at or above `start` holding `.git`: the project root Claude Code
    and the AGENTS.md convention stop at. Looked up afresh, except within one command run
    (files/tree.py), where the folders already climbed answer for their subfolders."""
    finder = tree.run_memo(("roots.repository", ), lambda: ProjectRootFinder([".git"]))
    return finder.find(start)


# The folders agents keep skills in, one per agent's configuration folder (`.agents/skills`,
# `.claude/skills`, `.gemini/skills`, `.codex/skills`, `.github/skills`, `.cursor/skills`):
# what lies below one is a skill's own material, read when the skill is used, not the memory
# of a folder anyone works in.
_SKILL_FOLDERS = frozenset({".agents", ".agent", ".claude", ".gemini", ".codex", ".github",
                            ".cursor"})


def in_skill_folder(path: str) -> bool:
    """Whether `path` lies inside a skill folder (`…/.agents/skills/<skill>/…`)."""
    parts = path.split("/")
    return any(parts[i] in _SKILL_FOLDERS and parts[i + 1] == "skills"
               for i in range(len(parts) - 3))


def broad_reason(folder: str, home: str) -> str | None:
    """Why `folder` is too broad to walk as a workspace folder ('the file system root', 'your
    home folder'), or None (`workspace.queries.broad_folder` adds the user's permission)."""
    real = os.path.realpath(folder)
    if real == "/":
        return "the file system root"
    if real in {os.path.realpath(os.path.expanduser("~")), os.path.realpath(home)}:
        return "your home folder"
    return None
