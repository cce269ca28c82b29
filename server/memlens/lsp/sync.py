"""Document sync (unsaved edits count), files changed on disk, and JIT loading on open."""

from __future__ import annotations

import asyncio
import posixpath

from lsprotocol import types

from ..protocol.editor import JitLoadedEvent
from ..protocol.memory import ClaudeJitEntry, JitFile
from .convert import path_of, uri_of
from .server import MemlensServer

DEBOUNCE_SECONDS = 0.15
JIT_LOADED = "memlens/jitLoaded"
_pending: dict[str, asyncio.TimerHandle] = {}


def _tracked(ls: MemlensServer, path: str) -> bool:
    index = ls.require_index()
    return (index.is_memory_file(path) or path in index.graph.forward
            or path in index.graph.reverse
            or posixpath.basename(path) in ("SKILL.md", "CLAUDE.md", "CLAUDE.local.md",
                                            "AGENTS.md"))


def _publish_later(ls: MemlensServer, paths: set[str], key: str) -> None:
    """Debounced push per document: a burst of keystrokes publishes once."""
    loop = asyncio.get_event_loop()
    previous = _pending.pop(key, None)
    if previous is not None:
        previous.cancel()
    _pending[key] = loop.call_later(DEBOUNCE_SECONDS, lambda: ls.publish(paths))


def notify_jit(ls: MemlensServer, path: str) -> None:
    """Load (once per session) the memory JIT adds for an opened file and tell the client:
    Gemini CLI's JIT files, and what Claude Code adds (a subfolder's CLAUDE.md, a rule whose
    `paths:` match) when the workspace has Claude Code memory."""
    files: list[JitFile] = []
    context = ""
    if ls.require_index().settings.jit_context:
        session = ls.jit_session_for(path)
        if session is not None:
            result = session.discover(path)
            files = [JitFile(path=f.path, chars=len(f.content or "")) for f in result.files]
            context = result.appendix
    claude = []
    claude_session = ls.claude_jit_session_for(path)
    if claude_session is not None:
        claude = [ClaudeJitEntry(path=e.file.path, chars=len(e.file.content), reason=e.reason)
                  for e in claude_session.touch(path)]
    if not files and not claude:
        return
    event = JitLoadedEvent(uri=uri_of(path), files=files, context=context, claude=claude)
    ls.protocol.notify(JIT_LOADED, event.wire())


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MemlensServer, params: types.DidOpenTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        touched: set[str] = {path}
        if _tracked(ls, path):
            touched |= ls.require_index().set_text(path, params.text_document.text)
        notify_jit(ls, path)
        ls.publish(touched)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MemlensServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = path_of(uri)
        if path is None or uri not in ls.workspace.text_documents or not _tracked(ls, path):
            return
        text = ls.workspace.get_text_document(uri).source
        touched = ls.require_index().set_text(path, text)
        _publish_later(ls, touched, uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MemlensServer, params: types.DidSaveTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is not None and _tracked(ls, path):
            ls.publish(ls.require_index().file_changed(path))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MemlensServer, params: types.DidCloseTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        index = ls.require_index()
        touched = index.set_text(path, None) if path in index.overrides else set()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=params.text_document.uri, diagnostics=[]))
        ls.publish(touched - {path})

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: MemlensServer,
                                 params: types.DidChangeWatchedFilesParams) -> None:
        apply_disk_changes(ls, [p for c in params.changes if (p := path_of(c.uri))])


def apply_disk_changes(ls: MemlensServer, paths: list[str]) -> None:
    """Files changed outside the editor (watcher or client notification)."""
    index = ls.require_index()
    if any(posixpath.basename(p) in ("settings.json", "trustedFolders.json", "projects.json")
           for p in paths):
        ls.rebuild()
        ls.publish([p for uri in ls.workspace.text_documents if (p := path_of(uri))])
        return
    touched: set[str] = set()
    for path in paths:
        if path in index.overrides:
            continue  # the editor's buffer wins over the disk
        touched |= index.file_changed(path)
    if any(index.is_memory_file(p) for p in paths):
        ls.jit_sessions.clear()
        ls.claude_jit_sessions.clear()
    ls.publish(touched)
