"""`walk`: `os.walk` (top-down, links to folders listed but never entered) without recursion.

Python 3.11's `os.walk` recurses once per folder level, so a hostile tree of a few thousand
nested folders raises RecursionError in whatever walks it (docs/security.md "Bounds": hostile trees
never crash). This one keeps its own stack. As with `os.walk`, the caller may prune `dirs` in place;
folders that cannot be listed are skipped. Inside `files.tree.one_walk()` each folder's listing is
read from the disk once per run, whoever walks it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from memlens.files import tree


def walk(top: str | os.PathLike[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    if tree.active():
        yield from _walk_listed(os.fspath(top))
        return
    stack = [os.fspath(top)]
    while stack:
        folder = stack.pop()
        dirs: list[str] = []
        files: list[str] = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    (dirs if is_dir else files).append(entry.name)
        except OSError:
            continue
        yield folder, dirs, files
        # reversed: the first folder listed is walked first, as os.walk does
        for name in reversed(dirs):
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                stack.append(path)


def _walk_listed(top: str) -> Iterator[tuple[str, list[str], list[str]]]:
    """`walk` over the run's listings (`files.tree`): the same folders, names and order."""
    stack = [top]
    while stack:
        folder = stack.pop()
        try:
            listed = tree.listing(folder)
        except OSError:
            continue
        dirs = list(listed.dirs)  # the caller's to prune
        yield folder, dirs, list(listed.files)
        if not dirs:
            continue
        # `os.path.join(folder, name)`: a name never holds a slash
        prefix = folder if folder.endswith("/") else folder + "/"
        if len(listed.real_dirs) == len(listed.dirs):  # no link among them
            stack += [prefix + name for name in reversed(dirs)]
        else:
            real = set(listed.real_dirs)
            stack += [prefix + name for name in reversed(dirs) if name in real]


def remove_tree(top: str | os.PathLike[str]) -> None:
    """`shutil.rmtree(top, ignore_errors=True)` without recursion (3.11's recurses per level):
    links are removed, never followed."""
    top = os.fspath(top)
    if os.path.islink(top) or not os.path.isdir(top):
        with contextlib.suppress(OSError):
            os.unlink(top)
        return
    folders = []
    for folder, _dirs, files in walk(top):
        folders.append(folder)
        for name in [*files, *(d for d in _dirs if os.path.islink(os.path.join(folder, d)))]:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))
    for folder in reversed(folders):  # children were listed after their parents
        with contextlib.suppress(OSError):
            os.rmdir(folder)
