"""Go to definition and document links on `@imports`; find references (who imports a file)."""

from __future__ import annotations

import os
import posixpath

from lsprotocol import types

from ..dialects.claude import CLAUDE_FILE_NAMES
from ..imports import find_imports
from ..nodecompat import dirname, resolve
from .convert import offset_at, path_of, range_of, token_at, uri_of
from .server import MemlensServer

_FILE_START = types.Range(start=types.Position(line=0, character=0),
                          end=types.Position(line=0, character=0))


def claude_target(ls: MemlensServer, path: str, raw: str) -> str:
    if raw.startswith("~/"):
        return resolve(ls.require_index().settings.home, raw[2:])
    return resolve(dirname(path), raw)


def is_claude_file(ls: MemlensServer, path: str) -> bool:
    """Read with Claude Code's include rules: its own files, and what they include."""
    return posixpath.basename(path) in CLAUDE_FILE_NAMES or (
        path in ls.require_index().claude_sources
        and posixpath.basename(path) not in ls.require_index().settings.context_file_names)


def import_target_at(ls: MemlensServer, uri: str, position: types.Position) -> str | None:
    path = path_of(uri)
    if path is None:
        return None
    text = ls.text_of(path)
    if text is None:
        return None
    if is_claude_file(ls, path):
        from ..dialects.claude import find_includes

        offset = offset_at(text, position)
        for include in find_includes(text):
            if not include.in_code and include.start <= offset <= include.end:
                return claude_target(ls, path, include.path)
        return None
    token = token_at(text, position)
    if token is None:
        return None
    return resolve(dirname(path), token.path)


def _claude_references(ls: MemlensServer, target: str) -> list[types.Location]:
    """Claude Code includes (`@./x`, `@~/x`, `@/abs`) in the files it loads that name
    `target`: a CLAUDE.md including an AGENTS.md is one of the AGENTS.md's references."""
    from ..dialects.claude import find_includes

    locations = []
    for source in ls.require_index().claude_sources:
        if not is_claude_file(ls, source):
            continue
        text = ls.text_of(source)
        if text is None:
            continue
        for include in find_includes(text):
            if not include.in_code and claude_target(ls, source, include.path) == target:
                locations.append(types.Location(
                    uri=uri_of(source), range=range_of(text, include.start, include.end)))
    return locations


def importer_locations(ls: MemlensServer, target: str) -> list[types.Location]:
    """Where `target` is imported: Gemini CLI `@imports` and Claude Code includes naming it
    (what find references and the "imported by N" code lens show)."""
    locations = []
    for edge in ls.require_index().graph.importers_of(target):
        text = ls.text_of(edge.source)
        if text is None:
            continue
        locations.append(types.Location(
            uri=uri_of(edge.source), range=range_of(text, edge.token.start, edge.token.end)))
    # A file both agents read (a GEMINI.md importing a CLAUDE.md) may appear twice.
    unique = {(loc.uri, loc.range.start.line, loc.range.start.character): loc
              for loc in [*locations, *_claude_references(ls, target)]}
    return list(unique.values())


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
                links.append(types.DocumentLink(range=range_of(text, token.start, token.end),
                                                target=uri_of(target), tooltip=target))
        return links

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: MemlensServer, params: types.ReferenceParams) -> list[types.Location]:
        path = path_of(params.text_document.uri)
        if path is None:
            return []
        target = import_target_at(ls, params.text_document.uri, params.position) or path
        return importer_locations(ls, target)
