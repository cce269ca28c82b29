"""What `memlens` shows only on a terminal: one updating progress line on stderr for work that
takes a while (check, report, diff, verify), and colour for check's severities
(docs/reference.md "The command line"). Piped or redirected, neither appears: a CI log and a
file get the plain output, byte for byte."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from types import TracebackType
from typing import Any, TextIO

from memlens.files.output import escape_controls

PROGRESS_AFTER = 2.0  # seconds of work before the progress line appears
TICK = 0.25  # seconds between two redraws of the line
CLEAR = "\r\x1b[K"  # back to the line's start, erase it
SEVERITY_COLOURS = {"error": "31", "warning": "33", "info": "36"}  # red, yellow, cyan


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def colour_on(stream: Any) -> bool:
    """Colour on `stream`: a terminal, and `NO_COLOR` unset or empty (no-color convention)."""
    return not os.environ.get("NO_COLOR") and is_terminal(stream)


def paint(text: str, severity: str) -> str:
    """`text` in its severity's colour (an ANSI SGR sequence, reset after)."""
    code = SEVERITY_COLOURS.get(severity)
    return f"\x1b[{code}m{text}\x1b[0m" if code else text


def _progress_after() -> float:
    """PROGRESS_AFTER, or `MEMLENS_PROGRESS_AFTER` seconds (0: at once)."""
    try:
        return max(0.0, float(os.environ.get("MEMLENS_PROGRESS_AFTER", PROGRESS_AFTER)))
    except ValueError:
        return PROGRESS_AFTER


def _columns(stream: Any) -> int:
    """The terminal's width, else `COLUMNS` (as `shutil` has it), else 80."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = shutil.get_terminal_size((80, 24)).columns
    return columns if columns > 0 else 80  # a terminal that says nothing of its size


class _ClearingStream:
    """stderr while a progress line may be shown: a line another part writes (a note, a
    warning) first erases the progress line, so the two never share a line."""

    def __init__(self, progress: Progress, stream: TextIO) -> None:
        self._progress, self._stream = progress, stream

    def write(self, text: str) -> int:
        with self._progress.lock:
            self._progress.erase()
            return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Progress:
    """`with Progress("check") as progress: progress.step("Claude Code in api/")`: after
    PROGRESS_AFTER seconds, one line on stderr, redrawn in place with the current step and
    the seconds so far, erased at the end. Nothing at all unless stderr is a terminal."""

    def __init__(self, command: str, stream: TextIO | None = None) -> None:
        self.command = command
        self.stream = stream if stream is not None else sys.stderr
        self.lock = threading.Lock()
        self.active = is_terminal(self.stream)
        self._step = ""
        self._shown = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = time.monotonic()
        self._after = _progress_after()
        self._saved: Any = None

    def step(self, text: str) -> None:
        """The work now under way; drawn at once when the line is due."""
        self._step = text
        if self._thread is not None:
            self._draw()

    def __enter__(self) -> Progress:
        if self.active:
            self._started = time.monotonic()
            if self.stream is sys.stderr:
                self._saved, sys.stderr = sys.stderr, _ClearingStream(self, self.stream)
            self._thread = threading.Thread(target=self._run, name="memlens-progress",
                                            daemon=True)
            self._thread.start()
            self._draw()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        with self.lock:
            self.erase()
        if self._saved is not None:
            sys.stderr = self._saved

    def erase(self) -> None:
        """Erase the line if it is shown (the caller holds the lock)."""
        if self._shown:
            self.stream.write(CLEAR)
            self.stream.flush()
            self._shown = False

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            self._draw()

    def _draw(self) -> None:
        elapsed = time.monotonic() - self._started
        if elapsed < self._after:
            return
        width = _columns(self.stream) - 1
        line = f"memlens {self.command}: {escape_controls(self._step)} … {elapsed:.0f} s"
        with self.lock:
            if self._stop.is_set():
                return
            self.stream.write(CLEAR + line[:width])
            self.stream.flush()
            self._shown = True
