"""Document sync (unsaved edits count), files changed on disk, and JIT loading on open."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.lsp.convert import path_of, uri_of
from memlens.lsp.on_read import on_read_loads
from memlens.protocol.editor import JitLoadedEvent

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

DEBOUNCE_SECONDS = 0.15
JIT_LOADED = "memlens/jitLoaded"


def notify_jit(ls: MemlensServer, path: str) -> None:
    """Load (once per session) what a read of an opened file brings each agent shown for its
    folder and tell the client, one entry per agent in the registry's order (lsp/on_read.py:
    the query `memlens/jit` previews)."""
    loads = on_read_loads(ls, path)
    if loads:
        ls.protocol.notify(JIT_LOADED, JitLoadedEvent(uri=uri_of(path), loads=loads).wire())


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
