"""`MemlensServer`: a pygls LanguageServer holding the workspace index and shared helpers."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..index import WorkspaceIndex
from ..jit import JitSession
from ..memory_release import release_freed_memory
from ..model import MemorySettings
from ..settings import load_settings
from .convert import path_of, to_lsp_diagnostic, uri_of
from .rpc import MemlensProtocol

if TYPE_CHECKING:
    from ..dialects.claude import ClaudeJitSession

log = logging.getLogger("memlens.lsp")
CONFIG_SECTION = "memlens"


class MemlensServer(LanguageServer):
    protocol: MemlensProtocol

    def __init__(self) -> None:
        super().__init__("memlens", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=MemlensProtocol)
        self.protocol.read_text = self.text_of_uri
        self.editor_settings: dict[str, Any] = {}
        self.folders: list[str] = []
        self.index: WorkspaceIndex | None = None
        self.jit_sessions: dict[str, JitSession] = {}
        self.claude_jit_sessions: dict[str, ClaudeJitSession] = {}
        self.errors_logged: set[str] = set()
        self.settings_warned: set[str] = set()
        # Set once the first index is built from the settings the client gave us.
        self.ready = asyncio.Event()
        # Wall-clock ms of the start-up steps, sent with memlens/ready (launched: set by the
        # extension's launcher, server/launch.py).
        launched = os.environ.get("MEMLENS_LAUNCHED_AT", "")
        self.startup_marks: dict[str, int] = {}
        if launched.isdigit():
            self.startup_marks["launched"] = int(launched)
        self.startup_marks["serverCreated"] = round(time.time() * 1000)
        self.pull_configuration = True

    # --- settings and index ------------------------------------------------------------
    def settings(self) -> MemorySettings:
        cwd = self.folders[0] if self.folders else "/"
        return load_settings(cwd, editor=self.editor_settings)

    def ensure_index(self) -> WorkspaceIndex:
        """Build the index unless one exists for the current settings (keeps JIT sessions)."""
        settings = self.settings()
        if self.index is not None and self.index.settings == settings:
            return self.index
        return self.rebuild(settings)

    def rebuild(self, settings: MemorySettings | None = None) -> WorkspaceIndex:
        index = WorkspaceIndex(settings or self.settings(), self.folders)
        if self.index is not None:
            index.overrides.update(self.index.overrides)
        # The old index is dropped before the build (nothing runs concurrently: the build is
        # synchronous), so two full indexes never live at once.
        self.index = None
        self.jit_sessions.clear()
        self.claude_jit_sessions.clear()
        index.build()
        self.index = index
        release_freed_memory()
        self.warn_about_settings(index.settings)
        return index

    def warn_about_settings(self, settings: MemorySettings) -> None:
        """Tell the user, once each, about editor settings that were dropped (those from a
        settings.json file are diagnostics on the file instead)."""
        for problem in settings.problems:
            if problem.source is not None or problem.message in self.settings_warned:
                continue
            self.settings_warned.add(problem.message)
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"Memory Lens: {problem.message}"))

    def require_index(self) -> WorkspaceIndex:
        return self.index if self.index is not None else self.rebuild()

    def jit_session_for(self, path: str) -> JitSession | None:
        index = self.require_index()
        folder = index.folder_for(path)
        if folder is None:
            return None
        if folder not in self.jit_sessions:
            session = index.jit_session(folder)
            if session is None:
                return None
            self.jit_sessions[folder] = session
        return self.jit_sessions[folder]

    def claude_jit_session_for(self, path: str) -> ClaudeJitSession | None:
        """The Claude Code session of the folder holding `path`, when Claude Code has any
        memory here (its own files, rules, or the user's)."""
        index = self.require_index()
        folder = index.folder_for(path)
        if folder is None or not (index.claude_folders or index.claude_sources):
            return None
        if folder not in self.claude_jit_sessions:
            from ..dialects.claude import ClaudeJitSession

            self.claude_jit_sessions[folder] = ClaudeJitSession(index.settings.home, folder,
                                                                index.reader)
        return self.claude_jit_sessions[folder]

    # --- documents -----------------------------------------------------------------------
    def text_of(self, path: str) -> str | None:
        index = self.require_index()
        if path in index.overrides:
            return index.overrides[path]
        return index.reader.read(path).content

    def document_path(self, uri: str) -> str | None:
        return path_of(uri)

    def text_of_uri(self, uri: str) -> str | None:
        path = path_of(uri)
        return self.text_of(path) if path is not None else None

    def lsp_diagnostics(self, path: str) -> list[types.Diagnostic]:
        index = self.require_index()
        text = self.text_of(path)
        uri = uri_of(path)
        return [to_lsp_diagnostic(d, text, uri) for d in index.diagnostics_for(path)]

    def publish(self, paths: set[str] | list[str]) -> None:
        """Push diagnostics for the given files that are open in the editor."""
        open_paths = {path_of(uri): uri for uri in self.workspace.text_documents}
        for path in paths:
            uri = open_paths.get(path)
            if uri is None:
                continue
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=self.lsp_diagnostics(path)))

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
        """Serve over stdio with framing that survives a hostile client (transport.py);
        returns the exit code (LSP: 1 when `exit` comes without `shutdown`)."""
        from .transport import serve_stdio

        self._stop_event = threading.Event()
        try:
            return serve_stdio(self.protocol, stdin or sys.stdin.buffer,
                               stdout or sys.stdout.buffer, self._stop_event)
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def start_tcp(self, host: str, port: int) -> None:
        """`memlens serve --tcp`: one client, the same framing as stdio."""
        from .transport import serve_tcp

        self._stop_event = threading.Event()
        try:
            serve_tcp(self.protocol, host, port, self._stop_event)
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def report_server_error(self, error: Exception, source: Any) -> None:
        key = f"{type(error).__name__}:{error}"
        if key in self.errors_logged:
            return
        self.errors_logged.add(key)
        log.error("memlens server error (%s): %r", getattr(source, "__name__", source), error)


def create_server() -> MemlensServer:
    from . import (
        actions,
        chat,
        completion,
        custom,
        diagnostics,
        hover,
        lens,
        lifecycle,
        memory,
        navigation,
        rename,
        skills,
        symbols,
        sync,
    )

    server = MemlensServer()
    for module in (lifecycle, sync, diagnostics, navigation, hover, completion, symbols,
                   actions, lens, rename, custom, chat, memory, skills):
        module.register(server)
    return server


__all__ = ["MemlensServer", "create_server", "uri_of"]
