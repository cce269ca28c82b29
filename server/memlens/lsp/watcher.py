"""`watchfiles` for memory that lives outside the workspace (HOME's .gemini folder, and Claude
Code's ~/.claude), so edits made by another tool (Gemini CLI's save_memory, Claude Code's
auto memory, a terminal editor) show up at once."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from watchfiles import Change

    from memlens.lsp.state import MemlensServer


def watched_roots(ls: MemlensServer) -> list[str]:
    from memlens.agents import home_folders

    candidates = list(dict.fromkeys(path for home in ls.service.homes()
                                    for path in home_folders(home)))
    roots = [r for r in candidates if os.path.isdir(r)]
    return [r for r in roots if not any(r.startswith(f + "/") for f in ls.service.folders)]


def _relevant(homes: list[str]) -> Callable[[Change, str], bool]:
    """Only the changes that can change some agent's memory, in any folder's HOME (Claude
    Code rewrites its transcripts and state under ~/.claude all the time)."""
    from memlens.agents import home_change_matters

    def keep(change: Change, path: str) -> bool:
        return all(home_change_matters(path, home) for home in homes)

    return keep


def start(ls: MemlensServer) -> None:
    roots = watched_roots(ls)
    if not roots or ls.watcher_stop is not None:
        return
    stop = threading.Event()
    ls.watcher_stop = stop
    loop = asyncio.get_running_loop()

    watching = threading.Event()

    keep = _relevant(ls.service.homes())

    def run() -> None:
        from watchfiles import watch

        # yield_on_timeout: the first (empty) batch tells us the OS watches are in place.
        for changes in watch(*roots, watch_filter=keep, stop_event=stop, debounce=200, step=50,
                             rust_timeout=100, yield_on_timeout=True, raise_interrupt=False):
            watching.set()
            if not changes:
                continue
            paths = sorted({path for _, path in changes})
            loop.call_soon_threadsafe(ls.apply_disk_changes, paths)

    threading.Thread(target=run, name="memlens-watchfiles", daemon=True).start()
    watching.wait(timeout=5)


def stop(ls: MemlensServer) -> None:
    event, ls.watcher_stop = ls.watcher_stop, None
    if event is not None:
        event.set()
