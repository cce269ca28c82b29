"""The chat agent end to end: the real google-genai client against the fake Gemini server.

Covers memory in the prompt, a tool loop with JIT text in the tool result, approvals
(approve / always / deny / modified), writes outside the workspace, malformed function calls,
429 then success, 500 forever, cancellation mid-stream, and the API key never leaking.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memlens.agent.chat import ChatSession
from memlens.agent.config import ChatSettings
from memlens.agent.context import AgentContext
from memlens.agent.records import chats_dir, list_sessions, read_transcript
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.agents.gemini.jit import JitSession
from memlens.agents.gemini.skills import discover_skills
from memlens.model import MemorySettings
from memlens.protocol.chat import ApprovalRequest, ApprovalResponse, ChatEvent

from .conftest import build_tree
from .fake_gemini import FakeGemini, error, function_call, hang, raw, text, thought

KEY = "AIzaTESTKEY-0123456789abcdefghijklmnopqrst"


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


@pytest.fixture
def ws(root: Path) -> Path:
    build_tree(root, {
        "ws/.git": None,
        "ws/GEMINI.md": "# Rules\nUse tabs.\n",
        "ws/api/GEMINI.md": "API rule: validate input.\n",
        "ws/api/app.py": "print('hi')\n",
        "ws/notes.txt": "old line\n",
        "home/.gemini/GEMINI.md": "Global: be brief.\n",
        "ws/.gemini/skills/demo/SKILL.md": "---\nname: demo\ndescription: A demo skill.\n---\n"
                                           "Do the demo.\n",
        "outside/secret.txt": "SECRET\n",
        # The user trusts the workspace (untrusted, the chat is off and loads no project memory).
        "home/.gemini/trustedFolders.json": json.dumps({str(root / "ws"): "TRUST_FOLDER"}),
    })
    return root / "ws"


def context(ws: Path, fake: FakeGemini, **chat: Any) -> AgentContext:
    home = str(ws.parent / "home")
    settings = MemorySettings(home=home, discover_gemini_extensions=False)
    engine = MemoryEngine(settings)
    startup = engine.load(str(ws))
    chat_settings = ChatSettings(base_url=fake.base_url, initial_delay_ms=5, max_attempts=3,
                                 **chat)
    return AgentContext(settings=settings, chat=chat_settings, startup=startup,
                        jit=JitSession.after_startup(engine, startup),
                        skills=[s for s, _ in discover_skills(home, str(ws), True)],
                        transcripts=chats_dir(home, str(ws)), api_key=KEY)


class Run:
    def __init__(self, answers: list[str] | None = None):
        self.events: list[ChatEvent] = []
        self.approvals: list[ApprovalRequest] = []
        self.answers = list(answers or [])

    async def emit(self, event: ChatEvent) -> None:
        self.events.append(event)

    async def approve(self, request: ApprovalRequest) -> ApprovalResponse:
        self.approvals.append(request)
        answer = self.answers.pop(0) if self.answers else "deny"
        if answer.startswith("{"):
            return ApprovalResponse.model_validate_json(answer)
        return ApprovalResponse(outcome=answer)  # type: ignore[arg-type]

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]

    def text(self) -> str:
        return "".join(e.text or "" for e in self.events if e.kind == "text")


def send(session: ChatSession, prompt: str, run: Run) -> str:
    return asyncio.run(session.send(prompt, run.emit, run.approve))


def test_memory_goes_into_the_prompt_as_gemini_cli_puts_it(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(text("Hello", " there."))
    run = Run()
    session = ChatSession(context(ws, fake))
    assert send(session, "hi", run) == "done"
    assert run.text() == "Hello there."
    assert run.kinds() == ["text", "text", "done"]
    request = fake.last_request
    assert request.api_key_matches is True
    system = request.system_text
    # jit mode: global memory in the system instruction (string form) ...
    assert "# Contextual Instructions (GEMINI.md)" in system
    assert f"--- Context from: {ws.parent}/home/.gemini/GEMINI.md ---\nGlobal: be brief." in system
    assert "<available_skills>\n  <skill>\n    <name>demo</name>" in system
    # ... and the project memory in the first user message (getSessionMemory).
    first = request.contents[0]["parts"]
    assert first[0]["text"] == (
        f"\n<loaded_context>\n<project_context>\n--- Context from: {ws}/GEMINI.md ---\n"
        f"# Rules\nUse tabs.\n--- End of Context from: {ws}/GEMINI.md ---\n</project_context>\n"
        "</loaded_context>")
    assert first[1]["text"] == "hi"
    assert request.function_names == ["read_file", "list_directory", "glob",
                                      "search_file_content", "write_file", "replace",
                                      "save_memory", "activate_skill"]
    fake.assert_done()


def test_tool_loop_with_jit_context_in_the_result(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(function_call("read_file", {"absolute_path": str(ws / "api" / "app.py")},
                               id="c1"),
                 thought("thinking") + text("It prints hi."))
    run = Run()
    session = ChatSession(context(ws, fake))
    assert send(session, "what does app.py do?", run) == "done"
    assert run.kinds() == ["toolCall", "toolResult", "memoryLoaded", "thought", "text", "done"]
    (response,) = fake.requests[1].function_responses
    assert response["id"] == "c1" and response["name"] == "read_file"
    assert response["response"]["output"] == (
        "print('hi')\n\n\n--- Newly Discovered Project Context ---\n"
        f"--- Context from: {ws}/api/GEMINI.md ---\nAPI rule: validate input.\n"
        f"--- End of Context from: {ws}/api/GEMINI.md ---\n--- End Project Context ---")
    loaded = next(e for e in run.events if e.kind == "memoryLoaded")
    assert loaded.files == [{"path": f"{ws}/api/GEMINI.md", "chars": 26}]
    # The same file is never injected twice in one session.
    fake.enqueue(function_call("list_directory", {"path": str(ws / "api")}), text("ok"))
    send(session, "and the folder?", Run())
    again = fake.requests[3].function_responses[-1]["response"]["output"]
    assert again.startswith(f"Directory listing for {ws}/api:")
    assert "Newly Discovered" not in again
    fake.assert_done()


def test_write_needs_approval_and_happens_only_after_approve(ws: Path,
                                                             fake: FakeGemini) -> None:
    target = ws / "new.md"
    fake.enqueue(function_call("write_file", {"file_path": str(target), "content": "# New\n"}),
                 text("Denied, fine."),
                 function_call("write_file", {"file_path": str(target), "content": "# New\n"}),
                 text("Written."))
    session = ChatSession(context(ws, fake))
    denied = Run(["deny"])
    assert send(session, "write it", denied) == "done"
    assert not target.exists()
    (approval,) = denied.approvals
    assert approval.tool == "write_file" and approval.title == f"Write {target}"
    assert approval.diff is not None and "+# New" in approval.diff
    refusal = fake.requests[1].function_responses[0]["response"]["error"]
    assert "denied" in refusal
    approved = Run(["approve"])
    assert send(session, "now write it", approved) == "done"
    assert target.read_text() == "# New\n"
    fake.assert_done()


def test_an_edit_made_while_the_user_reads_the_proposal_is_never_overwritten(
        ws: Path, fake: FakeGemini) -> None:
    notes = ws / "notes.txt"
    fake.enqueue(function_call("write_file", {"file_path": str(notes), "content": "theirs\n"}),
                 function_call("replace", {"file_path": str(notes), "old_string": "old",
                                           "new_string": "new"}),
                 text("Stopped."))

    class EditsWhileAsked(Run):
        async def approve(self, request: ApprovalRequest) -> ApprovalResponse:
            notes.write_text(notes.read_text() + "mine\n")  # the user types meanwhile
            return await super().approve(request)

    run = EditsWhileAsked(["approve", "approve"])
    assert send(ChatSession(context(ws, fake)), "rewrite the notes", run) == "done"
    assert notes.read_text() == "old line\nmine\nmine\n"
    for request in fake.requests[1:3]:
        error = request.function_responses[0]["response"]["error"]
        assert error == (f"{notes} changed on disk after the change was proposed; nothing was "
                         "written. Read the file again and propose the change anew.")


def test_approve_always_is_remembered_per_tool(ws: Path, fake: FakeGemini) -> None:
    notes = ws / "notes.txt"
    fake.enqueue(function_call("replace", {"file_path": str(notes), "old_string": "old",
                                           "new_string": "new"}),
                 function_call("replace", {"file_path": str(notes), "old_string": "new line",
                                           "new_string": "newer line"}),
                 function_call("save_memory", {"fact": "I like tabs"}),
                 text("Done."))
    run = Run(["approveAlways", "deny"])
    assert send(ChatSession(context(ws, fake)), "edit twice", run) == "done"
    assert notes.read_text() == "newer line\n"
    assert [a.tool for a in run.approvals] == ["replace", "save_memory"]
    assert not (ws.parent / "home" / ".gemini" / "GEMINI.md").read_text().count("I like tabs")


def test_modified_args_are_used(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(function_call("save_memory", {"fact": "use spaces"}), text("Saved."))
    answer = json.dumps({"outcome": "approve", "modifiedArgs": {"fact": "use tabs"}})
    send(ChatSession(context(ws, fake)), "remember", Run([answer]))
    memory = (ws.parent / "home" / ".gemini" / "GEMINI.md").read_text()
    assert memory == "Global: be brief.\n\n## Gemini Added Memories\n- use tabs\n"
    result = fake.requests[1].function_responses[0]["response"]
    assert result == {"success": True, "message": "Okay, I've remembered that: \"use tabs\""}


@pytest.mark.parametrize("mode", ["manual", "autoEdit"])
def test_nothing_outside_the_workspace_is_written_or_read(ws: Path, fake: FakeGemini,
                                                          mode: str) -> None:
    outside = ws.parent / "outside"
    os.symlink(outside, ws / "link")
    fake.enqueue(function_call("write_file", {"file_path": str(outside / "evil.txt"),
                                              "content": "x"}),
                 function_call("write_file", {"file_path": "../outside/evil.txt",
                                              "content": "x"}),
                 function_call("replace", {"file_path": str(ws / "link" / "secret.txt"),
                                           "old_string": "SECRET", "new_string": "x"}),
                 function_call("read_file", {"absolute_path": str(ws / "link" / "secret.txt")}),
                 text("I could not."))
    run = Run(["approveAlways"] * 4)
    send(ChatSession(context(ws, fake, approval_mode=mode)), "escape", run)
    assert not (outside / "evil.txt").exists()
    assert (outside / "secret.txt").read_text() == "SECRET\n"
    assert run.approvals == []  # refused before anyone is asked
    errors = [r.function_responses[0]["response"].get("error", "") for r in fake.requests[1:5]]
    assert all("outside the workspace" in e for e in errors), errors
    # The secret file's content never reaches the model (only the model's own args name it).
    responses = json.dumps([r.function_responses for r in fake.requests])
    assert "SECRET\\n" not in responses


def test_malformed_function_calls_get_a_clear_answer(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(raw({"candidates": [{"content": {"role": "model", "parts": [
                     {"functionCall": {"name": "no_such_tool", "args": {"x": 1}}},
                     {"functionCall": {"name": "read_file", "args": {}}}]},
                     "finishReason": "STOP"}]}),
                 text("Sorry."))
    run = Run()
    assert send(ChatSession(context(ws, fake)), "go", run) == "done"
    errors = [r["response"]["error"] for r in fake.requests[1].function_responses]
    assert errors[0].startswith('Tool "no_such_tool" not found.')
    assert "absolute_path" in errors[1]
    assert run.text() == "Sorry."


def test_an_empty_model_turn_is_dropped_with_its_user_turn(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(raw({"candidates": [{"content": {"role": "model", "parts": []},
                                      "finishReason": "MALFORMED_FUNCTION_CALL"}]}),
                 text("Second try works."))
    session = ChatSession(context(ws, fake))
    run = Run()
    assert send(session, "first", run) == "error"
    assert session.history == []
    assert send(session, "second", Run()) == "done"
    assert [c["role"] for c in fake.last_request.contents] == ["user"]


def test_429_then_success_is_retried(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(error(429, "Resource exhausted"), text("Finally."))
    run = Run()
    assert send(ChatSession(context(ws, fake)), "hi", run) == "done"
    assert run.kinds() == ["error", "text", "done"]
    assert run.events[0].retryable is True and "429" in (run.events[0].message or "")


def test_500_forever_ends_with_a_clear_error_and_the_session_survives(
        ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(error(500, "Internal", times=3))
    session = ChatSession(context(ws, fake))
    run = Run()
    assert send(session, "hi", run) == "error"
    final = [e for e in run.events if e.kind == "error"][-1]
    assert final.retryable is False and "500" in (final.message or "")
    assert run.events[-1].kind == "done" and run.events[-1].reason == "error"
    fake.enqueue(text("Back."))
    assert send(session, "again", Run()) == "done"


def test_cancellation_mid_stream(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(text("Start") + hang(30) + text("never"))
    session = ChatSession(context(ws, fake))
    run = Run()

    async def scenario() -> str:
        task = asyncio.ensure_future(session.send("long", run.emit, run.approve))
        while "text" not in run.kinds():
            await asyncio.sleep(0.01)
        assert session.cancel()
        return await asyncio.wait_for(task, 10)

    assert asyncio.run(scenario()) == "cancelled"
    assert run.text() == "Start"
    assert run.events[-1].reason == "cancelled"


def test_no_key_is_a_clear_error(ws: Path, fake: FakeGemini,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    ctx = context(ws, fake)
    ctx.set_api_key(None)
    run = Run()
    assert send(ChatSession(ctx), "hi", run) == "error"
    assert "Set your Gemini API key" in (run.events[0].message or "")
    assert fake.requests == []


def test_transcripts_are_recorded_and_the_key_never_appears(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(function_call("read_file", {"absolute_path": str(ws / "notes.txt")}),
                 text(f"Your key is {KEY}."))
    ctx = context(ws, fake)
    session = ChatSession(ctx)
    send(session, f"my key is {KEY}, read notes", Run())
    folder = chats_dir(ctx.settings.home, str(ws))
    records = read_transcript(folder, session.id)
    assert [r.kind for r in records] == ["user", "toolCall", "toolResult", "model"]
    stored = Path(folder, f"{session.id}.jsonl").read_text()
    assert KEY not in stored and "[REDACTED]" in stored
    (summary,) = list_sessions(folder)
    assert summary.message_count == 2 and KEY not in summary.title
    # The key travels in the x-goog-api-key header of every request.
    assert all(r.api_key_matches for r in fake.requests)


def test_memlens_chat_in_a_terminal(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(function_call("write_file", {"file_path": str(ws / "cli.md"),
                                              "content": "x"}),
                 text("Could not write", " it."))
    env = {**os.environ, "GEMINI_API_KEY": KEY, "MEMLENS_GEMINI_BASE_URL": fake.base_url,
           "MEMLENS_RETRY_INITIAL_DELAY_MS": "5", "GEMINI_CLI_HOME": str(ws.parent / "home")}
    run = subprocess.run([sys.executable, "-m", "memlens", "chat", "write cli.md",
                          "--approval-mode", "deny"], cwd=ws, env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "Could not write it.\n"
    assert "[write_file] refused" in run.stderr
    assert not (ws / "cli.md").exists()
    assert KEY not in run.stdout + run.stderr
    fake.enqueue(text("Hi."))
    run = subprocess.run([sys.executable, "-m", "memlens", "chat", "--json", "hello"], cwd=ws,
                         env=env, capture_output=True, text=True, timeout=60)
    events = [json.loads(line) for line in run.stdout.splitlines()]
    assert [e["kind"] for e in events] == ["text", "done"]
    assert events[0]["text"] == "Hi." and events[0]["sessionId"]
