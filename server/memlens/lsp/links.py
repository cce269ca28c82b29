"""The links between memory files, as several features need them: which include syntax a file
is read with, where a Claude Code include points, who imports a file (find references, the
"imported by N" lens), and an import path written relative to its file (code actions,
renames)."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from lsprotocol import types

from ..dialects.claude import CLAUDE_FILE_NAMES
from ..nodecompat import dirname, resolve
from .convert import uri_of

if TYPE_CHECKING:
    from .server import MemlensServer


def relative_import(from_dir: str, target: str) -> str:
    rel = posixpath.relpath(target, from_dir)
    return rel if rel.startswith("../") else f"./{rel}"


def claude_target(ls: MemlensServer, path: str, raw: str) -> str:
    if raw.startswith("~/"):
        return resolve(ls.service.settings_for(path).home, raw[2:])
    return resolve(dirname(path), raw)


def claude_sources(ls: MemlensServer) -> list[str]:
    """The files Claude Code reads with its include rules, over every folder's index."""
    return list(dict.fromkeys(s for index in ls.service.indexes() for s in index.claude_sources))


def is_claude_file(ls: MemlensServer, path: str) -> bool:
    """Read with Claude Code's include rules: its own files, and what they include."""
    return posixpath.basename(path) in CLAUDE_FILE_NAMES or (
        any(path in index.claude_sources for index in ls.service.indexes())
        and posixpath.basename(path) not in ls.service.settings_for(path).context_file_names)


def _claude_references(ls: MemlensServer, target: str) -> list[types.Location]:
    """Claude Code includes (`@./x`, `@~/x`, `@/abs`) in the files it loads that name
    `target`: a CLAUDE.md including an AGENTS.md is one of the AGENTS.md's references."""
    from ..dialects.claude import find_includes

    locations = []
    for source in claude_sources(ls):
        if not is_claude_file(ls, source):
            continue
        text = ls.text_of(source)
        if text is None:
            continue
        for include in find_includes(text):
            if not include.in_code and claude_target(ls, source, include.path) == target:
                locations.append(types.Location(
                    uri=uri_of(source),
                    range=ls.positions.range_of(text, include.start, include.end)))
    return locations


def importer_locations(ls: MemlensServer, target: str) -> list[types.Location]:
    """Where `target` is imported: Gemini CLI `@imports` (in any folder's index) and Claude
    Code includes naming it (what find references and the "imported by N" code lens show)."""
    locations = []
    for index in ls.service.indexes():
        for edge in index.graph.importers_of(target):
            text = ls.text_of(edge.source)
            if text is None:
                continue
            locations.append(types.Location(
                uri=uri_of(edge.source),
                range=ls.positions.range_of(text, edge.token.start, edge.token.end)))
    # A file both agents read (a GEMINI.md importing a CLAUDE.md), or one in two folders'
    # indexes (the user's global memory), may appear twice.
    unique = {(loc.uri, loc.range.start.line, loc.range.start.character): loc
              for loc in [*locations, *_claude_references(ls, target)]}
    return list(unique.values())
