"""`MemlensServer`: a pygls LanguageServer holding all the server's state (the workspace
service, the editor's settings, the chat, the position encoding) and the helpers features
share. Features and shared helpers name this class for its type; `server.create_server`
builds one and registers the features on it. Nothing here imports a feature.
"""

from __future__ import annotations

import asyncio
import logging
import os
import posixpath
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from memlens import __version__
from memlens.lsp.convert import PositionConverter, path_of, uri_of
from memlens.lsp.errors import InvalidParams
from memlens.lsp.merged import budget_diagnostics
from memlens.lsp.rpc import MemlensProtocol
from memlens.model import MemorySettings, SettingsProblem
from memlens.workspace.index import IGNORE_FILES
from memlens.workspace.memory_release import release_freed_memory
from memlens.workspace.service import EditorSettings, WorkspaceService

if TYPE_CHECKING:
    from memlens.agent.chat import ChatSession
    from memlens.lsp.transport import TcpOptions
    from memlens.protocol.memory import Diagnostic

log = logging.getLogger("memlens.lsp")
CONFIG_SECTION = "memlens"
# The init option / setting naming folders whose trust differs from `trusted`:
# {"<folder URI or path>": true | false}.
FOLDER_TRUST = "folderTrust"
# Files whose change may change every folder's settings or trust.
SETTINGS_FILES = ("settings.json", "trustedFolders.json", "projects.json")


