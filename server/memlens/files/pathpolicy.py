"""One answer to "may this path be read or written?", for every reader and writer of the chat.

A path is allowed when its real path (every symbolic link followed) lies inside the real path
of an allowed root. A read must end at a regular file: a FIFO, socket or device is never
opened (opening a FIFO blocks until a writer comes), and the file is opened with O_NONBLOCK and
checked again with fstat, so a file swapped for a FIFO after the check cannot hang the reader.
A write may create a file or replace a regular file, never a FIFO, socket, device or folder.

The chat tools, the memory the chat sends (startup memory and JIT context), the memory manager
and skill extraction all ask the same `PathPolicy`, so the same path gets the same answer
everywhere. The preview (`memlens show`, the editor's views) does not: it shows what Gemini CLI
itself would send.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from memlens.files.fsread import read_at_most
from memlens.files.nodecompat import is_subpath, resolve


class Refusal(StrEnum):
    OUTSIDE = "outside"
    MISSING = "missing"
    DIRECTORY = "directory"
    NOT_DIRECTORY = "not-directory"
    SPECIAL = "special"
    ERROR = "error"


class PathRefused(Exception):
    """The policy refuses a path; `kind` says why, the message says it to a person."""

    def __init__(self, kind: Refusal, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class FileData:
    """A regular file read through the policy."""

    path: str  # as asked
    real: str  # where it really is
    data: bytes
    truncated: bool


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return path


class PathPolicy:
    """Allowed roots, and the checks every reader and writer makes against them."""

    def __init__(self, roots: Iterable[str]):
        self.roots = list(dict.fromkeys(resolve(r) for r in roots))
        self.real_roots = list(dict.fromkeys(_real(r) for r in self.roots))

    def __repr__(self) -> str:
        return f"PathPolicy({self.roots!r})"

    # --- where a path really is ------------------------------------------------------------
    def contains_real(self, real: str) -> bool:
        return any(is_subpath(r, real) for r in self.real_roots)

    def inside(self, path: str) -> bool:
        """The real path of `path` (which need not exist) lies inside an allowed root."""
        return self.contains_real(_real(resolve(path)))

    def _outside(self, path: str) -> PathRefused:
        return PathRefused(Refusal.OUTSIDE, f"Path is outside the workspace folders: {path}. "
                           f"Allowed: {', '.join(self.roots)}")

    def _inside_real(self, path: str) -> str:
        real = _real(resolve(path))
        if not self.contains_real(real):
            raise self._outside(path)
        return real

    # --- reading ----------------------------------------------------------------------------
    def check_read(self, path: str) -> str:
        """The real path of a regular file inside the roots; raises PathRefused otherwise."""
        real = self._inside_real(path)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise PathRefused(Refusal.MISSING, f"File not found: {path}") from None
        except (OSError, ValueError) as err:
            raise PathRefused(Refusal.ERROR, f"Cannot read {path}: {err}") from None
        _require_regular(st, path, "opened")
        return real

    def readable(self, path: str) -> bool:
        try:
            self.check_read(path)
        except PathRefused:
            return False
        return True

    def check_directory(self, path: str) -> str:
        """The real path of a folder inside the roots; raises PathRefused otherwise."""
        real = self._inside_real(path)
        if not os.path.isdir(real):
            if not os.path.lexists(real):
                raise PathRefused(Refusal.MISSING, f"Directory not found: {path}")
            raise PathRefused(Refusal.NOT_DIRECTORY, f"Not a directory: {path}")
        return real

    def read_bytes(self, path: str, limit: int) -> FileData:
        """At most `limit` bytes of a regular file inside the roots."""
        real = self.check_read(path)
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
                         | getattr(os, "O_NOFOLLOW", 0))
        except OSError as err:
            raise PathRefused(Refusal.ERROR, f"Cannot read {path}: "
                              f"{err.strerror or err}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PathRefused(Refusal.SPECIAL, f"Not a regular file: {path}")
            # The file opened is the one checked: its real path is still inside the roots.
            opened = _fd_path(fd)
            if opened is not None and not self.contains_real(opened):
                raise self._outside(path)
            data = read_at_most(fd, limit + 1)
        except OSError as err:
            raise PathRefused(Refusal.ERROR, f"Cannot read {path}: "
                              f"{err.strerror or err}") from None
        finally:
            os.close(fd)
        return FileData(path, real, data[:limit], len(data) > limit)

    def read_found(self, path: str, limit: int) -> bytes | None:
        """At most `limit` bytes of a file a walk found; None when the policy refuses it.

        Cheaper than `read_bytes` for many files: no realpath walk before opening. The file is
        opened without blocking, and what was opened is checked: a regular file whose real
        path (from the open descriptor) lies inside the roots."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except (OSError, ValueError):
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            opened = _fd_path(fd) or _real(path)
            if not self.contains_real(opened):
                return None
            return read_at_most(fd, limit)
        except OSError:
            return None
        finally:
            os.close(fd)

    def read_text(self, path: str, limit: int = 20_000_000) -> str:
        """A regular file's text (UTF-8, bad bytes replaced, newlines kept as they are)."""
        return self.read_bytes(path, limit).data.decode("utf-8", "replace")

    # --- writing ----------------------------------------------------------------------------
    def check_write(self, path: str) -> str:
        """The real path a write to `path` lands on, inside the roots; an existing target must
        be a regular file (a write never replaces a FIFO, socket, device or folder)."""
        real = self._inside_real(path)
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            return real
        except (OSError, ValueError) as err:
            raise PathRefused(Refusal.ERROR, f"Cannot write {path}: {err}") from None
        _require_regular(st, path, "written")
        return real


def _require_regular(st: os.stat_result, path: str, verb: str) -> None:
    """Refuse a folder or a special file (FIFO, socket, device) found at `path`."""
    if stat.S_ISDIR(st.st_mode):
        raise PathRefused(Refusal.DIRECTORY, f"Path is a directory, not a file: {path}")
    if not stat.S_ISREG(st.st_mode):
        raise PathRefused(Refusal.SPECIAL, f"Not a regular file (a FIFO, socket or device "
                          f"is never {verb}): {path}")


def _fd_path(fd: int) -> str | None:
    """Where an open descriptor really points (Linux /proc); None when unknown."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
