"""Writes that follow no symbolic link: a folder reached component by component from an anchor
(a folder the user owns: HOME, a workspace folder, a folder the user named), each component
opened with O_NOFOLLOW | O_DIRECTORY, and every file in it read, written and removed through
that folder's descriptor — so a link anywhere below the anchor, swapped in before or during
the write, is refused, never followed. The folder's real path must lie inside the roots of a
`PathPolicy`; a file written must be a regular file or absent, and is replaced atomically (a
temp file, fsync, rename) under the folder's lock (`atomic.folder_lock`).

Used for every write of Claude Code's memory (agents/claude/memory_writing.py); the rule is in
docs/security.md ("Claude Code's memory folder").
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import secrets
import stat
from collections.abc import Iterable, Iterator

from memlens.files.atomic import NotRegularFile, folder_lock, is_temp_name, temp_prefix
from memlens.files.fsread import read_at_most
from memlens.files.nodecompat import is_subpath, resolve
from memlens.files.pathpolicy import PathPolicy, PathRefused, Refusal

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_TEMP_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"


class ConfinedFolder:
    """An open folder reached without following a link; its files by name only."""

    def __init__(self, fd: int, path: str):
        self.fd = fd
        self.path = path

    def __enter__(self) -> ConfinedFolder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _shown(self, name: str) -> str:
        return posixpath.join(self.path, name)

    def entry(self, name: str) -> os.stat_result | None:
        """What `name` is (a link is a link), None when nothing is there."""
        try:
            return os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def require_file_or_absent(self, name: str) -> bool:
        """True when `name` is a regular file, False when absent; NotRegularFile otherwise."""
        st = self.entry(name)
        if st is None:
            return False
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(self._shown(name), what_it_is(st))
        return True

    def read_text(self, name: str, limit: int) -> str | None:
        """The UTF-8 text of the regular file `name` (None when absent); never opens a link
        or a FIFO (O_NOFOLLOW | O_NONBLOCK, then fstat). ValueError: over `limit` bytes or
        not UTF-8."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise NotRegularFile(self._shown(name), "a symbolic link") from None
            raise
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotRegularFile(self._shown(name), what_it_is(st))
            data = read_at_most(fd, limit + 1)
        finally:
            os.close(fd)
        if len(data) > limit:
            raise ValueError(f"{self._shown(name)} is larger than {limit} bytes")
        return data.decode("utf-8")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        with folder_lock(self.fd, self.path):
            yield

    def write_text(self, name: str, text: str) -> None:
        """Replace `name` atomically (a temp file in this folder, fsync, rename); it must be a
        regular file or absent, and keeps its permissions. Hold `lock()` around it."""
        self._remove_stale_temps()
        st = self.entry(name)
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(self._shown(name), what_it_is(st))
        mode = st.st_mode & 0o7777 if st is not None else 0o644
        tmp, fd = self._temp(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
                os.fchmod(handle.fileno(), mode)
            os.replace(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            os.fsync(self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise

    def remove(self, name: str) -> None:
        os.unlink(name, dir_fd=self.fd)

    def _temp(self, name: str) -> tuple[str, int]:
        prefix = temp_prefix(name)
        while True:
            tmp = prefix + "".join(secrets.choice(_TEMP_CHARS) for _ in range(8))
            try:
                return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                                    | os.O_CLOEXEC, 0o600, dir_fd=self.fd)
            except FileExistsError:
                continue

    def _remove_stale_temps(self) -> None:
        """A killed writer's temp files (only called under the folder's lock)."""
        try:
            names = os.listdir(self.fd)
        except OSError:
            return
        for entry in names:
            if is_temp_name(entry):
                with contextlib.suppress(OSError):
                    os.unlink(entry, dir_fd=self.fd)


def what_it_is(st: os.stat_result) -> str:
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if stat.S_ISDIR(st.st_mode):
        return "a folder"
    if stat.S_ISREG(st.st_mode):
        return "a regular file"
    return "a FIFO, socket or device"


def _anchor(folder: str, anchors: Iterable[str]) -> str:
    """The deepest anchor that holds `folder` (by its path as written), else `/`."""
    held = [a for a in (resolve(a) for a in anchors) if is_subpath(a, folder)]
    return max(held, key=len) if held else "/"


def open_folder(policy: PathPolicy, folder: str, anchors: Iterable[str], *,
                create: bool) -> ConfinedFolder | None:
    """Open `folder` without following a link below its anchor (the deepest of `anchors`
    holding it, by the path as written; the anchor's own path is resolved — the user's links
    there are the user's — and every component after it must be a real folder), creating
    what is missing when `create` (else None when a component is missing). PathRefused: a
    component is a link or not a folder, or the folder's real path lies outside the policy's
    roots (checked before anything is created)."""
    folder = resolve(folder)
    anchor = _anchor(folder, anchors)
    start = os.path.realpath(anchor)
    rest = posixpath.relpath(folder, anchor)
    real = resolve(start, rest) if rest != "." else start
    if not policy.contains_real(real):
        raise PathRefused(Refusal.OUTSIDE, f"{folder} is outside the folders Memory Lens "
                          f"writes Claude Code's memory to ({', '.join(policy.roots)})")
    parts = [p for p in start.split("/") if p]
    below = [] if rest == "." else rest.split("/")
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in [*parts, *below]:
            parent, fd = fd, -1  # _step closes the parent, whatever happens
            fd = _step(parent, part, create, folder)
            if fd < 0:
                return None
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    return ConfinedFolder(fd, folder)


def _step(parent: int, part: str, create: bool, folder: str) -> int:
    """The folder `part` of `parent` opened without following a link (created when missing
    and `create`); -1 when missing. Closes `parent`."""
    try:
        while True:
            try:
                return os.open(part, _DIR_FLAGS, dir_fd=parent)
            except FileNotFoundError:
                if not create:
                    return -1
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=parent)
            except OSError as err:
                if err.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                try:
                    what = what_it_is(os.stat(part, dir_fd=parent, follow_symlinks=False))
                except OSError:
                    what = "not a folder"
                why = ("Memory Lens follows no link when it writes Claude Code's memory"
                       if what == "a symbolic link" else "not a folder")
                raise PathRefused(Refusal.NOT_DIRECTORY, f"{folder} is reached through "
                                  f"{part!r}, which is {what}: {why}") from None
    finally:
        os.close(parent)
