"""Moving files: rewrite the imports that point at a moved file (and the moved file's own
relative imports) before the move; re-index after it. Renaming a Claude Code memory (from its
`name:` value or a `[[name]]` link to it): its `name:` and every link naming it, one edit."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.agents import all_agents, reading_agent
from memlens.agents.base import MemoryAgent
from memlens.files.nodecompat import dirname
from memlens.lsp.convert import path_of, uri_of
from memlens.lsp.errors import RequestFailed
from memlens.lsp.links import claude_memory_links, editor_text, reference_target

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
    """The edits that keep every reference to a moved file (and a moved file's own relative
    references) naming the same file: each file some agent reads references in, rewritten by
    the rules of the agent reading it (`agent_reading`), then by any other agent that reads it
    for the references only that agent sees. A reference the agent would read as another path
    once rewritten (a space in the new path) is left as it is, and the user is told."""
    changes: dict[str, list[types.TextEdit]] = {}

    def new_location(path: str) -> str:
        for old, new in renames:
            moved = _moved(path, old, new)
            if moved is not None:
                return moved
        return path

    left: list[str] = []
    for source, agents in _sources_with_readers(ls).items():
        text = ls.text_of(source)
        if text is None:
            continue
        taken: set[int] = set()
        for agent in agents:
            left += _rewrite_references(ls, agent, source, text, new_location, taken, changes)
    if left:
        shown = "; ".join(left[:3]) + (f" (and {len(left) - 3} more)" if len(left) > 3 else "")
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Warning,
            message=f"Memory Lens left {len(left)} reference(s) as they are: {shown}."))
    return types.WorkspaceEdit(changes=changes)


def _sources_with_readers(ls: MemlensServer) -> dict[str, list[MemoryAgent]]:
    """Every file an agent with references reads, with those agents: the one whose rules the
    file is read with first (`agents.reading_agent`, as links.py `agent_reading` asks it),
    then the others (a CLAUDE.md a GEMINI.md imports is both agents'). The index renders some
    agents' memory itself and follows their references in its import graph; every other
    agent's files are its workspace check's. A file in two folders' indexes (the user's
    global memory) is once."""
    indexes = ls.service.indexes()
    read_by: dict[str, set[str]] = {}
    for agent in all_agents():
        if not agent.has_references:
            continue
        read_by[agent.id] = {s for index in indexes for s in (
            index.graph.files() if agent.rendered_by_index
            else index.agent_check(agent).sources)}
    readers: dict[str, list[MemoryAgent]] = {}
    for agent in all_agents():
        for source in read_by.get(agent.id, ()):
            readers.setdefault(source, []).append(agent)
    out = {}
    for source in sorted(readers):
        # What links.py `agent_reading` answers, each check's sources looked up once.
        def includes(agent: MemoryAgent, source: str = source) -> bool:
            return not agent.rendered_by_index and source in read_by.get(agent.id, ())

        first = reading_agent(source, ls.service.settings_for(source), includes)
        out[source] = [first, *(a for a in readers[source] if a is not first)]
    return out


def _rewrite_references(ls: MemlensServer, agent: MemoryAgent, source: str, text: str,
                        new_location: Callable[[str], str], taken: set[int],
                        changes: dict[str, list[types.TextEdit]]) -> list[str]:
    """`agent`'s references in `source` that name a moved file (or, `source` moving, any
    relative one), rewritten in the form they were written (Claude Code: `@~/…`, `@/abs`,
    `@./rel`); one another agent of the file read already (`taken`: their offsets) is
    theirs. Returns what was left as it is, said for the user."""
    source_after = new_location(source)
    home = ls.service.settings_for(source).home
    left = []
    for token in agent.find_references(text):
        if token.in_code or token.start in taken:
            continue
        taken.add(token.start)
        target = reference_target(ls, agent, source, token.path)
        target_after = new_location(target)
        if target_after == target and source_after == source:
            continue
        new_path = agent.rewrite_reference(token.path, dirname(source_after), target_after,
                                           home)
        if new_path == token.path:
            continue
        if not _reads_back(agent, new_path, source_after, target_after, home):
            left.append(f"`@{token.path}` in {posixpath.basename(source)} would become "
                        f"`@{new_path}`, which {agent.label} reads as another path")
            continue
        rng = ls.positions.range_of(text, token.start + 1, token.end)
        changes.setdefault(uri_of(source), []).append(types.TextEdit(range=rng,
                                                                     new_text=new_path))
    return left


def _reads_back(agent: MemoryAgent, written: str, source: str, target: str, home: str) -> bool:
    """`@written` in `source` is one reference `agent` reads, naming `target` (a path holding
    a space or a `#` is read as a shorter one by an agent whose path ends there)."""
    tokens = [t for t in agent.find_references(f"@{written}\n") if not t.in_code]
    return (len(tokens) == 1 and tokens[0].start == 0 and tokens[0].end == len(written) + 1
            and agent.resolve_reference(source, tokens[0].path, home) == target)


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
