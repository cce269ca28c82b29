"""Go to definition and document links on `@imports`; find references (who imports a file)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lsprotocol import types

from ..imports import find_imports
from ..nodecompat import dirname, resolve
from .convert import path_of, uri_of
from .links import claude_target, importer_locations, is_claude_file

if TYPE_CHECKING:
    from .server import MemlensServer

_FILE_START = types.Range(start=types.Position(line=0, character=0),
                          end=types.Position(line=0, character=0))


def import_target_at(ls: MemlensServer, uri: str, position: types.Position) -> str | None:
    path = path_of(uri)
    if path is None:
        return None
    text = ls.text_of(path)
    if text is None:
        return None
    if is_claude_file(ls, path):
        from ..dialects.claude import find_includes

        offset = ls.positions.offset_at(text, position)
        for include in find_includes(text):
            if not include.in_code and include.start <= offset <= include.end:
                return claude_target(ls, path, include.path)
        return None
    token = ls.positions.token_at(text, position)
    if token is None:
        return None
    return resolve(dirname(path), token.path)


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
        if is_claude_file(ls, path):
            from ..dialects.claude import find_includes

            tokens = [(t, claude_target(ls, path, t.path)) for t in find_includes(text)]
        else:
            tokens = [(t, resolve(dirname(path), t.path)) for t in find_imports(text)]
        for token, target in tokens:
            if token.in_code:
                continue
            if os.path.isfile(target):
                rng = ls.positions.range_of(text, token.start, token.end)
                links.append(types.DocumentLink(range=rng, target=uri_of(target),
                                                tooltip=target))
        return links

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: MemlensServer, params: types.ReferenceParams) -> list[types.Location]:
        path = path_of(params.text_document.uri)
        if path is None:
            return []
        target = import_target_at(ls, params.text_document.uri, params.position) or path
        return importer_locations(ls, target)
