"""Go to definition and document links on `@imports`; find references (who imports a file)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.lsp.convert import path_of, uri_of
from memlens.lsp.links import agent_reading, importer_locations, reference_target

if TYPE_CHECKING:
    from memlens.lsp.server import MemlensServer

_FILE_START = types.Range(start=types.Position(line=0, character=0),
                          end=types.Position(line=0, character=0))


def import_target_at(ls: MemlensServer, uri: str, position: types.Position) -> str | None:
    path = path_of(uri)
    if path is None:
        return None
    text = ls.text_of(path)
    if text is None:
        return None
    agent = agent_reading(ls, path)
    offset = ls.positions.offset_at(text, position)
    for token in agent.find_references(text):
        if not token.in_code and token.start <= offset <= token.end:
            return reference_target(ls, agent, path, token.path)
    return None


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: MemlensServer, params: types.DefinitionParams) -> types.Location | None:
        target = import_target_at(ls, params.text_document.uri, params.position)
        if target is None or not os.path.exists(target):
            return None
        return types.Location(uri=uri_of(target), range=_FILE_START)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    def document_link(ls: MemlensServer, params: types.DocumentLinkParams
                      ) -> list[types.DocumentLink]:
        path = path_of(params.text_document.uri)
        text = ls.text_of(path) if path else None
        if path is None or text is None:
            return []
        links = []
        agent = agent_reading(ls, path)
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
        target = import_target_at(ls, params.text_document.uri, params.position) or path
        return importer_locations(ls, target)