class MemlensServer(LanguageServer):
    protocol: MemlensProtocol

    def __init__(self) -> None:
        super().__init__("memlens", __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=MemlensProtocol)
        self.protocol.read_text = self.text_of_uri
        self.editor = EditorSettings()
        self.service = self._new_service([])
        self.positions = PositionConverter()
        self.errors_logged: set[str] = set()
        self.settings_warned: set[str] = set()
        self.notices_shown: set[str] = set()  # build notices already shown to the user
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
        # Debounced diagnostics pushes, per document URI (a burst of keystrokes pushes once).
        self.pending_publishes: dict[str, asyncio.TimerHandle] = {}
        self.watcher_stop: threading.Event | None = None  # set: the file watcher stops
        self.chat_sessions: dict[str, ChatSession] = {}
        self.api_key: str | None = None  # the one the editor sent (memlens/setApiKey)
        # The client is the user's own: true on stdio (the editor started us); over TCP only
        # once it has sent the per-start token (transport.serve_tcp).
        self.owner_proven = True
        # Features that follow documents besides sync.py: (event, paths), event one of
        # "open", "change" (before the buffer counts), "save", "disk" (a batch of files
        # changed on disk, from the file watcher or the client).
        self.document_listeners: list[Callable[[str, list[str]], None]] = []
        # Each file's `instruction-conflict` / `agents-disagree` diagnostics, as last computed
        # off the event loop (lsp/conflicts.py).
        self.conflict_diagnostics: dict[str, list[Diagnostic]] = {}
        # The agents shown where each open file is, as last published (`publish`).
        self.shown_published: dict[str, frozenset[str]] = {}

    # --- folders and settings ----------------------------------------------------------
    def _new_service(self, folders: list[str]) -> WorkspaceService:
        service = WorkspaceService(folders, self.editor)
        service.after_build = self._after_build
        return service

    def set_folders(self, folders: list[str]) -> None:
        self.service = self._new_service(folders)

    def configure(self, section: dict[str, Any]) -> None:
        """The editor's `memlens` section: its values for the window, and `folderTrust`
        naming folders trusted (or not) apart from the window's `trusted`."""
        window = self.owner_settings(dict(section))
        trust = window.pop(FOLDER_TRUST, None)
        if "trusted" in window:
            # The editor's workspace trust is the window's: the default and an upper bound,
            # not a verdict on every folder (trust.decide_trust); `folderTrust` is one.
            window["editorTrusted"] = window.pop("trusted")
        self.editor.window = window
        self.editor.folders = {}
        if isinstance(trust, dict):
            for key, trusted in trust.items():
                path = path_of(key) if key.startswith("file:") else key
                if path and isinstance(trusted, bool):
                    folder = os.path.realpath(path)
                    self.editor.folders.setdefault(folder, {})["trusted"] = trusted

    def ensure_indexed(self) -> WorkspaceService:
        """Index the workspace unless it is indexed for the current settings (keeps the JIT
        sessions)."""
        self.service.ensure()
        return self.service

    def rebuild(self) -> WorkspaceService:
        self.service.rebuild()
        return self.service

    def _after_build(self, settings_in_force: list[MemorySettings]) -> None:
        """Free what the old indexes held; tell the user about dropped editor settings."""
        release_freed_memory()
        for settings in settings_in_force:
            self.warn_about_settings(settings.problems)

    def warn_about_settings(self, problems: list[SettingsProblem]) -> None:
        """Tell the user, once each, about editor settings that were dropped (those from a
        settings.json file are diagnostics on the file instead)."""
        for problem in problems:
            if problem.source is not None or problem.message in self.settings_warned:
                continue
            self.settings_warned.add(problem.message)
            self.window_show_message(types.ShowMessageParams(
                type=types.MessageType.Warning, message=f"Memory Lens: {problem.message}"))

    def only_folder(self, method: str, field: str) -> str | None:
        """The folder of a request that names none: the only workspace folder (None when no
        folder is open). In a window of several folders nothing says which one the user means,
        so the request fails, naming the field that says it (never silently the first)."""
        folders = self.service.folders
        if len(folders) > 1:
            raise InvalidParams(f"{method} needs `{field}`: this window has {len(folders)} "
                                f"workspace folders ({', '.join(folders)})")
        return folders[0] if folders else None

    def folder_for_uri(self, uri: str | None, method: str) -> str | None:
        """The workspace folder a request is about: the deepest one holding `uri` (a file or
        a folder). A request naming no file, or one outside every folder (the global
        GEMINI.md), is about the only folder of a single-root window; in a multi-root window
        it fails (only_folder). None: no folder is open."""
        if uri is None:
            return self.only_folder(method, "uri")
        path = path_of(uri)
        if path is None:
            raise InvalidParams(f"{method}: not a file URI: {uri}")
        folder = self.service.folder_for(path)
        if folder is None and len(self.service.folders) > 1:
            raise InvalidParams(f"{method}: {path} is in none of this window's "
                                f"{len(self.service.folders)} workspace folders "
                                f"({', '.join(self.service.folders)}): name a file or folder "
                                "inside one")
        return folder or self.only_folder(method, "uri")

    # --- documents -----------------------------------------------------------------------
    def document_event(self, event: str, paths: list[str]) -> None:
        """Tell the listeners about `event` on `paths` (one call per batch)."""
        for listener in self.document_listeners:
            try:
                listener(event, paths)
            except Exception as error:  # a listener's failure must not stop document sync
                self.report_server_error(error, listener)

    def text_of(self, path: str) -> str | None:
        if path in self.service.buffers:
            return self.service.buffers[path]
        return self.service.index_for(path).reader.read(path).content

    def text_of_uri(self, uri: str) -> str | None:
        path = path_of(uri)
        return self.text_of(path) if path is not None else None

    def open_paths(self) -> list[str]:
        return [p for uri in self.workspace.text_documents if (p := path_of(uri))]

    def lsp_diagnostics(self, path: str) -> list[types.Diagnostic]:
        text = self.text_of(path)
        uri = uri_of(path)
        return [self.positions.to_lsp_diagnostic(d, text, uri)
                for d in [*self.service.diagnostics_for(path),
                          *budget_diagnostics(self.service, path),
                          *self.conflict_diagnostics.get(path, [])]]

    def publish(self, paths: set[str] | list[str]) -> None:
        """Push diagnostics for the given files that are open in the editor, and for every
        open file where the agents shown changed (an agent's diagnostics come and go with
        it: workspace/shown.py)."""
        open_paths = {path_of(uri): uri for uri in self.workspace.text_documents}
        shown = {p: frozenset(self.service.agents_shown_for(p)) for p in open_paths if p}
        moved = {p for p, agents in shown.items() if self.shown_published.get(p, agents) != agents}
        self.shown_published = shown
        for path in [*paths, *(moved - set(paths))]:
            uri = open_paths.get(path)
            if uri is None:
                continue
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=self.lsp_diagnostics(path)))

    def publish_later(self, paths: set[str], key: str, delay: float) -> None:
        """Debounced push per document: a burst of keystrokes publishes once."""
        loop = asyncio.get_event_loop()
        previous = self.pending_publishes.pop(key, None)
        if previous is not None:
            previous.cancel()
        self.pending_publishes[key] = loop.call_later(delay, lambda: self.publish(paths))

    def apply_disk_changes(self, paths: list[str]) -> None:
        """Files changed outside the editor (the file watcher, or the client's notice), as
        one batch: each index updates once for all of them (WorkspaceIndex.files_changed);
        what listens to documents hears the batch once."""
        service = self.service
        if any(posixpath.basename(p) in SETTINGS_FILES for p in paths):
            self.rebuild()
            self.publish(self.open_paths())
            return
        # The editor's buffer wins over the disk.
        changed = [p for p in dict.fromkeys(paths) if p not in service.buffers]
        if not changed:
            return
        touched = service.files_changed(changed)
        if any(service.is_memory_file(p) or posixpath.basename(p) in IGNORE_FILES
               for p in changed):
            service.forget_sessions()
        self.publish(touched)
        self.document_event("disk", changed)

    # --- transport -----------------------------------------------------------------------
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
        """Serve over stdio with framing that survives a hostile client (transport.py);
        returns the exit code (LSP: 1 when `exit` comes without `shutdown`)."""
        from memlens.lsp.transport import serve_stdio

        self._stop_event = threading.Event()
        try:
            return serve_stdio(self.protocol, stdin or sys.stdin.buffer,
                               stdout or sys.stdout.buffer, self._stop_event)
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def start_tcp(self, host: str, port: int) -> None:
        """pygls's own TCP server would serve anyone who connects: never used."""
        raise NotImplementedError("memlens serves TCP only with a token: start_tcp_owned")

    def start_tcp_owned(self, options: TcpOptions) -> int:
        """`memlens serve --tcp`: one client, the one that proves it holds the per-start
        token; the same framing as stdio. Until a client has proved it, no setting that
        decides where the key goes or what runs unasked can be set."""
        from memlens.lsp.transport import TcpOptions, serve_tcp

        self.owner_proven = False

        def proven() -> None:
            self.owner_proven = True
            options.on_owner()

        self._stop_event = threading.Event()
        try:
            return serve_tcp(self.protocol, TcpOptions(
                options.host, options.port, options.token, options.token_file,
                options.on_listening, proven), self._stop_event)
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]

    def owner_settings(self, values: dict[str, Any]) -> dict[str, Any]:
        """`values` (a `memlens` settings section), without what only the owner may set when
        the client has not proved it is the owner (the chat's endpoint, model and approval
        mode: where the key goes and what runs unasked)."""
        if self.owner_proven:
            return values
        dropped = [k for k in values if k == "chat" or k.startswith("chat.")]
        if dropped:
            log.warning("ignored from a client that has not proved it is the owner: %s",
                        ", ".join(sorted(dropped)))
        return {k: v for k, v in values.items() if k not in dropped}

    def report_server_error(self, error: Exception, source: Any) -> None:
        key = f"{type(error).__name__}:{error}"
        if key in self.errors_logged:
            return
        self.errors_logged.add(key)
        log.error("memlens server error (%s): %r", getattr(source, "__name__", source), error)

