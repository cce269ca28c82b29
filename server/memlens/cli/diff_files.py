"""`memlens diff`: which files an agent can read changed between the two sides, and where in
each (the lines a `--format github` notice sits on). Read from the two materialised trees; a
file copied on one side only (an import added) is read on the other from git or the working
tree, so only a real change counts."""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memlens.cli.diff_sides import LOCK_NAME, DiffUsageError, Entry, Side, git_text

if TYPE_CHECKING:
    from memlens.protocol.context_diff import DiffFileChange

FILE_LIMIT = 4 * 1024 * 1024  # bytes of one file compared at most
LINE_LIMIT = 20_000  # lines past which a file's change is one stretch (difflib is quadratic)


@dataclass
class FileDelta:
    """A changed file: its wire form, the lines it adds or removes (stripped, for matching
    them in what an agent sends), and the same per hunk."""

    change: DiffFileChange
    lines: set[str] = field(default_factory=set)
    hunk_lines: list[set[str]] = field(default_factory=list)


def _files_of(folder: str) -> set[str]:
    """The regular files of a materialised side (not links, not its `.git` marker)."""
    found: set[str] = set()
    for current, dirs, files in os.walk(folder):
        rel_dir = os.path.relpath(current, folder)
        if rel_dir == ".":
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(current, name)
            if not os.path.islink(path) and name != LOCK_NAME:
                found.add(os.path.normpath(os.path.join(rel_dir, name)))
    return found


class _NotCompared(Exception):
    """A file too large to compare: left out of the changed files."""


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(FILE_LIMIT)
    except OSError:
        return None


def _content(rel: str, side: Side, copied: set[str], entries: dict[str, Entry],
             top: str) -> bytes | None:
    """The file `rel` on `side`: the copy, else the side's own file (git's blob, the working
    tree's file), else None (the side has no such file)."""
    if rel in copied:
        return _read(os.path.join(side.top, rel))
    entry = entries.get(rel)
    if entry is None or entry.link:
        return None
    if side.commit is None:
        return _read(os.path.join(top, rel))
    if entry.object_id is None:
        return None
    try:
        return git_text(["cat-file", "blob", entry.object_id], top,
                        limit=FILE_LIMIT).encode("utf-8", "surrogateescape")
    except DiffUsageError:  # larger than FILE_LIMIT: not compared
        raise _NotCompared from None


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode("utf-8", "replace").splitlines()


def changed_files(sides: list[tuple[Side, dict[str, Entry]]], top: str) -> list[FileDelta]:
    """Every file an agent can read (copied on either side) whose text differs, by path."""
    from memlens.protocol.context_diff import DiffFileChange, DiffHunk

    (base, base_entries), (head, head_entries) = sides
    base_copied, head_copied = _files_of(base.top), _files_of(head.top)
    deltas: list[FileDelta] = []
    for rel in sorted(base_copied | head_copied):
        try:
            old = _content(rel, base, base_copied, base_entries, top)
            new = _content(rel, head, head_copied, head_entries, top)
        except _NotCompared:
            continue
        if old == new:
            continue
        status = "added" if old is None else "removed" if new is None else "modified"
        a, b = _lines(old), _lines(new)
        hunks: list[DiffHunk] = []
        hunk_lines: list[set[str]] = []
        opcodes: Sequence[tuple[str, int, int, int, int]] = (
            [("replace", 0, len(a), 0, len(b))] if len(a) > LINE_LIMIT or len(b) > LINE_LIMIT
            else difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes())
        for tag, i1, i2, j1, j2 in opcodes:
            if tag == "equal":
                continue
            hunks.append(DiffHunk(line=j1 + 1, end_line=max(j2, j1 + 1), added=j2 - j1,
                                  removed=i2 - i1))
            hunk_lines.append({line.strip() for line in [*a[i1:i2], *b[j1:j2]]} - {""})
        change = DiffFileChange(path=rel, status=status, added=sum(h.added for h in hunks),
                                removed=sum(h.removed for h in hunks), hunks=hunks)
        deltas.append(FileDelta(change, set().union(*hunk_lines), hunk_lines))
    return deltas
