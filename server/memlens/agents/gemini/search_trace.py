"""The folders one breadth-first search of a run visited, replayed by the next search of the same
tree under the same rules (docs/architecture.md, "One walk per root").

Which folders Gemini CLI's search visits, and in which order, depends on the root, the ignore
rules and the folders it skips, never on the file names it looks for. So inside
`files.tree.one_walk()` a search that ran to its end (no folder left in its queue) leaves its
trace: each folder visited, in order, with the run's listing of it (or why it could not be
read). A later search of the run with the same root and rules, whose folder budget reaches that
far, reads its names from the trace instead of walking again: `memlens show --mode classic`
searches for GEMINI.md after the search for every agent's names. A search that skips folders
by name (`.git`) replays a trace made without skipping only when the trace kept no folder of
those names.
"""

from __future__ import annotations

from collections.abc import Hashable

from memlens.agents.gemini.ignore import IgnoreFilter
from memlens.files import tree


class Trace:
    """The visited folders of one search, in order, each with its listing (None: unreadable,
    with the reason in `unreadable`), and the names of the folders it queued."""

    __slots__ = ("dir_names", "unreadable", "visited")

    def __init__(self) -> None:
        self.visited: list[tuple[str, tree.Listing | None]] = []
        self.unreadable: list[tuple[str, str]] = []
        self.dir_names: set[str] = set()


def ignore_key(ignore: IgnoreFilter | None) -> Hashable:
    """What decides the filter's verdicts: its root and switches (the ignore files it reads
    do not change within a run); None for no filter, or one that ignores nothing."""
    if ignore is None or not ignore.active:
        return None
    return ignore.key


def _key(root: str, ignore: IgnoreFilter | None, skip_dirs: frozenset[str]) -> Hashable:
    return ("gemini.search_trace", root, ignore_key(ignore), skip_dirs)


def find(root: str, ignore: IgnoreFilter | None, skip_dirs: frozenset[str],
         max_dirs: int | None) -> Trace | None:
    """A finished search's trace that a search of `root` with these rules and this budget
    gives again (None outside a run, or when there is none)."""
    if not tree.active():
        return None
    for skipped in (skip_dirs, frozenset()) if skip_dirs else (skip_dirs,):
        trace = tree.run_known(_key(root, ignore, skipped))
        if not isinstance(trace, Trace):
            continue
        if skipped != skip_dirs and not trace.dir_names.isdisjoint(skip_dirs):
            continue  # it entered a folder this search skips
        if max_dirs is not None and max_dirs < len(trace.visited):
            continue  # this search stops before the end: its queue is not the trace's
        return trace
    return None


def keep(root: str, ignore: IgnoreFilter | None, skip_dirs: frozenset[str], trace: Trace
         ) -> None:
    """Keep a search's trace for the run (the search emptied its queue)."""
    tree.run_keep(_key(root, ignore, skip_dirs), trace)
