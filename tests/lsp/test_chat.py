"""The chat methods over LSP, with the approval round trip, against the fake Gemini server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from ..fake_gemini import FakeGemini, function_call, hang, text
from .conftest import SERVER, ChatRecorder, plain, send_chat, start_chat

KEY = "AIzaLSPTESTKEY-0123456789abcdefghijklmnop"


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


@pytest_lsp.fixture(config=SERVER)
async def chat_client(lsp_client: LanguageClient, workspace: Path,
                      fake: FakeGemini) -> AsyncIterator[LanguageClient]:
    await start_chat(lsp_client, workspace, fake.base_url)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_status_reports_model_and_mode(chat_client: LanguageClient) -> None:
    status = plain(await chat_client.protocol.send_request_async("memlens/chat/status", {}))
    assert isinstance(status, dict) and status["model"] == "gemini-flash-latest"
    assert status["approvalMode"] == "manual"


@pytest.mark.asyncio
async def test_listing_sessions_of_a_new_project_registers_nothing(
        chat_client: LanguageClient, workspace: Path) -> None:
    # Reading must not claim a slug in Gemini CLI's registry (~/.gemini/projects.json).
    sessions = plain(await chat_client.protocol.send_request_async("memlens/chat/sessions", {}))
    history = plain(await chat_client.protocol.send_request_async(
        "memlens/chat/history", {"sessionId": "nope"}))
    assert sessions == {"sessions": []}
    assert history == {"sessionId": "nope", "messages": []}
    assert not (workspace / "home" / ".gemini" / "projects.json").exists()
    assert not (workspace / "home" / ".gemini" / "tmp").exists()


@pytest.mark.asyncio
async def test_a_turn_with_an_approved_write(chat_client: LanguageClient, workspace: Path,
                                             fake: FakeGemini) -> None:
    recorder = ChatRecorder(chat_client, ["approve"])
    key = plain(await chat_client.protocol.send_request_async("memlens/setApiKey",
                                                               {"key": KEY}))
    assert key == {"hasApiKey": True}
    target = workspace / "api" / "NOTES.md"
    fake.enqueue(function_call("write_file", {"file_path": str(target), "content": "note\n"}),
                 text("Done, ", "written."))
    result = await send_chat(chat_client, "s1", "write a note")
    assert result == {"sessionId": "s1", "status": "done"}
    assert target.read_text() == "note\n"
    (approval,) = recorder.approvals
    assert approval["tool"] == "write_file" and approval["sessionId"] == "s1"
    assert "+note" in approval["diff"]
    await asyncio.sleep(0.2)  # notifications may trail the response
    assert recorder.kinds() == ["toolCall", "toolResult", "memoryLoaded", "text", "text",
                                "done"]
    loaded = recorder.events[2]["files"]
    assert [f["path"] for f in loaded] == [str(workspace / "api" / "GEMINI.md")]
    assert all(r.api_key_matches for r in fake.requests)
    sessions = plain(await chat_client.protocol.send_request_async("memlens/chat/sessions", {}))
    assert [s["sessionId"] for s in sessions["sessions"]] == ["s1"]  # type: ignore[index]
    history = plain(await chat_client.protocol.send_request_async(
        "memlens/chat/history", {"sessionId": "s1"}))
    assert history["messages"] == [{"role": "user", "text": "write a note"},  # type: ignore[index]
                                   {"role": "model", "text": "Done, written."}]


@pytest.mark.asyncio
async def test_denied_write_and_cancel(chat_client: LanguageClient, workspace: Path,
                                       fake: FakeGemini) -> None:
    recorder = ChatRecorder(chat_client, ["deny"])
    await chat_client.protocol.send_request_async("memlens/setApiKey", {"key": KEY})
    target = workspace / "denied.md"
    fake.enqueue(function_call("write_file", {"file_path": str(target), "content": "x"}),
                 text("OK, not written."),
                 text("Thinking") + hang(30) + text("never"))
    assert (await send_chat(chat_client, "s2", "write"))["status"] == "done"
    assert not target.exists()
    pending = asyncio.ensure_future(send_chat(chat_client, "s2", "long one"))
    for _ in range(200):
        if recorder.kinds().count("text") >= 2:
            break
        await asyncio.sleep(0.02)
    cancelled = plain(await chat_client.protocol.send_request_async(
        "memlens/chat/cancel", {"sessionId": "s2"}))
    assert cancelled == {"cancelled": True}
    assert (await asyncio.wait_for(pending, 10))["status"] == "cancelled"


@pytest.mark.asyncio
async def test_malformed_chat_params(chat_client: LanguageClient) -> None:
    from pygls.exceptions import JsonRpcException

    with pytest.raises(JsonRpcException) as raised:
        await chat_client.protocol.send_request_async("memlens/chat/send", {"text": "no id"})
    assert raised.value.code == -32602
