"""JIT loading on open: `memlens/jitLoaded` once per file per session, and `memlens/jit`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from ..conftest import TreeSpec, build_tree
from .conftest import SERVER, open_doc, plain, start, uri


def _collect(client: LanguageClient) -> list[Any]:
    received: list[Any] = []

    @client.feature("memlens/jitLoaded")
    def on_jit(params: Any) -> None:
        received.append(params)

    return received


async def _settle() -> None:
    await asyncio.sleep(0.3)


def _as_dict(params: Any) -> dict[str, Any]:
    data = plain(params)
    assert isinstance(data, dict)
    return data


@pytest.mark.asyncio
async def test_opening_a_subfolder_file_loads_its_memory_once(client: LanguageClient,
                                                              workspace: Path) -> None:
    received = _collect(client)
    await open_doc(client, workspace / "api" / "app.py")
    await _settle()
    assert len(received) == 1
    first = _as_dict(received[0])
    assert first["uri"] == uri(workspace / "api" / "app.py")
    # One entry per agent shown that loads something: here Gemini CLI alone (pinned, no other
    # agent's files), named like any other.
    (load,) = first["loads"]
    assert (load["agent"], load["label"]) == ("gemini", "Gemini CLI")
    assert [(f["path"], f["chars"], f["reason"]) for f in load["files"]] == [
        (str(workspace / "api" / "GEMINI.md"), len("# API rules\nValidate input.\n"), None)]
    assert load["context"] == (
        "\n\n--- Newly Discovered Project Context ---\n"
        f"--- Context from: {workspace}/api/GEMINI.md ---\n# API rules\nValidate input.\n"
        f"--- End of Context from: {workspace}/api/GEMINI.md ---\n--- End Project Context ---")
    # Each file is injected at most once per session, as in Gemini CLI.
    await open_doc(client, workspace / "api" / "GEMINI.md")
    await _settle()
    assert len(received) == 1, plain(received[1])
    # Startup memory (the root GEMINI.md) is never re-announced.
    await open_doc(client, workspace / "docs" / "a.md")
    await _settle()
    assert len(received) == 1


@pytest.mark.asyncio
async def test_jit_request_previews_without_marking(client: LanguageClient,
                                                    workspace: Path) -> None:
    target = uri(workspace / "web" / "index.ts")
    for _ in range(2):
        result = await client.protocol.send_request_async("memlens/jit", {"uri": target})
        data = _as_dict(result)
        assert data["uri"] == target
        (load,) = data["loads"]
        assert (load["agent"], load["label"]) == ("gemini", "Gemini CLI")
        assert [f["path"] for f in load["files"]] == [str(workspace / "web" / "GEMINI.md")]
    # Nothing was marked: opening the file still loads it, once.
    received = _collect(client)
    await open_doc(client, workspace / "web" / "index.ts")
    await _settle()
    assert [[f["path"] for f in load["files"]] for load in _as_dict(received[0])["loads"]] == [
        [str(workspace / "web" / "GEMINI.md")]]


async def _preview(client: LanguageClient, path: Path) -> list[dict[str, Any]]:
    data = _as_dict(await client.protocol.send_request_async("memlens/jit", {"uri": uri(path)}))
    assert data["uri"] == uri(path)
    loads = data["loads"]
    assert isinstance(loads, list)
    return loads


@pytest.mark.asyncio
async def test_jit_request_answers_per_agent_as_the_notice(client: LanguageClient,
                                                           workspace: Path) -> None:
    """Gemini CLI (pinned) and Claude Code (its files are here) load different files on a read
    of api/app.py: `memlens/jit` names each agent with its own files and reasons, in the
    registry's order, exactly as the `memlens/jitLoaded` notification then says it; a preview
    is of a session just started, so it answers the same after the file was opened."""
    (workspace / "CLAUDE.md").write_text("Root rules.\n")
    (workspace / "api" / "CLAUDE.md").write_text("API: validate input.\n")
    rules = workspace / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "python.md").write_text("---\npaths:\n  - \"**/*.py\"\n---\nType hints.\n")
    await client.protocol.send_request_async("memlens/refresh", {})
    app = workspace / "api" / "app.py"
    preview = await _preview(client, app)
    assert [(load["agent"], load["label"]) for load in preview] == [
        ("gemini", "Gemini CLI"), ("claude", "Claude Code")]
    gemini, claude = preview
    assert [(f["path"], f["chars"], f["reason"]) for f in gemini["files"]] == [
        (str(workspace / "api" / "GEMINI.md"), len("# API rules\nValidate input.\n"), None)]
    assert gemini["context"].startswith("\n\n--- Newly Discovered Project Context ---\n")
    assert [(f["path"], f["reason"]) for f in claude["files"]] == [
        (str(workspace / "api" / "CLAUDE.md"), "api/ is read"),
        (str(rules / "python.md"), "paths: **/*.py")]
    received = _collect(client)
    await open_doc(client, app)
    await _settle()
    (event,) = received
    assert _as_dict(event)["loads"] == preview
    assert await _preview(client, app) == preview


CLAUDE_ONLY: TreeSpec = {
    ".git": None,
    "home": None,
    "CLAUDE.md": "Claude rules for the whole repository.\n",
    "src/CLAUDE.md": "Source folder rules.\n",
    ".claude/rules/src.md": "---\npaths: src/**\n---\nSource rule.\n",
    "src/app.py": "print('hi')\n",
}


@pytest_lsp.fixture(config=SERVER)
async def claude_only(lsp_client: LanguageClient, tmp_path: Path
                      ) -> AsyncIterator[LanguageClient]:
    """A repository with only Claude Code's files, Claude Code alone in use (pinned)."""
    root = Path(os.path.realpath(tmp_path)) / "repo"
    build_tree(root, CLAUDE_ONLY)
    await start(lsp_client, root, agents=["claude"])
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_jit_request_where_only_claude_code_is_shown(claude_only: LanguageClient,
                                                           tmp_path: Path) -> None:
    """Only Claude Code shown: one entry, Claude Code's, and no Gemini CLI entry at all."""
    root = Path(os.path.realpath(tmp_path)) / "repo"
    loads = await _preview(claude_only, root / "src" / "app.py")
    assert [(load["agent"], load["label"]) for load in loads] == [("claude", "Claude Code")]
    (claude,) = loads
    assert [(f["path"], f["chars"], f["reason"]) for f in claude["files"]] == [
        (str(root / "src" / "CLAUDE.md"), len("Source folder rules.\n"), "src/ is read"),
        (str(root / ".claude" / "rules" / "src.md"), len(str(CLAUDE_ONLY[".claude/rules/src.md"])),
         "paths: src")]  # Claude Code's own reading of `src/**`
    assert "Source folder rules." in claude["context"]
    # A read that brings Claude Code nothing new: no entry.
    assert await _preview(claude_only, root / "CLAUDE.md") == []
