"""Effective-context diff in the editor: memlens/contextChanged after a save, and
memlens/contextDiff (issue 14), through the real server and a real LSP client."""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient

from memlens.protocol.context_diff import ContextChangedEvent, ContextDiffResult

from ..conftest import build_tree
from .conftest import SERVE, open_doc, plain, start, uri

# Gemini CLI 0.44+ and Claude Code only: what the test names is what they send.
SERVER = ClientServerConfig(
    server_command=SERVE,
    server_env={**os.environ, "MEMLENS_LOG_LEVEL": "WARNING",
                "MEMLENS_AGENTS": "gemini@0.44+,claude"})

TREE = {
    ".git": None,
    "GEMINI.md": "# Gemini rules\n@./docs/style.md\n",
    "CLAUDE.md": "# Claude rules\n@docs/style.md\n",
    "docs/style.md": "Style v1\n",
    "api/GEMINI.md": "# API rules\n",
    "api/CLAUDE.md": "# API Claude\n",
    "api/app.py": "print()\n",
    "web/GEMINI.md": "# Web rules\n",
    "home/.gemini/GEMINI.md": "Global: be brief.\n",
}
CHANGED = "memlens/contextChanged"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    build_tree(root, TREE)
    return root


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, repo: Path) -> AsyncIterator[LanguageClient]:
    @lsp_client.feature(CHANGED)
    def on_changed(params: Any) -> None:  # known to the client: waiting for it works
        pass

    await start(lsp_client, repo)
    yield lsp_client
    await lsp_client.shutdown_session()


async def _next_change(client: LanguageClient) -> ContextChangedEvent:
    """The next memlens/contextChanged (notifications arrive in the order they are sent, so
    the first one after a save that changed nothing is the next real change's)."""
    params: Any = await asyncio.wait_for(client.wait_for_notification(CHANGED), 60)
    return ContextChangedEvent.model_validate(plain(params))


async def _round_trip(client: LanguageClient, path: Path) -> None:
    """The server handles messages in order: once this answers, it has seen the ones before."""
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))


async def _save(client: LanguageClient, path: Path, text: str, version: int = 2) -> None:
    """As VS Code saves: the buffer changes, the file is written, then didSave (the round
    trips make the server see the open document before the disk changes, as in an editor)."""
    await _round_trip(client, path)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    await _round_trip(client, path)
    path.write_text(text)
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))


@pytest.mark.asyncio
async def test_saving_an_import_names_the_agents_and_folders_it_changes(
        client: LanguageClient, repo: Path) -> None:
    style = repo / "docs" / "style.md"
    await open_doc(client, style)
    await _save(client, style, "Style v2\n")
    event = await _next_change(client)
    assert event.trigger == uri(style)
    assert event.trigger_name == "style.md"
    # Gemini CLI reads the root GEMINI.md (which imports style.md) working in every folder;
    # Claude Code expands the import only working in the root (in api/ it sends the line).
    assert event.summary == ("style.md changes what Gemini CLI reads in 3 folders and what "
                             "Claude Code reads in 1 folder")
    assert [(c.agent, c.profile, c.relative_folder) for c in event.changes] == [
        ("gemini", "gemini@0.44+", "."), ("gemini", "gemini@0.44+", "api"),
        ("gemini", "gemini@0.44+", "web"), ("claude", "claude@2.1", ".")]
    for change in event.changes:
        assert (change.added, change.removed) == (1, 1)
        assert "-Style v1\n+Style v2\n" in change.diff

    answer = await client.protocol.send_request_async(
        "memlens/contextDiff", {"agent": "claude", "folder": str(repo)})
    result = ContextDiffResult.model_validate(plain(answer))
    assert result.title == "style.md → what Claude Code reads in ws/ (before ↔ after)"
    assert f"Contents of {style} (project instructions" in result.before
    assert "\n\nStyle v1\n" in result.before and "Style v2" not in result.before
    assert "\n\nStyle v2\n" in result.after and "Style v1" not in result.after
    assert result.before.replace("Style v1", "Style v2") == result.after


@pytest.mark.asyncio
async def test_a_save_that_changes_nothing_sends_nothing(client: LanguageClient,
                                                         repo: Path) -> None:
    app = repo / "api" / "app.py"
    await open_doc(client, app)
    await _save(client, app, "print('not memory')\n")
    gemini = repo / "api" / "GEMINI.md"
    await open_doc(client, gemini)
    await _save(client, gemini, gemini.read_text())  # saved unchanged
    # Now a real change: only the folders below api/ (api/ itself) change, for Gemini CLI.
    await _save(client, gemini, "# API rules\nValidate input.\n", version=3)
    event = await _next_change(client)
    assert event.summary == "GEMINI.md changes what Gemini CLI reads in 1 folder"
    assert [(c.agent, c.relative_folder) for c in event.changes] == [("gemini", "api")]
    assert "+Validate input.\n" in event.changes[0].diff


