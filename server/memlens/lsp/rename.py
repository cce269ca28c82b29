"""Moving files: rewrite the imports that point at a moved file (and the moved file's own
relative imports) before the move; re-index after it. Renaming a Claude Code memory (from its
`name:` value or a `[[name]]` link to it): its `name:` and every link naming it, one edit."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.agents import agent_by_id, checked_agents
from memlens.agents.base import MemoryAgent
from memlens.files.nodecompat import dirname
from memlens.lsp.convert import path_of, uri_of
from memlens.lsp.errors import RequestFailed
from memlens.lsp.links import agent_reading, claude_memory_links, editor_text, reference_target

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

_OPS = [types.FileOperationFilter(pattern=types.FileOperationPattern(glob="**/*"))]
_FILE_OPS = types.FileOperationRegistrationOptions(filters=_OPS)


def _moved(path: str, old: str, new: str) -> str | None:
    if path == old:
        return new
    if path.startswith(old.rstrip("/") + "/"):
        return new.rstrip("/") + path[len(old.rstrip("/")):]
    return None


def rename_edits(ls: MemlensServer, renames: list[tuple[str, str]]) -> types.WorkspaceEdit:
    changes: dict[str, list[types.TextEdit]] = {}

    def new_location(path: str) -> str:
        for old, new in renames:
            moved = _moved(path, old, new)
            if moved is not None:
                return moved
        return path

    # The index's import graph holds Gemini CLI's `@import`s (it renders that agent's memory:
    # RenderedGeminiMemory), rewritten by its rules. A file in two folders' indexes (the
    # user's global memory) is rewritten once.
    gemini = agent_by_id("gemini")
    graphs = {source: index.graph for index in reversed(ls.service.indexes())
              for source in index.graph.files()}
    for source, graph in sorted(graphs.items()):
        text = ls.text_of(source)
        if text is None:
            continue
        source_after = new_location(source)
        for edge in graph.imports_of(source):
            target_after = new_location(edge.target)
            if target_after == edge.target and source_after == source:
                continue
            new_path = gemini.rewrite_reference(edge.token.path, dirname(source_after),
                                                target_after,
                                                ls.service.settings_for(source).home)
            if new_path == edge.token.path:
                continue
            rng = ls.positions.range_of(text, edge.token.start + 1, edge.token.end)
            changes.setdefault(uri_of(source), []).append(types.TextEdit(range=rng,
                                                                         new_text=new_path))
    _checked_agents_edits(ls, new_location, changes)
    return types.WorkspaceEdit(changes=changes)


def _checked_agents_edits(ls: MemlensServer, new_location: Callable[[str], str],
                          changes: dict[str, list[types.TextEdit]]) -> None:
    """The checked agents' references (in their files and what they include) that name a
    moved file, rewritten in the form they were written (Claude Code: `@~/…`, `@/abs`,
    `@./rel`)."""
    for agent in checked_agents():
        sources = dict.fromkeys(s for index in ls.service.indexes()
                                for s in index.agent_check(agent).sources)
        for source in sources:
            text = ls.text_of(source)
            if text is None or agent_reading(ls, source) is not agent:
                continue
            _rewrite_references(ls, agent, source, text, new_location, changes)


def _rewrite_references(ls: MemlensServer, agent: MemoryAgent, source: str, text: str,
                        new_location: Callable[[str], str],
                        changes: dict[str, list[types.TextEdit]]) -> None:
    source_after = new_location(source)
    taken = {(e.range.start.line, e.range.start.character)
             for e in changes.get(uri_of(source), [])}
    for token in agent.find_references(text):
        if token.in_code:
            continue
        target = reference_target(ls, agent, source, token.path)
        target_after = new_location(target)
        if target_after == target and source_after == source:
            continue
        new_path = agent.rewrite_reference(token.path, dirname(source_after), target_after,
                                           ls.service.settings_for(source).home)
        rng = ls.positions.range_of(text, token.start + 1, token.end)
        if new_path == token.path or (rng.start.line, rng.start.character) in taken:
            continue
        changes.setdefault(uri_of(source), []).append(types.TextEdit(range=rng,
                                                                     new_text=new_path))


def _memory_name_at(ls: MemlensServer, uri: str, position: types.Position
                    ) -> tuple[str, str, int] | None:
    """(path, text, offset) when a memory name (a `[[name]]` or a `name:` value) of a Claude
    Code topic file is at `position`."""
    path = path_of(uri)
    text = editor_text(ls, path) if path else None
    if path is None or text is None:
        return None
    return path, text, ls.positions.offset_at(text, position)


def memory_rename_edit(ls: MemlensServer, uri: str, position: types.Position,
                       new_name: str) -> types.WorkspaceEdit | None:
    at = _memory_name_at(ls, uri, position)
    links = claude_memory_links(ls, at[0]) if at else None
    span = links.name_at(at[0], at[2]) if links and at else None
    if links is None or span is None:
        return None
    try:
        spans = links.rename(span.name, new_name)
    except ValueError as err:
        raise RequestFailed(str(err)) from err
    changes: dict[str, list[types.TextEdit]] = {}
    for path, items in spans.items():
        text = editor_text(ls, path)
        if text is None:
            continue
        changes[uri_of(path)] = [types.TextEdit(range=ls.positions.range_of(text, s.start, s.end),
                                                new_text=new_name.strip()) for s in items]
    return types.WorkspaceEdit(changes=changes)


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: MemlensServer, params: types.PrepareRenameParams
                       ) -> types.PrepareRenamePlaceholder | None:
        at = _memory_name_at(ls, params.text_document.uri, params.position)
        links = claude_memory_links(ls, at[0]) if at else None
        span = links.name_at(at[0], at[2]) if links and at else None
        if at is None or span is None:
            return None
        return types.PrepareRenamePlaceholder(
            range=ls.positions.range_of(at[1], span.start, span.end), placeholder=span.name)

    @server.feature(types.TEXT_DOCUMENT_RENAME, types.RenameOptions(prepare_provider=True))
    def rename(ls: MemlensServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        return memory_rename_edit(ls, params.text_document.uri, params.position,
                                  params.new_name)

    @server.feature(types.WORKSPACE_WILL_RENAME_FILES, _FILE_OPS)
    def will_rename(ls: MemlensServer, params: types.RenameFilesParams
                    ) -> types.WorkspaceEdit | None:
        renames = [(o, n) for f in params.files
                   if (o := path_of(f.old_uri)) and (n := path_of(f.new_uri))]
        edit = rename_edits(ls, renames)
        return edit if edit.changes else None

    @server.feature(types.WORKSPACE_DID_RENAME_FILES, _FILE_OPS)
    def did_rename(ls: MemlensServer, params: types.RenameFilesParams) -> None:
        touched: set[str] = set()
        for item in params.files:
            old, new = path_of(item.old_uri), path_of(item.new_uri)
            if old is None or new is None:
                continue
            if posixpath.isdir(new):
                touched |= ls.rebuild().memory_files()
                continue
            ls.service.forget_buffer(old)
            touched |= ls.service.file_changed(old) | ls.service.file_changed(new)
        ls.service.forget_sessions()
        ls.publish(touched)
