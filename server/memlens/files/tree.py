"""One listing of each folder per command run, shared by every walk of it (docs/architecture.md,
"One walk per root").

A `memlens` command that only reads (`check`, `show`, `list`, `jit`, `report`) runs inside
`one_walk()`: there every folder is listed from the disk at most once, whichever agent walks it
and however often; each walk (`files.walk.walk`, Gemini CLI's breadth-first search) replays the
listing in its own order with its own rules, so every answer stays what a walk of its own
gives. What is derived from a walk (an agent's file list for its globs, the ignore-aware search
for every agent's memory-file names) is kept once per run too (`run_memo`). Outside
`one_walk()` (the language server, whose files change under it) nothing is kept and every
walk reads the disk.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar, cast

T = TypeVar("T")

# What a folder entry is, as the walks ask it: a folder (not a link), a link to a folder, a
# regular file, a link to a file, another link (broken, to a FIFO...), anything else (a FIFO,
# a socket), or an entry whose type could not be read.
DIR, LINK_DIR, FILE, LINK_FILE, LINK, OTHER, UNKNOWN = range(7)
_FOLDER_KINDS = frozenset({DIR, LINK_DIR})
LINKS = frozenset({LINK_DIR, LINK_FILE, LINK})
FOLDERS = _FOLDER_KINDS  # what `is_dir()` (links followed) says is a folder
FILES = frozenset({FILE, LINK_FILE})  # what `is_file()` (links followed) says is a file



class Listing:
    """One folder's entries, and the views of them the walks ask for (each made on first
    use: a run that only searches never splits the entries as `walk` does)."""

    __slots__ = ("_dirs", "_files", "_kinds", "_leaves", "_real_dirs", "entries")

    def __init__(self, entries: list[tuple[str, int]]) -> None:
        self.entries = entries  # (name, kind), in the order the file system lists them
        self._dirs: list[str] | None = None
        self._files: list[str] | None = None
        self._real_dirs: list[str] | None = None
        self._leaves: list[tuple[str, int]] | None = None
        self._kinds: dict[str, int] | None = None

    @property
    def kinds(self) -> dict[str, int]:
        """Each name's kind: a search for a few names looks them up instead of reading
        every entry (a folder holds each name once)."""
        if self._kinds is None:
            self._kinds = dict(self.entries)
        return self._kinds

    @property
    def dirs(self) -> list[str]:
        """`files.walk.walk`'s folders: what `is_dir()` (links followed) says is one."""
        if self._dirs is None:
            self._dirs = [n for n, k in self.entries if k in _FOLDER_KINDS]
        return self._dirs

    @property
    def files(self) -> list[str]:
        """`files.walk.walk`'s files: every other entry."""
        if self._files is None:
            self._files = [n for n, k in self.entries if k not in _FOLDER_KINDS]
        return self._files

    @property
    def real_dirs(self) -> list[str]:
        """The folders a walk enters (not links), in order."""
        if self._real_dirs is None:
            self._real_dirs = [n for n, k in self.entries if k == DIR]
        return self._real_dirs

    @property
    def leaves(self) -> list[tuple[str, int]]:
        """What the breadth-first search may match by name (an entry whose type could not
        be read is skipped, as the search skips one whose type raises)."""
        if self._leaves is None:
            self._leaves = [(n, k) for n, k in self.entries if k != DIR and k != UNKNOWN]
        return self._leaves

    def has_file(self, name: str) -> bool:
        """`name` is an entry that is not a folder (a file, a link, a FIFO...)."""
        kind = self.kinds.get(name)
        return kind is not None and kind not in _FOLDER_KINDS


def known_listing(folder: str) -> Listing | None:
    """`folder`'s listing when this run has read it already (None: not read, or not
    readable, or no run)."""
    run = _RUN.get()
    known = None if run is None else run.listings.get(folder)
    return known if isinstance(known, Listing) else None


class _Run:
    def __init__(self) -> None:
        self.listings: dict[str, Listing | OSError] = {}
        self.memo: dict[Hashable, object] = {}
        self.listed = 0  # folders read from the disk (tests count them)


_RUN: ContextVar[_Run | None] = ContextVar("memlens_one_walk", default=None)


# What `run_memo` keeps that depends only on which files and folders exist (walks of the
# tree: which memory files, every file for the globs) or on the text it is keyed by: good for
# a later run over the same tree (`kept_walks`). An agent's check reads files' contents: not.
_TREE_MEMOS = frozenset({"workspace_files_named", "cursor.scan_tree", "copilot.workspace_files",
                         "copilot.folders_below", "claude.folders_below",
                         "claude.frontmatter", "claude.includes",
                         "opencode.folders_below"})


