"""Custom requests: memlens/show, memlens/list, memlens/refresh, memlens/jit."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field
from pygls.exceptions import JsonRpcInvalidParams

from ..agents import agent_by_id, other_agents, owner_of, primary
from ..index import WorkspaceIndex
from ..model import Wire
from ..nodecompat import dirname
from ..results import ContextSection, JitFile, ListedFile, ListResult
from ..trust import memory_summary, restricted_notice, rules_file_to_open
from ..views import truncate
from .convert import path_of
from .params import parse_params

if TYPE_CHECKING:
    from .server import MemlensServer

SHOW, LIST, REFRESH, JIT = "memlens/show", "memlens/list", "memlens/refresh", "memlens/jit"


class UriParams(Wire):
    uri: str


class ShowParams(Wire):
    uri: str
    # Whose view: Gemini CLI's, Claude Code's or an AGENTS.md agent's. Unset: the dialect of
    # the file named by `uri` (a CLAUDE.md shows Claude Code's), else Gemini CLI's.
    dialect: Literal["gemini", "claude", "agents"] | None = None


class ShowResponse(Wire):
    dialect: str = "gemini"
    content: str
    files: list[str]
    file_count: int
    mode: str
    trusted: bool
    prompt: str
    session_memory: str
    # Characters of the loaded files (imports expanded): what the Memory view's per-file
    # figures add up to; `content` adds the source markers.
    chars: int = 0
    summary: str = ""  # e.g. "2 memory files · 1,391 chars", as the code lens says it
    notice: str | None = None  # Restricted Mode: why project memory is missing
    trust_rules: str | None = None  # as TreeFolder.trust_rules
    # Where each file's text lies in `content`, so the client links its markers.
    sections: list[ContextSection] = Field(default_factory=list)


class RefreshResponse(Wire):
    file_count: int


class JitResponse(Wire):
    uri: str
    files: list[JitFile]
    context: str


def _folder_of(ls: MemlensServer, uri: str) -> str:
    path = path_of(uri)
    if path is None:
        raise JsonRpcInvalidParams(f"not a file URI: {uri}")
    folder = ls.service.folder_for(path)
    if folder is None:
        raise JsonRpcInvalidParams(f"{path} is outside every workspace folder")
    return folder


def _dialect_of(ls: MemlensServer, uri: str) -> str:
    owner = owner_of(path_of(uri) or "", ls.service.settings_for(path_of(uri) or ""))
    return (owner or primary()).id


def context_sections(content: str, files: list[str], dialect: str) -> list[ContextSection]:
    """The sections of a rendered context: each of `files` found by the exact marker line the
    agent's renderer writes for it (`MemoryAgent.section_starts`), in the order they appear. A
    section ends at its end marker (Gemini CLI's), else before the next section, else at the
    last line (a truncated text)."""
    agent = agent_by_id(dialect)
    markers: dict[str, str] = {}
    for path in files:
        markers.update(dict.fromkeys(agent.section_starts(path), path))
    lines = content.split("\n")
    starts = [(n, markers[line]) for n, line in enumerate(lines) if line in markers]
    sections = []
    for i, (start, path) in enumerate(starts):
        last = (starts[i + 1][0] if i + 1 < len(starts) else len(lines)) - 1
        end = last
        closing = agent.section_end(path)
        if closing is not None:
            end = next((n for n in range(start + 1, last + 1) if lines[n] == closing), last)
        while end > start and not lines[end].strip():
            end -= 1
        sections.append(ContextSection(path=path, start_line=start, end_line=end))
    return sections


def _other_dialect_show(ls: MemlensServer, uri: str, workspace: str,
                        dialect: str) -> ShowResponse:
    """What another agent (Claude Code, an AGENTS.md agent) reads working on `uri` (a file or
    a folder)."""
    path = path_of(uri) or workspace
    is_folder = os.path.isdir(path)
    index = ls.service.index_for(path)
    agent = agent_by_id(dialect)
    memory = agent.load(path if is_folder else dirname(path), index.settings, index.reader,
                        target=None if is_folder else path)
    content, _ = truncate(memory.text, index.settings.max_context_chars, agent.receiver)
    files = [f.path for f in memory.files]
    return ShowResponse(dialect=dialect, content=content, files=files, file_count=len(files),
                        mode=memory.mode, trusted=True, prompt="", session_memory="",
                        sections=context_sections(content, files, dialect))


def register(server: MemlensServer) -> None:
    register_tree(server)

    @server.feature(SHOW)
    def show(ls: MemlensServer, params: Any) -> dict[str, object]:
        request: ShowParams = parse_params(ShowParams, params)
        folder = _folder_of(ls, request.uri)
        dialect = request.dialect or _dialect_of(ls, request.uri)
        if dialect != primary().id:
            return _other_dialect_show(ls, request.uri, folder, dialect).wire()
        index = ls.service.index_of_folder(folder)
        result = index.show(folder)
        state = index.folder_states.get(folder)
        trust = state.load.trust_source if state and not result.trusted else None
        chars = sum(len(f.content) for f in state.load.files
                    if f.content is not None) if state else len(result.content)
        return ShowResponse(content=result.content, files=result.files,
                            file_count=result.file_count, mode=result.mode,
                            trusted=result.trusted, prompt=result.prompt,
                            session_memory=result.session_memory, chars=chars,
                            summary=memory_summary(result.file_count, chars),
                            notice=None if result.trusted
                            else restricted_notice(result.file_count, trust, index.settings.home),
                            trust_rules=rules_file_to_open(trust, index.settings.home),
                            sections=context_sections(result.content, result.files,
                                                      "gemini")).wire()

    @server.feature(LIST)
    def list_(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(UriParams, params)
        folder = _folder_of(ls, request.uri)
        state = ls.service.index_of_folder(folder).folder_states[folder]
        files = [ListedFile(path=f.path, tier=f.tier,
                            chars=None if f.content is None else len(f.content))
                 for f in state.load.files]
        return ListResult(cwd=state.load.cwd, mode=state.load.mode, files=files,
                          file_count=state.load.file_count).wire()

    @server.feature(REFRESH)
    async def refresh(ls: MemlensServer, params: Any) -> dict[str, object]:
        await ls.ready.wait()
        service = ls.rebuild()
        # Only open documents get pushed diagnostics: publish computes theirs alone.
        ls.publish(service.diagnosed_paths())
        return RefreshResponse(file_count=len(service.memory_files())).wire()

    @server.feature(JIT)
    def jit(ls: MemlensServer, params: Any) -> dict[str, object]:
        """What JIT loading adds for a file (a preview: nothing is marked loaded)."""
        request = parse_params(UriParams, params)
        path = path_of(request.uri)
        if path is None:
            raise JsonRpcInvalidParams(f"not a file URI: {request.uri}")
        session = ls.service.jit_session_for(path)
        if session is None:
            return JitResponse(uri=request.uri, files=[], context="").wire()
        result = session.preview(path)
        files = [JitFile(path=f.path, chars=len(f.content or "")) for f in result.files]
        return JitResponse(uri=request.uri, files=files, context=result.appendix).wire()



TREE = "memlens/memoryTree"


class TreeImport(Wire):
    text: str  # the token as written, e.g. "@./docs/style.md"
    target: str
    line: int  # 0-based, for the client to reveal
    exists: bool


class TreeFile(Wire):
    path: str
    tier: str
    chars: int | None
    errors: int
    warnings: int
    imports: list[TreeImport]
    note: str | None = None  # e.g. when a Claude Code rule or subfolder file applies


class TreeAgent(Wire):
    """Another agent's memory in the same folder: Claude Code's, or the AGENTS.md files."""

    agent: Literal["claude", "agents"]
    files: list[TreeFile]


class TreeFolder(Wire):
    folder: str
    mode: str
    trusted: bool
    files: list[TreeFile]
    other_agents: list[TreeAgent] = Field(default_factory=list)
    notice: str | None = None  # Restricted Mode: why project memory is missing
    # The trusted folders file, when a DO_NOT_TRUST rule there is why (the client offers to
    # open it rather than VS Code's trust editor).
    trust_rules: str | None = None


class TreeResponse(Wire):
    folders: list[TreeFolder]


def _tree_file(ls: MemlensServer, index: WorkspaceIndex, path: str, tier: str,
               chars: int | None, note: str | None = None, *,
               with_imports: bool = True) -> TreeFile:
    """A row of a folder's tree, its counts from the index serving that folder."""
    diagnostics = index.diagnostics_for(path)
    text = ls.text_of(path) or ""
    imports = []
    for edge in index.graph.imports_of(path) if with_imports else []:
        line = text.count("\n", 0, edge.token.start)
        imports.append(TreeImport(text=f"@{edge.token.path}", target=edge.target, line=line,
                                  exists=os.path.isfile(edge.target)))
    return TreeFile(path=path, tier=tier, chars=chars,
                    errors=sum(d.severity == "error" for d in diagnostics),
                    warnings=sum(d.severity == "warning" for d in diagnostics),
                    imports=imports, note=note)


def _other_agents(ls: MemlensServer, folder: str) -> list[TreeAgent]:
    """Each other agent's files for the folder (Claude Code: its start-up load, rules scoped
    by `paths:`, subfolder CLAUDE.md files it reads when it works there; the AGENTS.md files
    in force)."""
    index = ls.service.index_of_folder(folder)
    agents: list[TreeAgent] = []
    for agent in other_agents():
        rows = [_tree_file(ls, index, f.path, f.label,
                           None if f.content is None else len(f.content), f.note,
                           with_imports=False)
                for f in agent.view_files(folder, index.settings, index.reader,
                                          index.agent_check(agent), index.folder_for)]
        if rows:
            agents.append(TreeAgent.model_validate({"agent": agent.id, "files": rows}))
    return agents


def register_tree(server: MemlensServer) -> None:
    @server.feature(TREE)
    def memory_tree(ls: MemlensServer, params: Any) -> dict[str, object]:
        """Tiers → files → imports for every workspace folder, with problem counts.

        Startup files come first in load order, then the subfolder files JIT would load."""
        folders = []
        for folder in ls.service.folders:
            index = ls.service.index_of_folder(folder)
            state = index.folder_states[folder]
            files = [_tree_file(ls, index, f.path, f.tier, None if f.content is None
                                else len(f.content)) for f in state.load.files]
            listed = {f.path for f in files}
            # Untrusted: the folder's own memory files (open in the editor) are not read by
            # the agent at all; they are listed apart, not as loaded just in time.
            tier = "jit" if state.load.trusted else "restricted"
            for path, loaded in sorted(index.roots.items()):
                if (loaded.tier == "jit" and path not in listed
                        and ls.service.folder_for(path) == folder):
                    files.append(_tree_file(ls, index, path, tier, None if loaded.content is None
                                            else len(loaded.content)))
            trust = None if state.load.trusted else state.load.trust_source
            home = index.settings.home
            notice = (None if state.load.trusted
                      else restricted_notice(state.load.file_count, trust, home))
            folders.append(TreeFolder(folder=folder, mode=state.load.mode,
                                      trusted=state.load.trusted, files=files,
                                      other_agents=_other_agents(ls, folder), notice=notice,
                                      trust_rules=rules_file_to_open(trust, home)))
        return TreeResponse(folders=folders).wire()
