"""The links between memory files, as several features need them: which agent's reference
rules a file is read with, where a reference points, and who imports a file (find references,
the "imported by N" lens), and Claude Code's `[[name]]` links between its auto memories."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.agents import checked_agents, reading_agent
from memlens.agents.base import MemoryAgent
from memlens.lsp.convert import path_of, uri_of

if TYPE_CHECKING:
    from memlens.agents.claude.memory_links import MemoryLinks, Span
    from memlens.lsp.state import MemlensServer


def reference_target(ls: MemlensServer, agent: MemoryAgent, path: str, raw: str) -> str:
    """The file `@raw` in `path` names, by `agent`'s rules."""
    return agent.resolve_reference(path, raw, ls.service.settings_for(path).home)


def agent_reading(ls: MemlensServer, path: str) -> MemoryAgent:
    """The agent whose reference rules `path` is read with: the agent it belongs to, or
    another agent that includes it (a CLAUDE.md including an AGENTS.md), else Gemini CLI,
    whose `@import`s the index's graph follows everywhere."""
    indexes = ls.service.indexes()
    return reading_agent(path, ls.service.settings_for(path),
                         lambda agent: any(path in index.agent_check(agent).sources
                                           for index in indexes))


def shown_reading_agent(ls: MemlensServer, path: str) -> MemoryAgent | None:
    """The agent whose reference rules `path` is read with (`agent_reading`), when that agent
    is shown where `path` is (lsp/agents_shown.py); None otherwise: a file no agent with
    references reads falls to Gemini CLI's rules, which are nobody's where Gemini CLI is not
    shown, so the editor follows no reference there (hover, links, symbols, code actions)."""
    agent = agent_reading(ls, path)
    return agent if agent.id in ls.service.agents_shown_for(path) else None


def _checked_agents_references(ls: MemlensServer, target: str) -> list[types.Location]:
    """References in the files the checked agents load that name `target` (Claude Code's
    `@./x`, `@~/x`, `@/abs`): a CLAUDE.md including an AGENTS.md is one of its references."""
    locations = []
    for agent in checked_agents():
        sources = dict.fromkeys(s for index in ls.service.indexes()
                                for s in index.agent_check(agent).sources)
        for source in sources:
            if agent_reading(ls, source) is not agent:
                continue
            text = ls.text_of(source)
            if text is None:
                continue
            for token in agent.find_references(text):
                if not token.in_code and reference_target(ls, agent, source,
                                                          token.path) == target:
                    locations.append(types.Location(
                        uri=uri_of(source),
                        range=ls.positions.range_of(text, token.start, token.end)))
    return locations


def importer_locations(ls: MemlensServer, target: str) -> list[types.Location]:
    """Where `target` is imported: Gemini CLI `@imports` (the graph of any folder's index) and
    the checked agents' references naming it (what find references and the "imported by N"
    lens show)."""
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
              for loc in [*locations, *_checked_agents_references(ls, target)]}
    return list(unique.values())


def claude_memory_folder(ls: MemlensServer, path: str) -> str | None:
    """The Claude Code auto-memory folder holding `path` (a topic file), among the folders of
    the workspace's folders (memory_folder.py: each folder's, with its HOME); None when
    `path` is in none of them."""
    from memlens.agents.claude.memory_folder import auto_memory_folder
    from memlens.agents.claude.memory_links import holds

    for folder in ls.service.folders or ["/"]:
        home = ls.service.index_of_folder(folder).settings.home
        place = auto_memory_folder(home, folder).folder
        if place is not None and holds(place, path):
            return place
    return None


def editor_text(ls: MemlensServer, path: str) -> str | None:
    """`path`'s text as the editor has it: an open document's (topic files are no files the
    index follows, so their buffers are not in it), else what the index reads."""
    for uri in ls.workspace.text_documents:
        if path_of(uri) == path:
            return ls.workspace.get_text_document(uri).source
    return ls.text_of(path)


def claude_memory_links(ls: MemlensServer, path: str) -> MemoryLinks | None:
    """The `[[name]]` links of the auto-memory folder holding `path`, read as the editor has
    them (an open topic file not saved yet counts)."""
    from memlens.agents.claude.memory_links import MemoryLinks

    folder = claude_memory_folder(ls, path)
    if folder is None:
        return None
    open_paths = [p for uri in ls.workspace.text_documents if (p := path_of(uri))]
    return MemoryLinks.scan(folder, lambda p: editor_text(ls, p), [*open_paths, path])


def memory_span_location(ls: MemlensServer, span: Span) -> types.Location | None:
    text = editor_text(ls, span.path)
    if text is None:
        return None
    return types.Location(uri=uri_of(span.path),
                          range=ls.positions.range_of(text, span.start, span.end))
