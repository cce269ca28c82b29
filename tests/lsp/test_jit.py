"""JIT loading on open: `memlens/jitLoaded` once per file per session, and `memlens/jit`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from .conftest import open_doc, plain, uri


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
        paths = [f["path"] for f in data["files"]]
        assert paths == [str(workspace / "web" / "GEMINI.md")]
