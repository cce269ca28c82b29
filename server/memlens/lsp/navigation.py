"""Go to definition and document links on `@imports`; find references (who imports a file).
In Claude Code's auto-memory topic files, `[[name]]` links too: to the memory of that name, and
from a memory (its `name:` or a link to it) to every link naming it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.lsp.convert import path_of, uri_of
from memlens.lsp.links import (
    claude_memory_links,
    editor_text,
    importer_locations,
    memory_span_location,
    reference_target,
    shown_reading_agent,
)

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

_FILE_START = types.Range(start=types.Position(line=0, character=0),
                          end=types.Position(line=0, character=0))


def import_target_at(ls: MemlensServer, uri: str, position: types.Position) -> str | None:
    path = path_of(uri)
    if path is None:
        return None
    text = ls.text_of(path)
    if text is None:
        return None
    agent = shown_reading_agent(ls, path)
    if agent is None:
        return None
    offset = ls.positions.offset_at(text, position)
    for token in agent.find_references(text):
        if not token.in_code and token.start <= offset <= token.end:
            return reference_target(ls, agent, path, token.path)
    return None


def memory_link_definition(ls: MemlensServer, uri: str, position: types.Position
                           ) -> tuple[bool, types.Location | None]:
    """(whether a `[[name]]` is at `position`, the memory it names: its `name:` value; None
    when it names no memory yet)."""
    path = path_of(uri)
    links = claude_memory_links(ls, path) if path else None
    text = editor_text(ls, path) if path else None
    if path is None or links is None or text is None:
        return False, None
    link = links.link_at(path, ls.positions.offset_at(text, position))
    if link is None:
        return False, None
    for memory in links.named(link.name):
        if memory.name_span is not None:
            return True, memory_span_location(ls, memory.name_span)
        return True, types.Location(uri=uri_of(memory.path), range=_FILE_START)
    return True, None


def memory_link_references(ls: MemlensServer, uri: str, position: types.Position,
                           declaration: bool) -> list[types.Location] | None:
    """Every `[[name]]` naming the memory at `position` (a link, or its own `name:` value),
    and its `name:` with `declaration`; None when no memory name is there."""
    path = path_of(uri)
    links = claude_memory_links(ls, path) if path else None
    text = editor_text(ls, path) if path else None
    if path is None or links is None or text is None:
        return None
    span = links.name_at(path, ls.positions.offset_at(text, position))
    if span is None:
        return None
    return [loc for s in links.references(span.name, declaration=declaration)
            if (loc := memory_span_location(ls, s)) is not None]


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: MemlensServer, params: types.DefinitionParams) -> types.Location | None:
        on_link, memory = memory_link_definition(ls, params.text_document.uri,
                                                 params.position)
        if on_link:
            return memory
        target = import_target_at(ls, params.text_document.uri, params.position)
        if target is None or not os.path.exists(target):
            return None
        return types.Location(uri=uri_of(target), range=_FILE_START)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    def document_link(ls: MemlensServer, params: types.DocumentLinkParams
                      ) -> list[types.DocumentLink]:
        path = path_of(params.text_document.uri)
        text = ls.text_of(path) if path else None
        agent = shown_reading_agent(ls, path) if path else None
        if path is None or text is None or agent is None:
            return []
        links = []
        for token in agent.find_references(text):
            if token.in_code:
                continue
            target = reference_target(ls, agent, path, token.path)
            if os.path.isfile(target):
                links.append(types.DocumentLink(
                    range=ls.positions.range_of(text, token.start, token.end),
                    target=uri_of(target), tooltip=target))
        return links

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: MemlensServer, params: types.ReferenceParams) -> list[types.Location]:
        path = path_of(params.text_document.uri)
        if path is None:
            return []
        memories = memory_link_references(ls, params.text_document.uri, params.position,
                                          params.context.include_declaration)
        if memories is not None:
            return memories
        target = import_target_at(ls, params.text_document.uri, params.position) or path
        return importer_locations(ls, target)