@contextmanager
def one_walk(kept: dict[Hashable, object] | None = None) -> Iterator[None]:
    """Within the block, each folder is listed once and `run_memo` keeps what it computes.
    Only for work that writes nothing the walks could see. `kept`: what `kept_walks` gave at
    the end of an earlier run over the same tree (no file or folder appeared or vanished
    since, no ignore file changed: the caller knows)."""
    run = _Run()
    if kept:
        run.memo.update(kept)
    token = _RUN.set(run)
    try:
        yield
    finally:
        _RUN.reset(token)


def kept_walks() -> dict[Hashable, object]:
    """This run's walks of the tree (see `_TREE_MEMOS`), for `one_walk(kept=...)` later (the
    language server's index keeps its build's for the matrix)."""
    run = _RUN.get()
    if run is None:
        return {}
    return {key: value for key, value in run.memo.items()
            if isinstance(key, tuple) and key and key[0] in _TREE_MEMOS}


def active() -> bool:
    return _RUN.get() is not None


def folders_listed() -> int:
    """Folders read from the disk so far in this run (0 outside `one_walk()`)."""
    run = _RUN.get()
    return 0 if run is None else run.listed


def _kind(entry: os.DirEntry[str]) -> int:
    try:
        if entry.is_dir(follow_symlinks=False):
            return DIR
        if entry.is_file(follow_symlinks=False):
            return FILE
        if entry.is_symlink():
            try:
                return (LINK_DIR if entry.is_dir() else LINK_FILE if entry.is_file()
                        else LINK)
            except OSError:  # a loop, no permission: neither a folder nor a file
                return LINK
        return OTHER
    except OSError:
        return UNKNOWN


def read_listing(folder: str) -> Listing:
    """The entries of `folder` (raises OSError as `os.scandir` does). The type the folder
    listing gave (`d_type`) answers a folder or a regular file without a `stat`: only a link,
    anything else, or a file system that gives no type, costs `_kind`'s questions."""
    with os.scandir(folder) as listed:
        entries = list(listed)
    try:
        return Listing([(e.name, DIR if e.is_dir(follow_symlinks=False)
                         else FILE if e.is_file(follow_symlinks=False) else _kind(e))
                        for e in entries])
    except OSError:  # a type that needed a `stat` that failed: each entry asked alone
        return Listing([(e.name, _kind(e)) for e in entries])


def listing(folder: str) -> Listing:
    """The entries of `folder`: read once per run inside `one_walk()`, else from the disk.
    Raises the OSError listing it raised (every time)."""
    run = _RUN.get()
    if run is None:
        return read_listing(folder)
    known = run.listings.get(folder)
    if known is None:
        run.listed += 1
        try:
            known = read_listing(folder)
        except OSError as err:
            # Kept without its traceback, and raised as a copy: a traceback holds the frames
            # it passed, this one's `run` among them, so the run's every listing would live in
            # a reference cycle until the cycle collector's next full pass (and each raise of
            # the same object would lengthen its traceback).
            known = err.with_traceback(None)
        run.listings[folder] = known
    if isinstance(known, OSError):
        raise copy.copy(known)
    return known


def entry_links(folder: str) -> list[tuple[str, bool]]:
    """The names in `folder`, each with whether it is a symbolic link (raises OSError as
    `os.scandir` does); from the run's listing inside `one_walk()`."""
    if _RUN.get() is not None:
        return [(name, kind in LINKS) for name, kind in listing(folder).entries]
    with os.scandir(folder) as entries:
        return [(entry.name, _is_link(entry)) for entry in entries]


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def run_memo(key: Hashable, compute: Callable[[], T]) -> T:
    """`compute()`, once per run for `key` inside `one_walk()` (every call outside it). The
    value is shared: callers never change it."""
    run = _RUN.get()
    if run is None:
        return compute()
    if key not in run.memo:
        run.memo[key] = compute()
    return cast(T, run.memo[key])


def run_known(key: Hashable) -> object | None:
    """What this run keeps for `key` (`run_memo`, `run_keep`), or None (nothing, or no run)."""
    run = _RUN.get()
    return None if run is None else run.memo.get(key)


def run_keep(key: Hashable, value: object) -> None:
    """Keep `value` for `key` for the rest of the run (nothing outside `one_walk()`)."""
    run = _RUN.get()
    if run is not None:
        run.memo[key] = value
