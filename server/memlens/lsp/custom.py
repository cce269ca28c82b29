"""Custom requests: memlens/show, memlens/list, memlens/refresh, memlens/jit,
memlens/memoryTree (payloads: protocol/editor.py; failures: errors.py)."""

from __future__ import annotations

import os
import posixpath
from typing import Any

from ..nodecompat import dirname
from ..protocol.editor import (
    Dialect,
    JitResponse,
    RefreshResponse,
    ShowParams,
    ShowResponse,
    SourceLink,
    TreeAgent,
    TreeFile,
    TreeFolder,
    TreeImport,
    TreeResponse,
    UriParams,
)
from ..protocol.memory import ContextSection, JitFile, ListedFile, ListResult
from ..trust import memory_summary, restricted_notice
from ..views import truncate
from .convert import path_of
from .errors import InvalidParams, RequestFailed, parse_params
from .server import MemlensServer

SHOW, LIST, REFRESH, JIT = "memlens/show", "memlens/list", "memlens/refresh", "memlens/jit"


def _folder_of(ls: MemlensServer, uri: str) -> str:
    path = path_of(uri)
    if path is None:
        raise InvalidParams(f"not a file URI: {uri}")
    index = ls.require_index()
    folder = index.folder_for(path)
    if folder is None:
        raise InvalidParams(f"{path} is outside every workspace folder")
    return folder


def _dialect_of(ls: MemlensServer, uri: str) -> Dialect:
    path = path_of(uri) or ""
    name = posixpath.basename(path)
    if name in ls.require_index().settings.context_file_names:
        return "gemini"
    dialects: dict[str, Dialect] = {"CLAUDE.md": "claude", "CLAUDE.local.md": "claude",
                                    "AGENTS.md": "agents"}
    return dialects.get(name, "gemini")


def context_sections(content: str, files: list[str], dialect: str) -> list[ContextSection]:
    """The sections of a rendered context: each of `files` found by the exact marker line the
    dialect's renderer writes for it (render.context_block, ClaudeLoad.render,
    AgentsLoad.render), in the order they appear. A section ends at its end marker (Gemini
    CLI's), else before the next section, else at the last line (a truncated text)."""
    from ..dialects.claude import DESCRIPTIONS

    markers: dict[str, str] = {}
    for path in files:
        if dialect == "gemini":
            markers[f"--- Context from: {path} ---"] = path
        elif dialect == "claude":
            markers.update({f"Contents of {path}{d}:": path for d in DESCRIPTIONS.values()})
        else:
            markers[f"--- {path} ---"] = path
    lines = content.split("\n")
    starts = [(n, markers[line]) for n, line in enumerate(lines) if line in markers]
    sections = []
    for i, (start, path) in enumerate(starts):
        last = (starts[i + 1][0] if i + 1 < len(starts) else len(lines)) - 1
        end = last
        if dialect == "gemini":
            closing = f"--- End of Context from: {path} ---"
            end = next((n for n in range(start + 1, last + 1) if lines[n] == closing), last)
        while end > start and not lines[end].strip():
            end -= 1
        sections.append(ContextSection(path=path, start_line=start, end_line=end))
    return sections


def source_links(content: str, sections: list[ContextSection]) -> list[SourceLink]:
    """Where each section's path is written on its first line (the editor links it there)."""
    lines = content.split("\n")
    links = []
    for section in sections:
        at = lines[section.start_line].find(section.path)
        if at >= 0:
            start = _utf16_length(lines[section.start_line][:at])
            links.append(SourceLink(path=section.path, line=section.start_line, start=start,
                                    end=start + _utf16_length(section.path)))
    return links


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _with_links(response: ShowResponse) -> dict[str, object]:
    """The response on the wire, with the links of its sections."""
    response.links = source_links(response.content, response.sections)
    return response.wire()


def _other_dialect_show(ls: MemlensServer, uri: str, workspace: str,
                        dialect: Dialect) -> ShowResponse:
    """What Claude Code or an AGENTS.md agent reads working on `uri` (a file or a folder)."""
    path = path_of(uri) or workspace
    folder = path if os.path.isdir(path) else dirname(path)
    index = ls.require_index()
    if dialect == "agents":
        from ..dialects.agents import load_agents

        agents = load_agents(folder, index.reader)
        files = [agents.active] if agents.active else []
        text, _ = truncate(agents.render(), index.settings.max_context_chars,
                           "an AGENTS.md agent")
        return ShowResponse(dialect=dialect, content=text, files=files,
                            file_count=len(files), mode="nearest", trusted=True, prompt="",
                            session_memory="",
                            sections=context_sections(text, files, dialect))
    from ..dialects.claude import ClaudeLoader

    loader = ClaudeLoader(index.settings.home, reader=index.reader)
    load = loader.load(folder)
    rules = loader.rules_for(load, path) if not os.path.isdir(path) else []
    content, _ = truncate(load.render(rules), index.settings.max_context_chars, "Claude Code")
    files = [f.path for f in load.files] + [r.path for r in rules]
    return ShowResponse(dialect=dialect, content=content, files=files, file_count=len(files),
                        mode="claude", trusted=True, prompt="", session_memory="",
                        sections=context_sections(content, files, dialect))


