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
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from .nodecompat import (
    JS_WHITESPACE,
    is_subpath,
    js_trim,
    js_trim_end,
    js_trim_start,
    node_error_message,
)

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


def atomic_write(path: str, text: str) -> None:
    """Replace `path`'s content atomically: a temp file in the same folder, fsync, rename.

    A symbolic link is written through (its target is replaced), never replaced by a file;
    the file's permissions are kept. A crash leaves the old or the new content, never a mix.
    """
    path = os.path.realpath(path)
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    try:
        mode: int | None = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=".memlens-", dir=directory)
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
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def memory_lock(path: str, timeout: float = 30.0) -> Iterator[None]:
    """An inter-process lock around a memory file's read-modify-write (flock on a sidecar)."""
    real = os.path.realpath(path)
    directory = os.path.dirname(real)
    os.makedirs(directory, exist_ok=True)
    lock_path = os.path.join(directory, f".{os.path.basename(real)}.memlens.lock")
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{path} is locked by another writer") from None
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)


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
        from .projects import PROJECT_MEMORY_INDEX, project_temp_dir

        temp = project_temp_dir(home, workspace, claim=True)
        assert temp is not None
        return os.path.join(temp, "memory", PROJECT_MEMORY_INDEX)
    return os.path.join(home, ".gemini", file_names[0])


def memory_description(path: str, home: str) -> str:
    """Gemini CLI's confirmation description: `in ~/.gemini/GEMINI.md`."""
    return f"in {tildeify(path, home)}"
