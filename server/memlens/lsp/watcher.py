"""`watchfiles` for memory that lives outside the workspace (each agent's folder in HOME:
~/.gemini, Claude Code's ~/.claude), so edits made by another tool (Gemini CLI's save_memory,
Claude Code's auto memory, a terminal editor) show up at once."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .server import MemlensServer

if TYPE_CHECKING:
    from watchfiles import Change

_stop: dict[int, threading.Event] = {}


def watched_roots(ls: MemlensServer) -> list[str]:
    from ..agents import home_folders

    index = ls.require_index()
    candidates = home_folders(index.settings.home)
    roots = [r for r in candidates if os.path.isdir(r)]
    return [r for r in roots if not any(r.startswith(f + "/") for f in ls.folders)]


def _relevant(home: str) -> Callable[[Change, str], bool]:
    """Only the changes that can change some agent's memory (Claude Code rewrites its
    transcripts and state under ~/.claude all the time)."""
    from ..agents import home_change_matters

    def keep(change: Change, path: str) -> bool:
        return home_change_matters(path, home)

    return keep


def start(ls: MemlensServer) -> None:
    roots = watched_roots(ls)
    if not roots or id(ls) in _stop:
        return
    stop = threading.Event()
    _stop[id(ls)] = stop
    loop = asyncio.get_running_loop()

    watching = threading.Event()

    keep = _relevant(ls.require_index().settings.home)

    def run() -> None:
        from watchfiles import watch

        # yield_on_timeout: the first (empty) batch tells us the OS watches are in place.
        for changes in watch(*roots, watch_filter=keep, stop_event=stop, debounce=200, step=50,
                             rust_timeout=100, yield_on_timeout=True, raise_interrupt=False):
            watching.set()
            if not changes:
                continue
            paths = sorted({path for _, path in changes})
            from .sync import apply_disk_changes

            loop.call_soon_threadsafe(apply_disk_changes, ls, paths)

    threading.Thread(target=run, name="memlens-watchfiles", daemon=True).start()
    watching.wait(timeout=5)


def stop(ls: MemlensServer) -> None:
    event = _stop.pop(id(ls), None)
    if event is not None:
        event.set()