def register(server: MemlensServer) -> None:
    register_tree(server)

    @server.feature(SHOW)
    def show(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(ShowParams, params)
        folder = _folder_of(ls, request.uri)
        dialect = request.dialect or _dialect_of(ls, request.uri)
        if dialect != "gemini":
            return _with_links(_other_dialect_show(ls, request.uri, folder, dialect))
        index = ls.require_index()
        result = index.show(folder)
        state = index.folder_states.get(folder)
        chars = sum(len(f.content) for f in state.load.files
                    if f.content is not None) if state else len(result.content)
        return _with_links(ShowResponse(
            content=result.content, files=result.files, file_count=result.file_count,
            mode=result.mode, trusted=result.trusted, prompt=result.prompt,
            session_memory=result.session_memory, chars=chars,
            summary=memory_summary(result.file_count, chars),
            notice=None if result.trusted else restricted_notice(result.file_count),
            sections=context_sections(result.content, result.files, "gemini")))

    @server.feature(LIST)
    def list_(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(UriParams, params)
        index = ls.require_index()
        state = index.folder_states.get(_folder_of(ls, request.uri))
        if state is None:
            raise RequestFailed("the workspace folder is not indexed yet: try again")
        files = [ListedFile(path=f.path, tier=f.tier,
                            chars=None if f.content is None else len(f.content))
                 for f in state.load.files]
        return ListResult(cwd=state.load.cwd, mode=state.load.mode, files=files,
                          file_count=state.load.file_count).wire()

    @server.feature(REFRESH)
    async def refresh(ls: MemlensServer, params: Any) -> dict[str, object]:
        await ls.ready.wait()
        index = ls.rebuild()
        # Only open documents get pushed diagnostics: publish computes theirs alone.
        ls.publish(index.diagnosed_paths())
        return RefreshResponse(file_count=len(index.roots)).wire()

    @server.feature(JIT)
    def jit(ls: MemlensServer, params: Any) -> dict[str, object]:
        """What JIT loading adds for a file (a preview: nothing is marked loaded)."""
        request = parse_params(UriParams, params)
        path = path_of(request.uri)
        if path is None:
            raise InvalidParams(f"not a file URI: {request.uri}")
        session = ls.jit_session_for(path)
        if session is None:
            return JitResponse(uri=request.uri, files=[], context="").wire()
        result = session.preview(path)
        files = [JitFile(path=f.path, chars=len(f.content or "")) for f in result.files]
        return JitResponse(uri=request.uri, files=files, context=result.appendix).wire()



TREE = "memlens/memoryTree"


def _tree_file(ls: MemlensServer, path: str, tier: str, chars: int | None,
               note: str | None = None, *, with_imports: bool = True) -> TreeFile:
    index = ls.require_index()
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
    """Claude Code's files for the folder (start-up load, rules scoped by `paths:`, subfolder
    CLAUDE.md files it reads when it works there) and the workspace's AGENTS.md files."""
    from ..dialects.agents import load_agents
    from ..dialects.claude import ClaudeLoader

    index = ls.require_index()
    agents: list[TreeAgent] = []
    load = ClaudeLoader(index.settings.home, reader=index.reader).load(folder)
    claude = [_tree_file(ls, f.path, f.kind, len(f.content), with_imports=False)
              for f in load.files]
    claude += [_tree_file(ls, r.path, r.kind, len(r.content),
                          "applies to " + ", ".join(r.applies_to), with_imports=False)
               for r in load.conditional_rules]
    listed = {f.path for f in claude}
    for sub in index.claude_folders:
        for name in ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"):
            path = posixpath.join(sub, name)
            read = index.reader.read(path)
            if path not in listed and read.content is not None:
                claude.append(_tree_file(ls, path, "nested", len(read.content),
                                         f"read when Claude Code works in "
                                         f"{posixpath.relpath(sub, folder)}/",
                                         with_imports=False))
    if claude:
        agents.append(TreeAgent(agent="claude", files=claude))
    active = load_agents(folder, index.reader).active
    found = [p for p in index.agents_files if index.folder_for(p) == folder]
    if active and active not in found:
        found.insert(0, active)
    rows = []
    for path in found:
        read = index.reader.read(path)
        note = ("in force here (nearest)" if path == active
                else f"in force in {posixpath.relpath(dirname(path), folder)}/ and below")
        rows.append(_tree_file(ls, path, "agents", None if read.content is None
                               else len(read.content), note, with_imports=False))
    if rows:
        agents.append(TreeAgent(agent="agents", files=rows))
    return agents


def register_tree(server: MemlensServer) -> None:
    @server.feature(TREE)
    def memory_tree(ls: MemlensServer, params: Any) -> dict[str, object]:
        """Tiers → files → imports for every workspace folder, with problem counts.

        Startup files come first in load order, then the subfolder files JIT would load."""
        index = ls.require_index()
        folders = []
        for folder, state in index.folder_states.items():
            files = [_tree_file(ls, f.path, f.tier, None if f.content is None
                                else len(f.content)) for f in state.load.files]
            listed = {f.path for f in files}
            # Untrusted: the folder's own memory files (open in the editor) are not read by
            # the agent at all; they are listed apart, not as loaded just in time.
            tier = "jit" if state.load.trusted else "restricted"
            for path, loaded in sorted(index.roots.items()):
                if loaded.tier == "jit" and path not in listed and index.folder_for(path) == folder:
                    files.append(_tree_file(ls, path, tier, None if loaded.content is None
                                            else len(loaded.content)))
            notice = None if state.load.trusted else restricted_notice(state.load.file_count)
            folders.append(TreeFolder(folder=folder, mode=state.load.mode,
                                      trusted=state.load.trusted, files=files,
                                      other_agents=_other_agents(ls, folder), notice=notice))
        return TreeResponse(folders=folders).wire()
