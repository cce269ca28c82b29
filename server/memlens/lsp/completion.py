"""Completion: paths after `@` (relative to the file, folders first), SKILL.md keys, and in
Claude Code's auto-memory topic files the memories' names inside `[[`."""

from __future__ import annotations

import os
import posixpath
import re
from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.files.nodecompat import dirname, resolve
from memlens.lsp.convert import path_of
from memlens.lsp.links import agent_reading, claude_memory_links, editor_text

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

SKILL_KEYS = {
    "name": "1-64 lowercase letters, digits and hyphens; equal to the folder's name",
    "description": "What the skill does and when to use it (1-1024 characters)",
    "license": "License name or bundled license file",
    "compatibility": "Environment requirements (at most 500 characters)",
    "metadata": "Extra string-to-string properties",
    "allowed-tools": "Tools the skill may use without asking",
}
_SKIP = {".git", "node_modules", "__pycache__"}
MAX_ITEMS = 500


def _path_items(base: str, partial: str, replace: types.Range,
                home: str | None = None) -> list[types.CompletionItem]:
    """Entries of the folder `partial` names so far. `home`: `@~/` means that folder (Claude
    Code's include form; Gemini CLI has no such import)."""
    directory_part, _, _ = partial.rpartition("/")
    folder = resolve(base, directory_part) if directory_part else base
    if partial.startswith("/"):
        folder = resolve("/", directory_part or "/")
    elif partial.startswith("~/") and home is not None:
        folder = resolve(home, directory_part[2:])
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name.lower())
    except OSError:
        return []
    prefix = "" if partial else "./"
    items = []
    for entry in entries:
        if entry.name in _SKIP:
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            continue
        name = entry.name + ("/" if is_dir else "")
        items.append(types.CompletionItem(
            label=name,
            kind=types.CompletionItemKind.Folder if is_dir else types.CompletionItemKind.File,
            sort_text=("0" if is_dir else "1") + entry.name.lower(),
            text_edit=types.TextEdit(range=replace, new_text=prefix + name),
            command=types.Command(title="", command="editor.action.triggerSuggest")
            if is_dir else None))
        if len(items) >= MAX_ITEMS:
            break
    return items


def _frontmatter_items(text: str, line: int, before: str) -> list[types.CompletionItem]:
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return []
    closing = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r") == "---"), None)
    if line == 0 or (closing is not None and line >= closing):
        return []
    if not re.fullmatch(r"[A-Za-z-]*", before):
        return []
    present = {m.group(1) for m in re.finditer(r"^([A-Za-z-]+):", text, re.MULTILINE)}
    return [types.CompletionItem(label=key, kind=types.CompletionItemKind.Property,
                                 detail=detail, insert_text=f"{key}: ")
            for key, detail in SKILL_KEYS.items() if key not in present]


_OPEN_LINK = re.compile(r"\[\[([^\[\]\n]*)$")


def _memory_name_items(ls: MemlensServer, path: str, text: str, offset: int, before: str,
                       position: types.Position) -> list[types.CompletionItem] | None:
    """Inside `[[` of a topic file: the folder's memories by name, with their description
    (None: not in a link of a topic file). The item completes the name and closes the link
    unless `]]` follows already."""
    opened = _OPEN_LINK.search(before)
    if opened is None:
        return None
    links = claude_memory_links(ls, path)
    if links is None:
        return None
    start = ls.positions.position_at(text, offset - len(opened.group(1)))
    closed = text.startswith("]]", offset)
    replace = types.Range(start=start, end=position)
    items = []
    for memory in sorted(links.memories, key=lambda m: m.name or ""):
        if memory.name is None or memory.path == path:
            continue
        items.append(types.CompletionItem(
            label=memory.name, kind=types.CompletionItemKind.Reference,
            detail=memory.description, filter_text=memory.name,
            documentation=f"{memory.relative}" + (f" — {memory.description}"
                                                  if memory.description else ""),
            text_edit=types.TextEdit(range=replace,
                                     new_text=memory.name + ("" if closed else "]]"))))
        if len(items) >= MAX_ITEMS:
            break
    return items


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=["@", "/", "["]))
    def completion(ls: MemlensServer, params: types.CompletionParams
                   ) -> types.CompletionList | None:
        path = path_of(params.text_document.uri)
        text = editor_text(ls, path) if path else None
        if path is None or text is None:
            return None
        offset = ls.positions.offset_at(text, params.position)
        line_start = text.rfind("\n", 0, offset) + 1
        before = text[line_start:offset]
        names = _memory_name_items(ls, path, text, offset, before, params.position)
        if names is not None:
            return types.CompletionList(is_incomplete=False, items=names)
        if posixpath.basename(path) == "SKILL.md":
            items = _frontmatter_items(text, params.position.line, before)
            if items:
                return types.CompletionList(is_incomplete=False, items=items)
        word_start = max(before.rfind(" "), before.rfind("\t")) + 1
        word = before[word_start:]
        if not word.startswith("@"):
            return None
        partial = word[1:]
        segment_start = line_start + word_start + 1 + (partial.rfind("/") + 1)
        replace = types.Range(start=ls.positions.position_at(text, segment_start),
                              end=params.position)
        home = ls.service.settings_for(path).home if agent_reading(ls, path).expands_home else None
        items = _path_items(dirname(path), partial, replace, home)
        return types.CompletionList(is_incomplete=False, items=items)
