"""Reading memory files the way Gemini CLI does (`fs.access` then `fs.readFile`), safely.

Every read in the engine goes through one `FileReader` so a file is read at most once per
run, a FIFO or device is never opened (Gemini CLI would block on it), and a huge file costs a
bounded amount of memory.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from enum import StrEnum

from memlens.files.nodecompat import node_error_message, node_null_byte_message


class ReadKind(StrEnum):
    OK = "ok"
    MISSING = "missing"
    DIRECTORY = "directory"
    SPECIAL = "special"
    DENIED = "denied"
    ERROR = "error"


@dataclass(frozen=True)
class ReadResult:
    path: str
    kind: ReadKind
    content: str | None
    # Node's `err.message` for the failure, exactly as Gemini CLI embeds it.
    error: str | None = None
    size: int = 0
    identity: tuple[int, int] | None = None
    binary: bool = False
    invalid_utf8: bool = False
    has_bom: bool = False
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.kind is ReadKind.OK


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes of the open file `fd`, read in 1 MiB steps (a caller asks for one
    byte more than it accepts, to tell a file that is too large)."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def file_identity(path: str) -> tuple[int, int] | None:
    """(device, inode) following symlinks, like Node's `fs.stat`; None when it cannot stat."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def is_readable(path: str) -> bool:
    """`fs.access(path, R_OK)` succeeds: exists (symlinks followed) and readable."""
    try:
        return os.access(path, os.R_OK)
    except (OSError, ValueError):
        return False


class FileReader:
    """Reads files once per run, with Node's error texts and hard safety limits."""

    def __init__(self, max_bytes: int = 16_000_000, overrides: dict[str, str] | None = None):
        self.max_bytes = max_bytes
        # Unsaved editor buffers win over the disk (the language server fills this).
        self.overrides = overrides if overrides is not None else {}
        self._cache: dict[str, ReadResult] = {}

    def read(self, path: str) -> ReadResult:
        cached = self._cache.get(path)
        if cached is None:
            cached = self._read_uncached(path)
            self._cache[path] = cached
        return cached

    def forget(self, path: str) -> None:
        self._cache.pop(path, None)

    def _read_uncached(self, path: str) -> ReadResult:
        if path in self.overrides:
            text = self.overrides[path]
            return ReadResult(path, ReadKind.OK, text, size=len(text.encode("utf-8", "replace")),
                              identity=file_identity(path), has_bom=text.startswith("\ufeff"))
        try:
            st = os.stat(path)
        except OSError as err:
            kind = ReadKind.MISSING if isinstance(err, FileNotFoundError) else ReadKind.ERROR
            return ReadResult(path, kind, None, node_error_message(err, "access", path))
        except ValueError:  # embedded NUL in the path: Node refuses it before any call
            return ReadResult(path, ReadKind.MISSING, None, node_null_byte_message(path))
        identity = (st.st_dev, st.st_ino)
        if not os.access(path, os.R_OK):
            return ReadResult(path, ReadKind.DENIED, None,
                              f"EACCES: permission denied, access '{path}'", identity=identity)
        if stat.S_ISDIR(st.st_mode):
            return ReadResult(path, ReadKind.DIRECTORY, None,
                              "EISDIR: illegal operation on a directory, read", identity=identity)
        if not stat.S_ISREG(st.st_mode):
            # A FIFO would block Node forever; we never open one. Sockets give ENXIO in Node.
            return ReadResult(path, ReadKind.SPECIAL, None,
                              f"ENXIO: no such device or address, open '{path}'",
                              identity=identity)
        return self._read_regular(path, st.st_size, identity)

    def _read_regular(self, path: str, size: int, identity: tuple[int, int]) -> ReadResult:
        try:
            # O_NONBLOCK: if the file was swapped for a FIFO after the stat, open won't hang.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as err:
            return ReadResult(path, ReadKind.ERROR, None, node_error_message(err, "open", path),
                              identity=identity)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return ReadResult(path, ReadKind.SPECIAL, None,
                                  f"ENXIO: no such device or address, open '{path}'",
                                  identity=identity)
            data = read_at_most(fd, self.max_bytes + 1)
        except OSError as err:
            return ReadResult(path, ReadKind.ERROR, None, node_error_message(err, "read", None),
                              identity=identity)
        finally:
            os.close(fd)
        truncated = len(data) > self.max_bytes
        if truncated:
            data = data[: self.max_bytes]
        try:
            text = data.decode("utf-8")
            invalid = False
        except UnicodeDecodeError:
            # Node's utf-8 decoder replaces each bad sequence with U+FFFD, as Python's does.
            text = data.decode("utf-8", "replace")
            invalid = not truncated or not _only_cut_at_end(data)
        return ReadResult(
            path, ReadKind.OK, text, size=max(size, len(data)), identity=identity,
            binary=b"\x00" in data, invalid_utf8=invalid, has_bom=text.startswith("\ufeff"),
            truncated=truncated,
        )


def _only_cut_at_end(data: bytes) -> bool:
    """True when the only invalid UTF-8 is a multibyte sequence cut by our read limit."""
    for cut in range(1, 4):
        try:
            data[:-cut].decode("utf-8")
            return True
        except UnicodeDecodeError:
            continue
    return False
