"""Initialisation, indexing with progress, and exiting when the parent process dies."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memlens.lsp import watcher
from memlens.lsp.convert import PositionConverter, path_of, uri_of
from memlens.protocol.editor import ReadyEvent
from memlens.workspace.index import BUILD_PROGRESS
from memlens.workspace.service import WorkspaceService

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

log = logging.getLogger("memlens.lsp")
READY = "memlens/ready"  # sent once the first index is built: {memoryFiles, indexSeconds}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def watch_parent(pid: int, interval: float = 2.0) -> None:
    """Exit when the editor that started us is gone (it may not close our stdin)."""

    def loop() -> None:
        while _alive(pid):
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=loop, name="memlens-parent-watch", daemon=True).start()


def _now_ms() -> int:
    return round(time.time() * 1000)


def _folders(params: types.InitializeParams) -> list[str]:
    uris = [f.uri for f in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    paths = [path_of(u) for u in uris]
    return [os.path.realpath(p) for p in paths if p]


def register(server: MemlensServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: MemlensServer, params: types.InitializeParams) -> None:
        ls.startup_marks["initialize"] = _now_ms()
        ls.set_folders(_folders(params))
        options: Any = params.initialization_options
        if isinstance(options, dict):
            section = options.get("memlens", options)
            if isinstance(section, dict):
                ls.configure(section)
                # The client sends exactly the values its user set; pulling
                # workspace/configuration would add its defaults over Gemini CLI's own settings.
                ls.pull_configuration = False
        if params.process_id:
            watch_parent(params.process_id)
        encoding = "utf-16"
        general = params.capabilities.general
        for candidate in (general.position_encodings or []) if general else []:
            if candidate in ("utf-8", "utf-16", "utf-32"):
                encoding = str(candidate)
                break
        ls.positions = PositionConverter(encoding)

    @server.feature(types.INITIALIZED)
    async def initialized(ls: MemlensServer, params: types.InitializedParams) -> None:
        started = time.monotonic()
        ls.startup_marks["initialized"] = _now_ms()
        token = f"memlens-index-{uuid.uuid4().hex[:8]}"
        progress = ls.client_capabilities.window
        use_progress = bool(progress and progress.work_done_progress)
        if use_progress:
            try:
                await ls.work_done_progress.create_async(token)
                ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                    title="Memory Lens", message="Indexing memory files", percentage=0))
            except Exception:  # a client that refuses progress still gets an index
                use_progress = False
        await _pull_configuration(ls)

        def report(message: str, percentage: int | None) -> None:
            # The build runs on the event loop; a report is written to the client at once.
            ls.work_done_progress.report(token, types.WorkDoneProgressReport(
                message=message, percentage=percentage))

        service = _build(ls, ls.ensure_indexed, report if use_progress else None)
        watcher.start(ls)
        ls.ready.set()
        memory_files = len(service.memory_files())
        if use_progress:
            stopped = " (the folder walk stopped early)" if service.walk_stopped() else ""
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(
                message=f"{memory_files} memory files indexed{stopped}"))
        # Ready: say so, and push the open files' diagnostics at once (before the round trip
        # that registers file watchers), so the first problems show as soon as the index is.
        ls.startup_marks["ready"] = _now_ms()
        ls.protocol.notify(READY, ReadyEvent(
            memory_files=memory_files, index_seconds=round(time.monotonic() - started, 3),
            marks=ls.startup_marks).wire())
        ls.publish(ls.open_paths())
        await _watch_workspace_files(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: MemlensServer,
                                       params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get("memlens"), dict):
            ls.configure(settings["memlens"])
        else:
            await _pull_configuration(ls)
        _build(ls, ls.rebuild, None)
        ls.publish(ls.open_paths())

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: MemlensServer, params: Any) -> None:
        watcher.stop(ls)


def _build(ls: MemlensServer, build: Callable[[], WorkspaceService],
           progress: Callable[[str, int | None], None] | None) -> WorkspaceService:
    """Build the index with `progress` listening, then tell the user what it refused or where
    its walk stopped (once per distinct message)."""
    reset = BUILD_PROGRESS.set(progress)
    try:
        service = build()
    finally:
        BUILD_PROGRESS.reset(reset)
    for message in service.notices():
        log.warning("%s", message)
        if message in ls.notices_shown:
            continue
        ls.notices_shown.add(message)
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning,
                                                       message=message))
    return service


async def _pull_configuration(ls: MemlensServer) -> None:
    workspace = ls.client_capabilities.workspace
    if not (ls.pull_configuration and workspace and workspace.configuration):
        return
    try:
        result = await ls.workspace_configuration_async(types.ConfigurationParams(
            items=[types.ConfigurationItem(section="memlens")]))
    except Exception:
        return
    if result and isinstance(result[0], dict):
        ls.editor.window = {**ls.editor.window, **ls.owner_settings(result[0])}
    # Then each folder's own values (a client resolves them for its scopeUri, as VS Code does
    # resource-scoped settings); a client that cannot answer still has the window's.
    folders = ls.service.folders
    if not folders:
        return
    try:
        scoped = await ls.workspace_configuration_async(types.ConfigurationParams(items=[
            types.ConfigurationItem(scope_uri=uri_of(folder), section="memlens")
            for folder in folders]))
    except Exception:
        return
    for folder, values in zip(folders, scoped or [], strict=False):
        if isinstance(values, dict):
            ls.editor.folders[folder] = {**ls.editor.folders.get(folder, {}),
                                         **ls.owner_settings(values)}


# Every agent's memory and the files that decide it (the index and the answers kept per
# generation rely on hearing of them): Markdown (memory, imports, rules, instructions),
# Cursor's rules, the ignore files, Gemini CLI's and Claude Code's settings.
WATCHED_GLOBS = ["**/*.md", "**/*.txt", "**/*.mdc", "**/.cursorrules", "**/.geminiignore",
                 "**/.gitignore", "**/.gemini/settings.json", "**/.claude/settings*.json"]


async def _watch_workspace_files(ls: MemlensServer) -> None:
    """Ask the client to tell us about files changed outside the editor (didChangeWatchedFiles)."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    options = types.DidChangeWatchedFilesRegistrationOptions(
        watchers=[types.FileSystemWatcher(glob_pattern=g) for g in WATCHED_GLOBS])
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[
            types.Registration(id="memlens-watched-files",
                               method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                               register_options=options)]))
    except Exception:  # the index still works; only outside edits go unnoticed
        return
