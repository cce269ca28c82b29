"""Atomic, locked writes of the user's memory files: a temp file in the same folder, fsync,
rename, permissions kept; an inter-process lock per folder around every read-modify-write.
Shared by every agent that writes memory (Gemini CLI's save_memory, Claude Code's topic files)
and by the chat's file tools."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator

from memlens.files.nodecompat import is_subpath

TEMP_MARKER = ".memlens-tmp-"
# mkstemp's random part: 8 characters of this alphabet.
_TEMP_NAME = re.compile(r"\..*" + re.escape(TEMP_MARKER) + r"[a-z0-9_]{8}", re.DOTALL)


def temp_prefix(path: str) -> str:
    """`.<name>.memlens-tmp-` (the name cut to 40 characters, so the temp name stays within
    NAME_MAX): recognisable, and hidden like the file's other companions."""
    return f".{os.path.basename(path)[:40]}{TEMP_MARKER}"


def _remove_stale_temps(directory: str) -> None:
    """Delete temp files a killed writer left in `directory`. Only called under the folder's
    write lock, which every writer holds from before it creates its temp file until after
    the rename: any temp file seen here belongs to a writer that no longer runs."""
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if _TEMP_NAME.fullmatch(name):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))


def atomic_write(path: str, text: str) -> None:
    """Replace `path`'s content atomically: a temp file in the same folder, fsync, rename.

    A symbolic link is written through (its target is replaced), never replaced by a file;
    the file's permissions are kept. A crash leaves the old or the new content, never a mix;
    the temp file a killed writer leaves (`.<name>.memlens-tmp-XXXXXXXX`) is removed by the
    next write in that folder. Holds `memory_lock` (re-entrant) for the whole write.
    """
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    with memory_lock(path):
        _remove_stale_temps(directory)
        try:
            mode: int | None = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, mode if mode is not None else 0o644)
            os.replace(tmp, path)
            dir_fd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


class _HeldLock:
    """This process's hold on one folder's lock: the thread that owns it, how deep, the fd."""

    def __init__(self) -> None:
        self.mutex = threading.RLock()
        self.depth = 0
        self.fd: int | None = None


_held: dict[tuple[int, int], _HeldLock] = {}
_held_guard = threading.Lock()


def _flock(fd: int, deadline: float, path: str) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} is locked by another writer") from None
            time.sleep(0.02)


def _lock_folder(directory: str, deadline: float, path: str) -> int:
    """flock on the folder itself (its inode never changes, whatever is renamed inside it),
    so no lock file is created among the user's files. Where a folder cannot be locked
    (NFS emulates flock with POSIX locks, which need a file open for writing), a hidden
    `.memlens.lock` in the folder stands in."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        fd = -1
    if fd >= 0:
        try:
            _flock(fd, deadline, path)
            return fd
        except OSError as err:
            os.close(fd)
            if isinstance(err, TimeoutError):
                raise
    fd = os.open(os.path.join(directory, ".memlens.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _flock(fd, deadline, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def memory_lock(path: str, timeout: float = 30.0) -> Iterator[None]:
    """An inter-process lock around a write to `path` (a read-modify-write, or the atomic
    write itself): every writer of a file in that folder, in any process, waits for it.

    Re-entrant within a thread (save_memory holds it around atomic_write, which takes it
    again); other threads of this process wait as other processes do."""
    real = os.path.realpath(path)
    directory = os.path.dirname(real)
    os.makedirs(directory, exist_ok=True)
    info = os.stat(directory)
    key = (info.st_dev, info.st_ino)
    with _held_guard:
        held = _held.setdefault(key, _HeldLock())
    deadline = time.monotonic() + timeout
    if not held.mutex.acquire(timeout=timeout):
        raise TimeoutError(f"{path} is locked by another writer")
    try:
        if held.depth == 0:
            held.fd = _lock_folder(directory, deadline, path)
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0 and held.fd is not None:
                os.close(held.fd)  # releases the flock
                held.fd = None
    finally:
        held.mutex.release()


def escapes_home(path: str, home: str) -> bool:
    """True when writing `path` would land outside HOME through a symbolic link."""
    return not is_subpath(os.path.realpath(home), os.path.realpath(path))
