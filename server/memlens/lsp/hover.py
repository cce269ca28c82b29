"""Hover: an import shows its target as Gemini CLI will include it; line 1 of a memory file
shows the merged context for that folder (startup memory plus what JIT adds there)."""

from __future__ import annotations

import json
import re
import urllib.parse

from lsprotocol import types

from ..agents import owner_of, primary
from ..agents.base import MemoryAgent
from ..imports import ImportProcessor
from ..nodecompat import dirname, resolve
from ..trust import memory_summary, restricted_notice
from .convert import path_of, range_of, token_at, uri_of
from .server import MemlensServer

IMPORT_PREVIEW_CHARS = 4_000
MERGED_PREVIEW_CHARS = 8_000


# A rendered context is plain text with source markers, not markdown prose: its code block is
# tagged with the extension's `memlens-context` language (a client without it shows plain text).
CONTEXT_LANGUAGE = "memlens-context"


def fenced(text: str, language: str = "markdown") -> str:
    """A markdown code block whose fence is longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def clip(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


def show_command_link(path: str) -> str:
    args = urllib.parse.quote(json.dumps([uri_of(path)]))
    return f"command:memlens.showMergedContext?{args}"


def import_hover(ls: MemlensServer, path: str, text: str, position: types.Position
                 ) -> types.Hover | None:
    token = token_at(text, position)
    if token is None:
        return None
    index = ls.require_index()
    target = resolve(dirname(path), token.path)
    processor = ImportProcessor(index.reader, index.engine().root_finder,
                                max_chars=IMPORT_PREVIEW_CHARS * 4)
    wrapped = processor.process(f"@{token.path}", dirname(path), source_file=path)
    body, cut = clip(wrapped.content, IMPORT_PREVIEW_CHARS)
    header = f"**`@{token.path}`** → `{target}`"
    note = "\n\n*(preview truncated)*" if cut else ""
    value = f"{header}\n\nAs Gemini CLI includes it:\n\n{fenced(body)}{note}"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
                       range=range_of(text, token.start, token.end))


TRUST_LINK = "[Manage Workspace Trust](command:workbench.trust.manage)"


def memory_for(ls: MemlensServer, path: str) -> tuple[str, int, int, int, bool]:
    """What loads for `path`'s folder: (merged text, files, chars, JIT files, trusted).
    Chars count the files' text with imports expanded, as the status bar and the Memory
    view do (the merged text adds the source markers)."""
    index = ls.require_index()
    merged, files, jit = index.merged_for(path)
    state = index.folder_state(path)
    loaded = [f for f in state.load.files if f.content is not None] if state else []
    chars = sum(len(f.content or "") for f in loaded)
    jit_count = 0
    if jit is not None:
        jit_count = len(jit.files)
        chars += sum(len(f.content or "") for f in jit.files)
    trusted = state.load.trusted if state else True
    return merged, len(files), chars, jit_count, trusted


def memory_lens_title(ls: MemlensServer, path: str) -> str:
    """The code lens on line 1 of a memory file: the same count as the status bar."""
    _, count, chars, _, trusted = memory_for(ls, path)
    return memory_summary(count, chars) + ("" if trusted else " · Restricted Mode")


def merged_hover(ls: MemlensServer, path: str) -> types.Hover | None:
    merged, count, chars, jit_count, trusted = memory_for(ls, path)
    folder = dirname(path)
    body, cut = clip(merged, MERGED_PREVIEW_CHARS)
    jit_note = f" ({jit_count} loaded just in time for this folder)" if jit_count else ""
    lines = [f"**Merged context for `{folder}`** — {memory_summary(count, chars)}{jit_note}"]
    if not trusted:
        lines += ["", f"**{restricted_notice(count)}** {TRUST_LINK}"]
    lines += ["", fenced(body, CONTEXT_LANGUAGE) if body else "*(no memory loaded)*"]
    if cut:
        lines += ["", f"*Truncated.* [Open the full merged context]({show_command_link(path)})"]
    value = "\n".join(lines)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))


def dialect_hover(ls: MemlensServer, path: str, agent: MemoryAgent) -> types.Hover:
    """Line 1 of another agent's file (a CLAUDE.md, an AGENTS.md): what that agent loads for
    this folder."""
    index = ls.require_index()
    memory = agent.load(dirname(path), index.settings, index.reader)
    body, cut = clip(memory.text, MERGED_PREVIEW_CHARS)
    value = (f"{memory.headline}\n\n"
             f"{fenced(body, CONTEXT_LANGUAGE) if body else '*(nothing loads)*'}")
    if cut:
        value += "\n\n*(preview truncated)*"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: MemlensServer, params: types.HoverParams) -> types.Hover | None:
        path = path_of(params.text_document.uri)
        if path is None:
            return None
        text = ls.text_of(path)
        if text is None:
            return None
        found = import_hover(ls, path, text, params.position)
        if found is not None:
            return found
        from .skills import skill_hover

        found = skill_hover(ls, path, text, params.position)
        if found is not None:
            return found
        if params.position.line == 0 and ls.require_index().is_memory_file(path):
            return merged_hover(ls, path)
        owner = owner_of(path, ls.require_index().settings)
        if params.position.line == 0 and owner is not None and owner is not primary():
            return dialect_hover(ls, path, owner)
        return None
