"""Issue 15 over LSP: a stalled model stream, and keys that must never leave the server
(events, window/logMessage, the server's own log on stderr, transcripts)."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from ..fake_gemini import FakeGemini, error, hang, text
from .conftest import SERVE, ChatRecorder, plain, send_chat, start_chat

# Keys of no known shape: only knowing them can keep them out of output.
ENV_KEY = "env-secret-not-a-google-shape-7f3a9c2e"
SECRET_KEY = "from-vscode-secret-storage-55d0e1b9a7"
STDERR_LOG = Path(os.environ.get("TMPDIR", "/tmp")) / f"memlens-lsp-stderr-{os.getpid()}.log"

_ENV = {k: v for k, v in os.environ.items()
        if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "MEMLENS_GEMINI_BASE_URL")}
SERVER = ClientServerConfig(
    server_command=["sh", "-c", f"exec {shlex.join(SERVE)} 2>>{shlex.quote(str(STDERR_LOG))}"],
    server_env={**_ENV, "MEMLENS_LOG_LEVEL": "DEBUG", "GEMINI_API_KEY": ENV_KEY,
                "GEMINI_CLI_TRUST_WORKSPACE": "true", "MEMLENS_RETRY_INITIAL_DELAY_MS": "5",
                "MEMLENS_RETRY_MAX_ATTEMPTS": "2"})


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=ENV_KEY) as server:
        yield server


@pytest_lsp.fixture(config=SERVER)
async def chat_client(lsp_client: LanguageClient, workspace: Path,
                      fake: FakeGemini) -> AsyncIterator[LanguageClient]:
    await start_chat(lsp_client, workspace, fake.base_url, stallTimeoutMs=300)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_stalled_stream_ends_the_turn_and_the_session_survives(
        chat_client: LanguageClient, fake: FakeGemini) -> None:
    recorder = ChatRecorder(chat_client)
    fake.enqueue(hang(60) + text("never"), hang(60) + text("never"), text("Back."))
    assert (await send_chat(chat_client, "s1", "hi"))["status"] == "error"
    await asyncio.sleep(0.2)
    final = [e for e in recorder.events if e["kind"] == "error"][-1]
    assert "stalled" in final["message"] and final.get("retryable") is False
    assert recorder.events[-1] == {"sessionId": "s1", "kind": "done", "reason": "error"}
    assert (await send_chat(chat_client, "s1", "again"))["status"] == "done"


@pytest.mark.asyncio
async def test_no_key_reaches_events_log_messages_stderr_or_transcripts(
        chat_client: LanguageClient, fake: FakeGemini, workspace: Path) -> None:
    recorder = ChatRecorder(chat_client)
    # The key from the server's environment: echoed by the endpoint, repeated by the model.
    fake.enqueue(error(429, f"Quota exceeded for API key {ENV_KEY}"),
                 text("Your key is ", ENV_KEY[:9], ENV_KEY[9:] + "."),
                 error(400, f"API key not valid: {ENV_KEY}"))
    assert (await send_chat(chat_client, "env", "hi"))["status"] == "done"
    assert (await send_chat(chat_client, "env", "again"))["status"] == "error"
    # The extension's key (from its SecretStorage) then takes over.
    await chat_client.protocol.send_request_async("memlens/setApiKey", {"key": SECRET_KEY})
    fake.expect_key = SECRET_KEY
    fake.enqueue(text("Now it is ", SECRET_KEY[:5], SECRET_KEY[5:] + "."),
                 error(500, f"internal error for {SECRET_KEY}", times=2))
    assert (await send_chat(chat_client, "env", "and now?"))["status"] == "done"
    assert (await send_chat(chat_client, "env", "once more"))["status"] == "error"
    assert all(r.api_key_matches for r in fake.requests)
    await asyncio.sleep(0.3)  # notifications may trail the response
    events = json.dumps(recorder.events)
    assert "Your key is [REDACTED]." in "".join(
        e.get("text", "") for e in recorder.events if e["sessionId"] == "env")
    assert "Quota exceeded for API key [REDACTED]" in events
    assert "internal error for [REDACTED]" in events
    logs = json.dumps([plain(m) for m in chat_client.log_messages])
    stderr = STDERR_LOG.read_text(errors="replace")  # this server's, and earlier tests' ones
    assert "Sending data" in stderr  # the debug log really holds every message body
    transcripts = "".join(p.read_text(errors="replace")
                          for p in (workspace / "home" / ".gemini").rglob("*") if p.is_file())
    assert "[REDACTED]" in transcripts
    for key in (ENV_KEY, SECRET_KEY):
        for where, content in (("events", events), ("window/logMessage", logs),
                               ("stderr", stderr), ("transcripts", transcripts)):
            assert key not in content, f"{key} leaked into {where}"


@pytest.fixture(autouse=True, scope="module")
def _remove_stderr_log() -> Iterator[None]:
    yield
    STDERR_LOG.unlink(missing_ok=True)
