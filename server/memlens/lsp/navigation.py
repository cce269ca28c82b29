"""Go to definition and document links on `@imports`; find references (who imports a file)."""

from __future__ import annotations

import os

from lsprotocol import types

from ..agents import other_agents, reading_agent
from ..agents.base import MemoryAgent
from .convert import offset_at, path_of, range_of, uri_of
from .server import MemlensServer

_FILE_START = types.Range(start=types.Position(line=0, character=0),
                          end=types.Position(line=0, character=0))


def reference_target(ls: MemlensServer, agent: MemoryAgent, path: str, raw: str) -> str:
    """The file `@raw` in `path` names, by `agent`'s rules."""
    return agent.resolve_reference(path, raw, ls.require_index().settings.home)


def agent_reading(ls: MemlensServer, path: str) -> MemoryAgent:
    """The agent whose reference rules `path` is read with: the agent it belongs to, or
    another agent that includes it (a CLAUDE.md including an AGENTS.md), else Gemini CLI."""
    index = ls.require_index()
    return reading_agent(path, index.settings,
                         lambda agent: path in index.agent_check(agent).sources)


def import_target_at(ls: MemlensServer, uri: str, position: types.Position) -> str | None:
    path = path_of(uri)
    if path is None:
        return None
    text = ls.text_of(path)
    if text is None:
        return None
    agent = agent_reading(ls, path)
    offset = offset_at(text, position)
    for token in agent.find_references(text):
        if not token.in_code and token.start <= offset <= token.end:
            return reference_target(ls, agent, path, token.path)
    return None


def _other_agents_references(ls: MemlensServer, target: str) -> list[types.Location]:
    """References in the files the other agents load that name `target` (Claude Code's
    `@./x`, `@~/x`, `@/abs`): a CLAUDE.md including an AGENTS.md is one of its references."""
    locations = []
    for agent in other_agents():
        for source in ls.require_index().agent_check(agent).sources:
            if agent_reading(ls, source) is not agent:
                continue
            text = ls.text_of(source)
            if text is None:
                continue
            for token in agent.find_references(text):
                if not token.in_code and reference_target(ls, agent, source,
                                                          token.path) == target:
                    locations.append(types.Location(
                        uri=uri_of(source), range=range_of(text, token.start, token.end)))
    return locations


def importer_locations(ls: MemlensServer, target: str) -> list[types.Location]:
    """Where `target` is imported: Gemini CLI `@imports` and the other agents' references
    naming it (what find references and the "imported by N" code lens show)."""
    locations = []
    for edge in ls.require_index().graph.importers_of(target):
        text = ls.text_of(edge.source)
        if text is None:
            continue
        locations.append(types.Location(
            uri=uri_of(edge.source), range=range_of(text, edge.token.start, edge.token.end)))
    # A file both agents read (a GEMINI.md importing a CLAUDE.md) may appear twice.
    unique = {(loc.uri, loc.range.start.line, loc.range.start.character): loc
              for loc in [*locations, *_other_agents_references(ls, target)]}
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
        agent = agent_reading(ls, path)
        for token in agent.find_references(text):
            if token.in_code:
                continue
            target = reference_target(ls, agent, path, token.path)
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
