"""`save_memory` exactly as Gemini CLI v0.43.0's memoryTool computes it.

The pure part (sanitising, where the line goes, the messages) lives here; the durable write is
atomic: a temp file in the same folder, fsync, rename, permissions kept.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from memlens.files.nodecompat import (
    JS_WHITESPACE,
    is_subpath,
    js_trim,
    js_trim_end,
    js_trim_start,
    node_error_message,
)
from memlens.model import join_context_name

MEMORY_SECTION_HEADER = "## Gemini Added Memories"
EMPTY_FACT_ERROR = 'Parameter "fact" must be a non-empty string.'
Scope = Literal["global", "project"]


def sanitize_fact(fact: str) -> str:
    text = js_trim(re.sub(r"[\r\n]", " ", fact))
    text = js_trim(re.sub(f"^(-+[{re.escape(JS_WHITESPACE)}]*)+", "", text))
    return re.sub(r"[<>]", " ", text)


def _separator(content: str) -> str:
    if not content or content.endswith("\n\n") or content.endswith("\r\n\r\n"):
        return ""
    if content.endswith("\n") or content.endswith("\r\n"):
        return "\n"
    return "\n\n"


def add_global_entry(content: str, fact: str) -> str:
    item = f"- {fact}"
    start = content.find(MEMORY_SECTION_HEADER)
    if start == -1:
        return content + _separator(content) + f"{MEMORY_SECTION_HEADER}\n{item}\n"
    body_start = start + len(MEMORY_SECTION_HEADER)
    end = content.find("\n## ", body_start)
    if end == -1:
        end = len(content)
    before = content[:body_start]
    section = content[body_start:end]
    after = content[end:]
    merged = (js_trim_end(before) + "\n" + js_trim_start(js_trim_end(section) + "\n" + item)
              + "\n" + after)
    return js_trim_end(merged) + "\n"


def add_project_entry(content: str, fact: str) -> str:
    item = f"- {fact}"
    if content == "":
        return item + "\n"
    if content.endswith("\n"):
        return content + item + "\n"
    return content + "\n" + item + "\n"


def tildeify(path: str, home: str) -> str:
    if path == home:
        return "~"
    if path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")):]
    return path


@dataclass
class SaveOutcome:
    success: bool
    llm_content: str
    return_display: str
    written: str | None = None


def success_outcome(fact: str, written: str) -> SaveOutcome:
    message = f'Okay, I\'ve remembered that: "{fact}"'
    payload = json.dumps({"success": True, "message": message}, ensure_ascii=False,
                         separators=(",", ":"))
    return SaveOutcome(True, payload, message, written)


def failure_outcome(detail: str) -> SaveOutcome:
    payload = json.dumps({"success": False, "error": f"Failed to save memory. Detail: {detail}"},
                         ensure_ascii=False, separators=(",", ":"))
    return SaveOutcome(False, payload, f"Error saving memory: {detail}")


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


def save_memory(fact: str, path: str, scope: Scope = "global", *, home: str | None = None,
                modified_content: str | None = None) -> SaveOutcome:
    """Validate, sanitise, insert and write one fact, as Gemini CLI's save_memory does.

    Raises ValueError on an empty fact. The read-modify-write holds `memory_lock`, so
    concurrent writers lose nothing; `modified_content` (the user's edit of the proposal) is
    written verbatim. A write through a symbolic link that leaves `home` is refused.
    """
    if not isinstance(fact, str) or js_trim(fact) == "":
        raise ValueError(EMPTY_FACT_ERROR)
    clean = sanitize_fact(fact)
    if home is not None and escapes_home(path, home):
        return failure_outcome(f"refusing to write through a symbolic link that leaves HOME: "
                               f"{path} -> {os.path.realpath(path)}")
    try:
        with memory_lock(path):
            current = memory_file_content(path)
            if modified_content is not None:
                updated = modified_content
            elif scope == "project":
                updated = add_project_entry(current, clean)
            else:
                updated = add_global_entry(current, clean)
            atomic_write(path, updated)
    except OSError as err:
        return failure_outcome(node_error_message(err, "open", path))
    return success_outcome(clean, updated)


def create_patch(file_name: str, old: str, new: str, old_header: str = "Current",
                 new_header: str = "Proposed") -> str:
    """A unified diff shaped like jsdiff's `createPatch` (what Gemini CLI shows to confirm)."""
    import difflib

    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    body = []
    for line in difflib.unified_diff(old_lines, new_lines, n=4, lineterm=""):
        if line.startswith(("---", "+++")):
            continue
        body.append(line if line.endswith("\n") else line + "\n")
        if line[:1] in "+- " and not line.endswith("\n") and not line.startswith("@@"):
            body.append("\\ No newline at end of file\n")
    header = (f"Index: {file_name}\n{'=' * 67}\n--- {file_name}\t{old_header}\n"
              f"+++ {file_name}\t{new_header}\n")
    return header + "".join(body)


def memory_file_content(path: str) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def proposed_memory(fact: str, path: str, scope: Scope) -> tuple[str, str]:
    """(current, proposed) content for saving `fact`; raises ValueError on an empty fact."""
    if not isinstance(fact, str) or js_trim(fact) == "":
        raise ValueError(EMPTY_FACT_ERROR)
    clean = sanitize_fact(fact)
    current = memory_file_content(path)
    proposed = (add_project_entry(current, clean) if scope == "project"
                else add_global_entry(current, clean))
    return current, proposed


def memory_target(home: str, file_names: list[str], workspace: str, scope: Scope) -> str:
    """Where save_memory writes: HOME/.gemini/<first context file name> for global scope,
    the private `MEMORY.md` in the project's folder (registered as Gemini CLI would) for
    project scope."""
    if scope == "project":
        from memlens.agents.gemini.projects import PROJECT_MEMORY_INDEX, project_temp_dir

        temp = project_temp_dir(home, workspace, claim=True)
        assert temp is not None
        return os.path.join(temp, "memory", PROJECT_MEMORY_INDEX)
    return join_context_name(os.path.join(home, ".gemini"), file_names[0])


def memory_description(path: str, home: str) -> str:
    """Gemini CLI's confirmation description: `in ~/.gemini/GEMINI.md`."""
    return f"in {tildeify(path, home)}"
