"""Custom requests: memlens/show, memlens/list, memlens/refresh, memlens/jit,
memlens/memoryTree (payloads: protocol/editor.py; failures: errors.py)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from memlens.agent_versions import AgentProfile, basis_of, is_unverified, profile_for
from memlens.agents import AGENT_IDS, agent_by_id, all_agents, checked_agents, owner_of
from memlens.agents.gemini.trust import restricted_notice, rules_file_to_open
from memlens.lsp.agents_shown import agents_shown, gemini_shown
from memlens.lsp.convert import path_of
from memlens.lsp.errors import InvalidParams, RequestFailed, parse_params
from memlens.lsp.on_read import agent_label, on_read_loads
from memlens.lsp.previews import visible_sections
from memlens.model import MemorySettings
from memlens.protocol.editor import (
    AgentChoice,
    AgentListing,
    AgentsParams,
    AgentsResponse,
    Dialect,
    EditorListResult,
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
from memlens.protocol.memory import ContextSection
from memlens.reports.budgets import context_budget, measure, summary
from memlens.workspace.index import WorkspaceIndex
from memlens.workspace.queries import truncate
from memlens.workspace.reading import agent_listing

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

SHOW, LIST, REFRESH, JIT = "memlens/show", "memlens/list", "memlens/refresh", "memlens/jit"
AGENTS = "memlens/agents"


def _folder_of(ls: MemlensServer, uri: str) -> str:
    path = path_of(uri)
    if path is None:
        raise InvalidParams(f"not a file URI: {uri}")
    folder = ls.service.folder_for(path)
    if folder is None:
        raise InvalidParams(f"{path} is outside every workspace folder")
    return folder


def _dialect_of(ls: MemlensServer, uri: str, folder: str) -> Dialect | None:
    """The agent of the memory file `uri` names (a CLAUDE.md shows Claude Code's view), else
    the first agent shown for the workspace folder (lsp/agents_shown.py); None: no agent is
    in use there and none has files that apply."""
    settings = ls.service.settings_for(path_of(uri) or "")
    owner = owner_of(path_of(uri) or "", settings)
    shown = agents_shown(ls, folder).shown
    found = owner.id if owner else shown[0] if shown else None
    return found  # type: ignore[return-value]  # an agent id


def _no_agent(folder: str) -> ShowResponse:
    """The status item where no agent is in use and none has files that apply: nothing
    loads, and no agent (nor Gemini CLI's folder trust) is named."""
    return ShowResponse(dialect=None, content="", files=[], file_count=0, mode="jit",
                        trusted=True, prompt="", session_memory="", chars=0, bytes=0,
                        tokens=0, summary=f"no agent in use in {os.path.basename(folder)}",
                        sections=[])


def _profile_of(settings: MemorySettings, agent: str) -> AgentProfile:
    """The profile serving `agent`: the chosen one, else its newest."""
    return next((p for p in settings.chosen_agents if p.agent == agent), None) or profile_for(
        agent, None)


def _with_agent(response: ShowResponse, settings: MemorySettings, agent: str) -> ShowResponse:
    profile = _profile_of(settings, agent)
    response.agent_label = profile.short_label
    response.agent_profile = profile.name
    response.agent_note = None if profile.verified or is_unverified(profile.agent) else profile.note
    return response


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


def _with_links(ls: MemlensServer, uri: str, response: ShowResponse) -> dict[str, object]:
    """The response on the wire, shown as editor previews show text (previews.py), with the
    links of its sections."""
    response.content, response.sections = visible_sections(
        ls, path_of(uri) or "", response.content, response.sections)
    response.links = source_links(response.content, response.sections)
    return response.wire()


def _checked_dialect_show(ls: MemlensServer, uri: str, workspace: str,
                          dialect: Dialect) -> ShowResponse:
    """What an agent the index does not render reads working on `uri`: started in that
    folder, or (a file) started in the workspace folder and reading the file — as a user
    runs it (Claude Code then adds the rules and subfolder files that reading brings;
    imports in files above where it started are not expanded, so starting in the file's own
    folder would show less than it reads)."""
    path = path_of(uri) or workspace
    is_folder = os.path.isdir(path)
    index = ls.service.index_for(path)
    agent = agent_by_id(dialect)
    memory = agent.load(path if is_folder else workspace, index.settings, index.reader,
                        target=None if is_folder else path)
    content, _ = truncate(memory.text, index.settings.max_context_chars, agent.receiver)
    files = [f.path for f in memory.files]
    # The figures of the files it reads, by this agent's own token estimate (budgets.py).
    figures = context_budget(agent.id, [(f.path, f.label, f.content) for f in memory.files])
    return ShowResponse(dialect=dialect, content=content, files=files, file_count=len(files),
                        mode=memory.mode, trusted=True, prompt="", session_memory="",
                        chars=figures.total.chars, bytes=figures.total.bytes,
                        tokens=figures.total.tokens,
                        summary=summary(len(files), figures.total.chars, figures.total.tokens),
                        sections=context_sections(content, files, dialect))


def register(server: MemlensServer) -> None:
    register_tree(server)

    @server.feature(SHOW)
    def show(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(ShowParams, params)
        folder = _folder_of(ls, request.uri)
        dialect = request.dialect or _dialect_of(ls, request.uri, folder)
        if dialect is None:
            return _no_agent(folder).wire()
        # An agent whose memory the index renders (Gemini CLI) is shown from the index, with
        # its own figures (prompt, session memory, folder trust); any other is loaded through
        # the interface.
        if not agent_by_id(dialect).rendered_by_index:
            other = _checked_dialect_show(ls, request.uri, folder, dialect)
            return _with_links(ls, request.uri,
                               _with_agent(other, ls.service.settings_for(folder), dialect))
        index = ls.service.index_of_folder(folder)
        result = index.show(folder)
        state = index.folder_states.get(folder)
        trust = state.load.trust_source if state and not result.trusted else None
        chars = sum(len(f.content) for f in state.load.files
                    if f.content is not None) if state else len(result.content)
        figures = context_budget("gemini", [(f.path, f.tier, f.content) for f in state.load.files]
                                 if state else [("", "", result.content)]).total
        home = index.settings.home
        return _with_links(ls, request.uri, _with_agent(ShowResponse(
            dialect=dialect, content=result.content, files=result.files,
            file_count=result.file_count,
            mode=result.mode, trusted=result.trusted, prompt=result.prompt,
            session_memory=result.session_memory, chars=chars, bytes=figures.bytes,
            tokens=figures.tokens, summary=summary(result.file_count, chars, figures.tokens),
            notice=None if result.trusted else restricted_notice(result.file_count, trust, home),
            trust_rules=rules_file_to_open(trust, home),
            sections=context_sections(result.content, result.files, dialect)),
            index.settings, dialect))

    @server.feature(AGENTS)
    def agents(ls: MemlensServer, params: Any) -> dict[str, object]:
        """The agents to offer: the ones in use (pinned, else detected) first, then those
        whose files apply in the folder (below it, above it, in HOME), then every other one
        (the user's explicit choice)."""
        request = parse_params(AgentsParams, params or {})
        folder = ls.folder_for_uri(request.uri, AGENTS)
        settings = ls.service.index_of_folder(folder).settings
        chosen = [p for p in settings.chosen_agents if p.agent in AGENT_IDS]
        here = agents_shown(ls, folder)
        order = [*(a for a in here.applying if a not in here.in_use),
                 *(a for a in AGENT_IDS if a not in here.applying)]
        rest = [profile_for(a, None) for a in order if a not in {p.agent for p in chosen}]
        side = here.shown
        if len(side) < 2:
            side = list(AGENT_IDS)
        return AgentsResponse.model_validate({"agents": [
            AgentChoice.model_validate({
                "agent": p.agent, "label": p.short_label, "profile": p.name,
                "installed": p.installed, "verified": p.verified, "note": p.note,
                "chosen": i < len(chosen), "has_files": p.agent in here.applying,
                "basis": basis_of(p.agent)})
            for i, p in enumerate([*chosen, *rest])], "side_by_side": side}).wire()

    @server.feature(LIST)
    def list_(ls: MemlensServer, params: Any) -> dict[str, object]:
        """What each agent shown for the folder reads working there, as `memlens list --agent
        A` lists it, in the registry's order (no agent first)."""
        request = parse_params(UriParams, params)
        folder = _folder_of(ls, request.uri)
        index = ls.service.index_of_folder(folder)
        if folder not in index.folder_states:
            raise RequestFailed("the workspace folder is not indexed yet: try again")
        shown = set(agents_shown(ls, folder).shown)
        return EditorListResult(cwd=folder, agents=[
            AgentListing(agent=agent.id, label=agent_label(agent),
                         files=agent_listing(agent, folder, index.settings, index.reader).files)
            for agent in all_agents() if agent.id in shown]).wire()

    @server.feature(REFRESH)
    async def refresh(ls: MemlensServer, params: Any) -> dict[str, object]:
        await ls.ready.wait()
        service = ls.rebuild()
        # Only open documents get pushed diagnostics: publish computes theirs alone.
        ls.publish(service.diagnosed_paths())
        return RefreshResponse(file_count=len(service.memory_files())).wire()

    @server.feature(JIT)
    def jit(ls: MemlensServer, params: Any) -> dict[str, object]:
        """What a read of a file brings each agent shown for its folder, as
        `memlens/jitLoaded` says it (lsp/on_read.py), in a session just started there (a
        preview: nothing is marked loaded)."""
        request = parse_params(UriParams, params)
        path = path_of(request.uri)
        if path is None:
            raise InvalidParams(f"not a file URI: {request.uri}")
        return JitResponse(uri=request.uri, loads=on_read_loads(ls, path, preview=True)).wire()


TREE = "memlens/memoryTree"


def _tree_file(ls: MemlensServer, index: WorkspaceIndex, path: str, tier: str,
               chars: int | None, note: str | None = None, *,
               with_imports: bool = True, content: str | None = None,
               agent: str = "gemini") -> TreeFile:
    """A row of a folder's tree, its counts from the index serving that folder."""
    diagnostics = index.diagnostics_for(path, ls.service.agents_shown_for(path))
    text = ls.text_of(path) or ""
    imports = []
    for edge in index.graph.imports_of(path) if with_imports else []:
        line = text.count("\n", 0, edge.token.start)
        imports.append(TreeImport(text=f"@{edge.token.path}", target=edge.target, line=line,
                                  exists=os.path.isfile(edge.target)))
    figures = measure(agent, content) if content is not None else None
    imported = [d for p in (index.graph.imported_by(path) if with_imports else [])
                for d in ls.service.diagnostics_for(p)]
    return TreeFile(path=path, tier=tier, chars=chars,
                    bytes=figures.bytes if figures else None,
                    tokens=figures.tokens if figures else None,
                    errors=sum(d.severity == "error" for d in diagnostics),
                    warnings=sum(d.severity == "warning" for d in diagnostics),
                    import_errors=sum(d.severity == "error" for d in imported),
                    import_warnings=sum(d.severity == "warning" for d in imported),
                    imports=imports, note=note)


def _checked_agents_rows(ls: MemlensServer, folder: str) -> list[TreeAgent]:
    """Each checked agent's files for the folder, by its `view_files` (Claude Code: its start-up
    load, rules scoped by `paths:`, subfolder CLAUDE.md files it reads when it works there,
    the skills a read below the folder lists; the AGENTS.md files in force). An agent the
    index renders has none there: its files are the folder's own rows, from the index."""
    index = ls.service.index_of_folder(folder)
    agents: list[TreeAgent] = []
    # The agents every other view shows here (lsp/agents_shown.py), not every agent whose load
    # finds some file: the Memory view and the matrix agree on who is there.
    shown = set(agents_shown(ls, folder).shown)
    for agent in checked_agents():
        if agent.id not in shown:
            continue
        rows = [_tree_file(ls, index, f.path, f.label,
                           None if f.content is None else len(f.content),
                           f.group_note if f.group else f.described(),
                           with_imports=False, content=f.content, agent=agent.id)
                .model_copy(update={"group": f.group})
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
                                else len(f.content), content=f.content)
                     for f in state.load.files]
            listed = {f.path for f in files}
            # Untrusted: the folder's own memory files (open in the editor) are not read by
            # the agent at all; they are listed apart, not as loaded just in time.
            tier = "jit" if state.load.trusted else "restricted"
            for path, loaded in sorted(index.roots.items()):
                if (loaded.tier == "jit" and path not in listed
                        and ls.service.folder_for(path) == folder):
                    files.append(_tree_file(ls, index, path, tier, None if loaded.content is None
                                            else len(loaded.content), content=loaded.content))
            trust = None if state.load.trusted else state.load.trust_source
            home = index.settings.home
            # Gemini CLI's folder trust, where Gemini CLI is shown (lsp/agents_shown.py).
            shown = gemini_shown(ls, folder)
            notice = (None if state.load.trusted or not shown
                      else restricted_notice(state.load.file_count, trust, home))
            # The folder's own rows are Gemini CLI's (the index renders its memory): named
            # with the version they show.
            gemini = _profile_of(index.settings, "gemini")
            folders.append(TreeFolder(folder=folder, mode=state.load.mode,
                                      trusted=state.load.trusted, files=files,
                                      other_agents=_checked_agents_rows(ls, folder), notice=notice,
                                      trust_rules=rules_file_to_open(trust, home) if shown
                                      else None,
                                      agent_label=(f"{gemini.short_label} ({gemini.name})"
                                                   if shown else ""),
                                      agent_note=None if gemini.verified or not shown
                                      else gemini.note))
        return TreeResponse(folders=folders).wire()
