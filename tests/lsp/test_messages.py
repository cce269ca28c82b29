"""Messages that come with their fix (issue 13): where a Gemini API key is missing, the answer
says so in a way the editor turns into a "Set Gemini API Key" action."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from .conftest import SERVE, plain, start

NO_KEY = ClientServerConfig(
    server_command=SERVE,
    server_env={k: v for k, v in os.environ.items()
                if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")})


@pytest_lsp.fixture(config=NO_KEY)
async def managed(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, workspace, memoryManager=True)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_no_key_answers_say_so(managed: LanguageClient, workspace: Path) -> None:
    before = (workspace / "home" / ".gemini" / "GEMINI.md").read_text()
    added = plain(await managed.protocol.send_request_async(
        "memlens/addMemory", {"fact": "use tabs", "scope": "global"}))
    assert isinstance(added, dict)
    assert (added["managed"], added["success"], added["needsKey"]) == (True, False, True)
    assert "needs a Gemini API key" in added["message"]
    assert (workspace / "home" / ".gemini" / "GEMINI.md").read_text() == before
    extracted = plain(await managed.protocol.send_request_async("memlens/skills/extract", {}))
    assert isinstance(extracted, dict)
    assert extracted["status"] == "no-key" and extracted["created"] == []
    assert "needs a Gemini API key" in extracted["message"]
