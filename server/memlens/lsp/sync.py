"""Document sync (unsaved edits count), files changed on disk, and JIT loading on open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.agent_versions import is_unverified, profile_for
from memlens.agents import all_agents, checked_agents
from memlens.lsp.convert import path_of, uri_of
from memlens.protocol.editor import JitLoadedEvent
from memlens.protocol.memory import ClaudeJitEntry, JitFile

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

DEBOUNCE_SECONDS = 0.15
JIT_LOADED = "memlens/jitLoaded"


def notify_jit(ls: MemlensServer, path: str) -> None:
    """Load (once per session) the memory JIT adds for an opened file and tell the client:
    Gemini CLI's JIT files (from the index's session: it renders Gemini CLI's memory), and
    what each checked agent adds (Claude Code: a subfolder's CLAUDE.md, a rule whose `paths:`
    match) when it has memory in the workspace."""
    files: list[JitFile] = []
    context = ""
    if ls.service.settings_for(path).jit_context:
        session = ls.service.jit_session_for(path)
        if session is not None:
            result = session.discover(path)
            files = [JitFile(path=f.path, chars=len(f.content or "")) for f in result.files]
            context = result.appendix
    # The event names the other agents' list after Claude Code, the one that loads just in time.
    others: list[ClaudeJitEntry] = []
    for agent in checked_agents():
        agent_session = ls.service.agent_jit_session_for(agent, path)
        if agent_session is not None:
            label = (profile_for(agent.id, None).label if is_unverified(agent.id)
                     else agent.label)  # "Cursor (convention)": never called verified
            others += [ClaudeJitEntry(path=f.path, chars=len(f.content), reason=f.reason,
                                      agent_label=label)
                       for f in agent_session.load_for(path).files]
    if not files and not others:
        return
    event = JitLoadedEvent(uri=uri_of(path), files=files, context=context, claude=others,
                           label=next(a.label for a in all_agents() if a.rendered_by_index))
    ls.protocol.notify(JIT_LOADED, event.wire())


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
