"""Gemini CLI's text forms of loaded memory, reproduced exactly.

`concatenate_instructions` is the per-file block format, `flatten_memory` what `/memory show`
displays, `render_user_memory` the system-prompt form, `render_session_memory` the part jit
mode puts in the first user message, `append_jit_context` what tools append.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from memlens.files.nodecompat import js_trim, js_trim_start

JIT_CONTEXT_PREFIX = "\n\n--- Newly Discovered Project Context ---\n"
JIT_CONTEXT_SUFFIX = "\n--- End Project Context ---"
PRIVATE_MEMORY_HEADER = (
    "--- Private Project Memory Index (private, not committed to repo) ---")
PRIVATE_MEMORY_FOOTER = "--- End Private Project Memory Index ---"


def context_start(path: str) -> str:
    return f"--- Context from: {path} ---"


def context_end(path: str) -> str:
    return f"--- End of Context from: {path} ---"


def context_block(path: str, content: str) -> str:
    return f"{context_start(path)}\n{content}\n{context_end(path)}"


def concatenate_instructions(files: Iterable[tuple[str, str | None]],
                             open_ended: Collection[str] = ()) -> str:
    """Blocks for files with non-empty trimmed content, joined by a blank line.

    A file in `open_ended` holds only the first part of its text (the preview's budget ran
    out in it): its end is not trimmed, as the real end lies further on."""
    blocks = []
    for path, content in files:
        if content is None:
            continue
        trimmed = js_trim_start(content) if path in open_ended else js_trim(content)
        if trimmed:
            blocks.append(context_block(path, trimmed))
    return "\n\n".join(blocks)


def flatten_memory(global_: str, user_project: str, extension: str, project: str) -> str:
    sections = [
        ("Global", global_),
        ("Private Project Memory", user_project),
        ("Extension", extension),
        ("Project", project),
    ]
    return "\n\n".join(
        f"--- {name} ---\n{js_trim(text)}" for name, text in sections if js_trim(text))


def _tagged(tag: str, text: str) -> str:
    return f"<{tag}>\n{js_trim(text)}\n</{tag}>"


def render_user_memory(global_: str, user_project: str, extension: str, project: str) -> str:
    """`renderUserMemory` for a hierarchical memory object ('' when every tier is empty)."""
    sections = []
    if js_trim(global_):
        sections.append(_tagged("global_context", global_))
    if js_trim(user_project):
        sections.append(
            "<user_project_memory>\n"
            f"{PRIVATE_MEMORY_HEADER}\n{js_trim(user_project)}\n{PRIVATE_MEMORY_FOOTER}\n"
            "</user_project_memory>")
    if js_trim(extension):
        sections.append(_tagged("extension_context", extension))
    if js_trim(project):
        sections.append(_tagged("project_context", project))
    if not sections:
        return ""
    return "\n---\n\n<loaded_context>\n" + "\n".join(sections) + "\n</loaded_context>"


def render_string_memory(memory: str, file_names: list[str]) -> str:
    """`renderUserMemory` for plain-string memory (jit mode's global-only system memory)."""
    trimmed = js_trim(memory)
    if not trimmed:
        return ""
    return (
        f"\n# Contextual Instructions ({', '.join(file_names)})\n"
        "The following content is loaded from local and global configuration files.\n"
        "**Context Precedence:**\n"
        "- **Global (~/.gemini/):** foundational user preferences. Apply these broadly.\n"
        "- **Extensions:** supplementary knowledge and capabilities.\n"
        "- **Workspace Root:** workspace-wide mandates. Supersedes global preferences.\n"
        "- **Sub-directories:** highly specific overrides. These rules supersede all others "
        "for files within their scope.\n\n"
        "**Conflict Resolution:**\n"
        "- **Precedence:** Strictly follow the order above (Sub-directories > Workspace Root > "
        "Extensions > Global).\n"
        "- **System Overrides:** Contextual instructions override default operational "
        "behaviors (e.g., tech stack, style, workflows, tool preferences) defined in the system "
        "prompt. However, they **cannot** override Core Mandates regarding safety, security, "
        "and agent integrity.\n\n"
        f"<loaded_context>\n{trimmed}\n</loaded_context>")


def render_session_memory(extension: str, project: str) -> str:
    """Jit mode's `getSessionMemory()`: extension and project memory for the first user turn."""
    sections = []
    if js_trim(extension):
        sections.append(_tagged("extension_context", extension))
    if js_trim(project):
        sections.append(_tagged("project_context", project))
    if not sections:
        return ""
    return "\n<loaded_context>\n" + "\n".join(sections) + "\n</loaded_context>"


def append_jit_context(tool_output: str, context: str) -> str:
    if not context:
        return tool_output
    return tool_output + JIT_CONTEXT_PREFIX + context + JIT_CONTEXT_SUFFIX


def render_prompt_memory(mode: str, global_: str, user_project: str, extension: str,
                         project: str, file_names: list[str]) -> tuple[str, str]:
    """(system-instruction memory, first-user-message memory) as Gemini CLI builds them.

    Jit mode puts only global (and the private project memory) in the system instruction,
    and extension + project memory in the first user message; classic mode puts everything in
    the system instruction.
    """
    if mode == "jit":
        if js_trim(user_project):
            system = render_user_memory(global_, user_project, "", "")
        else:
            system = render_string_memory(global_, file_names)
        return collapse_blank_lines(system), render_session_memory(extension, project)
    return collapse_blank_lines(render_user_memory(global_, user_project, extension, project)), ""


_BLANK_RUN = re.compile(r"\n{3,}")


def collapse_blank_lines(system: str) -> str:
    """The system instruction's final sanitising (`finalPrompt.replace(/\\n{3,}/g, "\\n\\n")`):
    a run of three or more newlines becomes two (blank lines in memory files and imports
    included; the first user message is not sanitised)."""
    return _BLANK_RUN.sub("\n\n", system)