@pytest.mark.asyncio
async def test_a_claude_file_changes_claude_only(client: LanguageClient, repo: Path) -> None:
    claude = repo / "api" / "CLAUDE.md"
    await open_doc(client, claude)
    await _save(client, claude, "# API Claude\nNo globals.\n")
    event = await _next_change(client)
    assert event.summary == "CLAUDE.md changes what Claude Code reads in 1 folder"
    assert [(c.agent, c.folder) for c in event.changes] == [("claude", str(repo / "api"))]
    answer = await client.protocol.send_request_async(
        "memlens/contextDiff", {"agent": "claude", "folder": str(repo / "api")})
    result = ContextDiffResult.model_validate(plain(answer))
    assert result.title == "CLAUDE.md → what Claude Code reads in api/ (before ↔ after)"
    assert "No globals." in result.after and "No globals." not in result.before


@pytest.mark.asyncio
async def test_the_diff_of_an_unchanged_pair_is_invalid_params(client: LanguageClient,
                                                              repo: Path) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await client.protocol.send_request_async(
            "memlens/contextDiff", {"agent": "codex", "folder": str(repo)})
    assert "no change" in str(caught.value)


@pytest.mark.asyncio
async def test_a_change_the_file_watcher_reports_counts_too(client: LanguageClient,
                                                            repo: Path) -> None:
    gemini = repo / "GEMINI.md"
    await open_doc(client, gemini)  # the baseline is taken here
    await _round_trip(client, gemini)
    style = repo / "docs" / "style.md"  # not open: another tool rewrites it
    style.write_text("Style v3\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(style), type=types.FileChangeType.Changed)]))
    event = await _next_change(client)
    assert event.trigger_name == "style.md"
    assert [(c.agent, c.relative_folder) for c in event.changes] == [
        ("gemini", "."), ("gemini", "api"), ("gemini", "web"), ("claude", ".")]
    assert all("+Style v3\n" in c.diff for c in event.changes)


@pytest.mark.asyncio
async def test_a_batch_of_changes_is_one_notification(client: LanguageClient,
                                                      repo: Path) -> None:
    gemini = repo / "GEMINI.md"
    await open_doc(client, gemini)  # the baseline is taken here
    await _round_trip(client, gemini)
    changed = [repo / "api" / "GEMINI.md", repo / "web" / "GEMINI.md", repo / "api" / "CLAUDE.md"]
    for path in changed:
        path.write_text(path.read_text() + "Switched branch.\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(p), type=types.FileChangeType.Changed) for p in changed]))
    event = await _next_change(client)
    assert event.trigger == uri(changed[0])
    assert event.summary == ("GEMINI.md and 2 more files change what Gemini CLI reads in 2 "
                             "folders and what Claude Code reads in 1 folder")
    assert [(c.agent, c.relative_folder) for c in event.changes] == [
        ("gemini", "api"), ("gemini", "web"), ("claude", "api")]
    # Nothing else follows: the one notification covered the batch.
    await _round_trip(client, gemini)
    await asyncio.sleep(0.5)
    await _round_trip(client, gemini)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(client.wait_for_notification(CHANGED), 1)


# No pins; `claude` and `opencode` on PATH (each answers only `--version`): the agents compared
# are the ones the editor shows for the folder.
_BIN = Path(tempfile.mkdtemp(prefix="memlens-fake-agents-"))
atexit.register(shutil.rmtree, _BIN, ignore_errors=True)
(_BIN / "bin").mkdir()
for _name, _answer in (("claude", "2.1.330 (Claude Code)"), ("opencode", "1.18.33")):
    (_BIN / "bin" / _name).write_text(f"#!/bin/sh\necho '{_answer}'\n")
    (_BIN / "bin" / _name).chmod(0o755)
SHOWN_SERVER = ClientServerConfig(
    server_command=SERVE,
    server_env={**{k: v for k, v in os.environ.items()
                   if k not in ("MEMLENS_AGENTS", "GEMINI_CLI_HOME")},
                "PATH": f"{_BIN / 'bin'}:/usr/bin:/bin", "MEMLENS_LOG_LEVEL": "WARNING",
                "XDG_CACHE_HOME": str(_BIN / "cache")})


@pytest.fixture
def agents_md_repo(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    build_tree(root, {".git": None, "CLAUDE.md": "# Claude rules\n",
                      "AGENTS.md": "# Agents\nRun the tests.\n", "home": None})
    return root


@pytest_lsp.fixture(config=SHOWN_SERVER)
async def shown_client(lsp_client: LanguageClient, agents_md_repo: Path
                       ) -> AsyncIterator[LanguageClient]:
    @lsp_client.feature(CHANGED)
    def on_changed(params: Any) -> None:
        pass

    await start(lsp_client, agents_md_repo)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_agents_compared_are_the_agents_shown(shown_client: LanguageClient,
                                                        agents_md_repo: Path) -> None:
    # An AGENTS.md beside a CLAUDE.md, with Claude Code and OpenCode installed: OpenCode reads
    # the AGENTS.md. The comparison used to be Gemini CLI, Claude Code and Codex, whatever
    # was installed: this user heard what Codex reads, and nothing of OpenCode.
    agents_md = agents_md_repo / "AGENTS.md"
    await open_doc(shown_client, agents_md)
    await _save(shown_client, agents_md, "# Agents\nRun the tests twice.\n")
    event = await _next_change(shown_client)
    assert [(c.agent, c.profile) for c in event.changes] == [("opencode", "opencode@1.18")]
    assert event.summary == "AGENTS.md changes what OpenCode reads in 1 folder"
