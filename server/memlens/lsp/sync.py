"""Document sync (unsaved edits count), files changed on disk, and JIT loading on open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.agent_versions import is_unverified, profile_for
from memlens.agents import all_agents
from memlens.lsp.agents_shown import agents_shown
from memlens.lsp.convert import path_of, uri_of
from memlens.protocol.editor import JitLoadedEvent
from memlens.protocol.memory import AgentJitFile, AgentJitLoad

if TYPE_CHECKING:
    from memlens.agents.base import MemoryAgent
    from memlens.lsp.state import MemlensServer

DEBOUNCE_SECONDS = 0.15
JIT_LOADED = "memlens/jitLoaded"


def notify_jit(ls: MemlensServer, path: str) -> None:
    """Load (once per session) what a read of an opened file brings each agent shown for its
    folder (lsp/agents_shown.py) and tell the client, one entry per agent in the registry's
    order: Gemini CLI's JIT files (from the index's session: it renders Gemini CLI's memory),
    Claude Code's subfolder CLAUDE.md and matching rules, and so on for every agent that
    loads on a read."""
    folder = ls.service.folder_for(path)
    if folder is None:
        return
    shown = set(agents_shown(ls, folder).shown)
    loads: list[AgentJitLoad] = []
    for agent in all_agents():
        if agent.id not in shown:
            continue
        load = _index_load(ls, path) if agent.rendered_by_index else _agent_load(ls, agent, path)
        if load is not None and load.files:
            loads.append(load)
    if loads:
        ls.protocol.notify(JIT_LOADED, JitLoadedEvent(uri=uri_of(path), loads=loads).wire())


def _index_load(ls: MemlensServer, path: str) -> AgentJitLoad | None:
    """What the agent the index renders (Gemini CLI) loads on a read of `path`, when JIT
    context is on."""
    if not ls.service.settings_for(path).jit_context:
        return None
    session = ls.service.jit_session_for(path)
    if session is None:
        return None
    result = session.discover(path)
    agent = next(a for a in all_agents() if a.rendered_by_index)
    return AgentJitLoad(agent=agent.id, label=agent.label,
                        files=[AgentJitFile(path=f.path, chars=len(f.content or ""))
                               for f in result.files],
                        context=result.appendix)


def _agent_load(ls: MemlensServer, agent: MemoryAgent, path: str) -> AgentJitLoad | None:
    """What a checked agent loads on a read of `path` (its own session in the folder)."""
    session = ls.service.agent_jit_session_for(agent, path)
    if session is None:
        return None
    load = session.load_for(path)
    label = (profile_for(agent.id, None).label if is_unverified(agent.id)
             else agent.label)  # "Cursor (convention)": never called verified
    return AgentJitLoad(agent=agent.id, label=label,
                        files=[AgentJitFile(path=f.path, chars=len(f.content), reason=f.reason)
                               for f in load.files],
                        context=load.context)


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MemlensServer, params: types.DidOpenTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        touched: set[str] = {path}
        ls.document_event("open", [path])
        if ls.service.tracks(path):
            touched |= ls.service.set_text(path, params.text_document.text)
        notify_jit(ls, path)
        ls.publish(touched)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MemlensServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = path_of(uri)
        if path is None or uri not in ls.workspace.text_documents or not ls.service.tracks(path):
            return
        text = ls.workspace.get_text_document(uri).source
        ls.document_event("change", [path])
        touched = ls.service.set_text(path, text)
        ls.publish_later(touched, uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MemlensServer, params: types.DidSaveTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is not None and ls.service.tracks(path):
            ls.publish(ls.service.file_changed(path))
        if path is not None:
            ls.document_event("save", [path])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MemlensServer, params: types.DidCloseTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        touched = ls.service.set_text(path, None) if path in ls.service.buffers else set()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=params.text_document.uri, diagnostics=[]))
        ls.publish(touched - {path})

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: MemlensServer,
                                 params: types.DidChangeWatchedFilesParams) -> None:
        ls.apply_disk_changes([p for c in params.changes if (p := path_of(c.uri))])
