"""`watchfiles` for memory that lives outside the workspace (HOME's .gemini folder), so edits
made by another tool (Gemini CLI's save_memory, a terminal editor) show up at once."""

from __future__ import annotations

import asyncio
import os
import threading

from .server import MemlensServer

_stop: dict[int, threading.Event] = {}


def watched_roots(ls: MemlensServer) -> list[str]:
    index = ls.require_index()
    home_gemini = os.path.join(index.settings.home, ".gemini")
    roots = [home_gemini] if os.path.isdir(home_gemini) else []
    return [r for r in roots if not any(r.startswith(f + "/") for f in ls.folders)]


def start(ls: MemlensServer) -> None:
    roots = watched_roots(ls)
    if not roots or id(ls) in _stop:
        return
    stop = threading.Event()
    _stop[id(ls)] = stop
    loop = asyncio.get_running_loop()

    watching = threading.Event()

    def run() -> None:
        from watchfiles import watch

        # yield_on_timeout: the first (empty) batch tells us the OS watches are in place.
        for changes in watch(*roots, stop_event=stop, debounce=200, step=50,
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
