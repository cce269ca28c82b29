"""Issue 15 over LSP: the real server (stdio) chatting with a hostile fake model.

A tool the model points at a FIFO or a catastrophic regular expression must not stop the
server: another request (a hover, the chat's own cancel) is answered while the turn runs, and
the turn ends with a `done` event. Bad tool arguments are a tool error, not a -32603.
Every wait is bounded (asyncio.wait_for) so a hang fails the test instead of blocking CI.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from ..fake_gemini import FakeGemini, function_call, text
from .conftest import SERVER, ChatRecorder, open_doc, plain, send_chat, start_chat

KEY = "AIzaLSPSECURITYKEY-0123456789abcdefghijk"
SECRET = "OUTSIDE-SECRET-5c1d"
WAIT = 20  # seconds: far more than any answer needs, far less than the test timeout


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


@pytest_lsp.fixture(config=SERVER)
async def chat_client(lsp_client: LanguageClient, workspace: Path,
                      fake: FakeGemini) -> AsyncIterator[LanguageClient]:
    # Traps set before the server starts: a FIFO, a file with a line built for backtracking,
    # and a memory file that is a symbolic link out of the workspace.
    os.mkfifo(workspace / "pipe")
    (workspace / "evil.txt").write_text("a" * 40 + "!\n")
    outside = workspace.parent / "elsewhere.md"
    outside.write_text(f"Injected {SECRET}\n")
    (workspace / "web" / "GEMINI.md").unlink()
    (workspace / "web" / "GEMINI.md").symlink_to(outside)
    await start_chat(lsp_client, workspace, fake.base_url)
    await lsp_client.protocol.send_request_async("memlens/setApiKey", {"key": KEY})
    yield lsp_client
    await lsp_client.shutdown_session()


async def still_answers(client: LanguageClient, workspace: Path) -> None:
    """A hover and the chat's cancel are both answered while the turn runs."""
    doc = await open_doc(client, workspace / "GEMINI.md")
    hover = await asyncio.wait_for(client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=2, character=3))), WAIT)
    assert hover is not None
    status = await asyncio.wait_for(
        client.protocol.send_request_async("memlens/chat/status", {}), WAIT)
    assert plain(status)["model"]  # type: ignore[index]


def tool_errors(fake: FakeGemini, index: int) -> list[str]:
    return [r["response"].get("error", "") for r in fake.requests[index].function_responses]


@pytest.mark.asyncio
async def test_write_file_on_a_fifo_does_not_stop_the_server(
        chat_client: LanguageClient, workspace: Path, fake: FakeGemini) -> None:
    recorder = ChatRecorder(chat_client, default="approve")
    fake.enqueue(function_call("write_file", {"file_path": str(workspace / "pipe"),
                                              "content": "x"}),
                 text("Could not."))
    turn = asyncio.ensure_future(send_chat(chat_client, "s1", "write the pipe"))
    await recorder.wait_for("toolCall")
    await still_answers(chat_client, workspace)
    assert (await asyncio.wait_for(turn, WAIT))["status"] == "done"
    assert "Not a regular file" in tool_errors(fake, 1)[0]
    await recorder.wait_for("done")


@pytest.mark.asyncio
async def test_a_search_over_a_fifo_and_a_catastrophic_regex_do_not_stop_the_server(
        chat_client: LanguageClient, workspace: Path, fake: FakeGemini) -> None:
    recorder = ChatRecorder(chat_client, default="approve")
    fake.enqueue(function_call("search_file_content", {"pattern": "(a+)+$"}),
                 function_call("search_file_content", {"pattern": "Validate"}),
                 text("Searched."))
    turn = asyncio.ensure_future(send_chat(chat_client, "s2", "search"))
    await recorder.wait_for("toolCall")
    await still_answers(chat_client, workspace)
    assert (await asyncio.wait_for(turn, WAIT))["status"] == "done"
    first = fake.requests[1].function_responses[-1]["response"]["output"]
    assert first.startswith('Found 0 match(es) for pattern "(a+)+$"')
    second = fake.requests[2].function_responses[-1]["response"]["output"]
    assert f"{workspace}/api/GEMINI.md:2: Validate input." in second
    # A search the user cancels ends the turn at once.
    cancelled = plain(await asyncio.wait_for(chat_client.protocol.send_request_async(
        "memlens/chat/cancel", {"sessionId": "s2"}), WAIT))
    assert cancelled == {"cancelled": False}  # nothing left to cancel


@pytest.mark.asyncio
async def test_bad_tool_arguments_are_a_tool_error_and_done_still_arrives(
        chat_client: LanguageClient, workspace: Path, fake: FakeGemini) -> None:
    recorder = ChatRecorder(chat_client, default="approve")
    fake.enqueue(function_call("read_file", {"absolute_path": str(workspace / "GEMINI.md"),
                                             "offset": "abc", "limit": 2.5}),
                 text("Sorry."))
    result = await asyncio.wait_for(send_chat(chat_client, "s3", "read"), WAIT)
    assert result == {"sessionId": "s3", "status": "done"}
    (error,) = tool_errors(fake, 1)
    assert error.startswith("Invalid arguments for read_file: ")
    assert "offset" in error and "limit" in error
    await recorder.wait_for("done")
    assert recorder.events[-1]["reason"] == "stop"


@pytest.mark.asyncio
async def test_a_memory_symlink_out_of_the_workspace_is_not_sent(
        chat_client: LanguageClient, workspace: Path, fake: FakeGemini) -> None:
    recorder = ChatRecorder(chat_client, default="approve")
    fake.enqueue(function_call("list_directory", {"path": str(workspace / "web")}),
                 function_call("read_file", {"absolute_path": str(workspace / "web" /
                                                                  "GEMINI.md")}),
                 text("ok"))
    assert (await asyncio.wait_for(send_chat(chat_client, "s4", "look"), WAIT))["status"] == "done"
    sent = "\n".join(json.dumps(r.body) for r in fake.requests)
    assert SECRET not in sent
    assert "outside the workspace" in tool_errors(fake, 2)[-1]
    loaded = [f["path"] for e in recorder.events if e["kind"] == "memoryLoaded"
              for f in e["files"]]
    assert str(workspace / "web" / "GEMINI.md") not in loaded
