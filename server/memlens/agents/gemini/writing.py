"""`save_memory` exactly as Gemini CLI v0.43.0's memoryTool computes it.

The pure part (sanitising, where the line goes, the messages) lives here; the durable write is
atomic: a temp file in the same folder, fsync, rename, permissions kept.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Literal

# The atomic write and the folder lock live in files/ (Claude Code's topic files use them too);
# named here as well for the modules that import them from here.
from memlens.files.atomic import atomic_write as atomic_write
from memlens.files.atomic import escapes_home as escapes_home
from memlens.files.atomic import memory_lock as memory_lock
from memlens.files.nodecompat import (
    JS_WHITESPACE,
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
