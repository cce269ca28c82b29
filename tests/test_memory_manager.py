"""The memory manager against the fake Gemini server: routing with approval, a model that
asks the user, and a model that tries to touch files other than memory files."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memlens.agent.config import ChatSettings
from memlens.agent.context import AgentContext
from memlens.agent.memory_manager import manage_memory
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.model import MemorySettings
from memlens.protocol.chat import ApprovalRequest, ApprovalResponse, ChatEvent

from .conftest import build_tree
from .fake_gemini import FakeGemini, function_call, text

KEY = "AIzaMANAGERKEY-0123456789abcdefghijklmno"


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


@pytest.fixture
def ws(root: Path) -> Path:
    build_tree(root, {"ws/.git": None, "ws/GEMINI.md": "# Project\n- Use pytest.\n",
                      "ws/src/app.py": "x = 1\n", "home/.gemini/GEMINI.md": "# Me\n",
                      "home/.ssh/config": "Host *\n"})
    return root / "ws"


def context(ws: Path, fake: FakeGemini) -> AgentContext:
    settings = MemorySettings(home=str(ws.parent / "home"), memory_manager=True,
                              discover_gemini_extensions=False)
    return AgentContext(settings=settings,
                        chat=ChatSettings(base_url=fake.base_url, initial_delay_ms=5,
                                          max_attempts=2),
                        startup=MemoryEngine(settings).load(str(ws)), jit=None, skills=[],
                        transcripts=None, api_key=KEY)


def run(ctx: AgentContext, fact: str, answers: list[ApprovalResponse]
        ) -> tuple[str, str, list[ApprovalRequest]]:
    asked: list[ApprovalRequest] = []

    async def emit(event: ChatEvent) -> None:
        return None

    async def approve(request: ApprovalRequest) -> ApprovalResponse:
        asked.append(request)
        return answers.pop(0) if answers else ApprovalResponse(outcome="deny")

    status, sentence = asyncio.run(manage_memory(ctx, fact, None, emit, approve))
    return status, sentence, asked


def responses(fake: FakeGemini, index: int) -> list[dict[str, Any]]:
    return [r["response"] for r in fake.requests[index].function_responses]


def test_routes_a_project_convention_to_the_root_file(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(function_call("replace", {"file_path": str(ws / "GEMINI.md"),
                                           "old_string": "- Use pytest.\n",
                                           "new_string": "- Use pytest.\n- Run ruff first.\n"}),
                 text("Saved to the project root GEMINI.md."))
    status, sentence, asked = run(context(ws, fake), "we run ruff before tests",
                                  [ApprovalResponse(outcome="approve")])
    assert (status, sentence) == ("done", "Saved to the project root GEMINI.md.")
    assert [a.tool for a in asked] == ["replace"]
    assert (ws / "GEMINI.md").read_text() == "# Project\n- Use pytest.\n- Run ruff first.\n"
    request = fake.requests[0]
    # The manager sees the current files and gets only its own tools.
    assert "# Initial context" in request.system_text
    assert "- Use pytest." in request.system_text and "# Me" in request.system_text
    assert request.function_names == ["read_file", "list_directory", "glob", "write_file",
                                      "replace", "ask_user"]
    assert request.last_user_text == "Remember this: we run ruff before tests"


def test_asks_the_user_when_the_scope_is_ambiguous(ws: Path, fake: FakeGemini) -> None:
    fake.enqueue(function_call("ask_user", {"question": "Global habit or project convention?",
                                            "options": ["global", "project"]}),
                 function_call("write_file", {"file_path": str(ws.parent / "home" / ".gemini"
                                                               / "GEMINI.md"),
                                              "content": "# Me\n- Prefers tabs.\n"}),
                 text("Saved globally."))
    status, _, asked = run(context(ws, fake), "I prefer tabs", [
        ApprovalResponse(outcome="approve", answer="global"),
        ApprovalResponse(outcome="approve")])
    assert status == "done"
    assert asked[0].tool == "ask_user" and asked[0].args["options"] == ["global", "project"]
    assert responses(fake, 1) == [{"answer": "global"}]
    assert (ws.parent / "home" / ".gemini" / "GEMINI.md").read_text() == (
        "# Me\n- Prefers tabs.\n")


def test_everything_but_memory_files_is_refused_in_code(ws: Path, fake: FakeGemini) -> None:
    home = ws.parent / "home"
    fake.enqueue(function_call("write_file", {"file_path": str(home / ".ssh" / "config"),
                                              "content": "Host evil\n"}),
                 function_call("read_file", {"absolute_path": "/etc/passwd"}),
                 function_call("write_file", {"file_path": str(ws / "src" / "app.py"),
                                              "content": "pwned\n"}),
                 function_call("read_file", {"absolute_path": str(ws / "src" / "app.py")}),
                 function_call("search_file_content", {"pattern": "x"}),
                 function_call("list_directory", {"path": str(ws)}),
                 text("I could not do that."))
    status, _, asked = run(context(ws, fake), "remember my ssh config",
                           [ApprovalResponse(outcome="approveAlways")] * 5)
    assert status == "done"
    assert asked == []  # refused before anyone is asked to approve
    assert (home / ".ssh" / "config").read_text() == "Host *\n"
    assert (ws / "src" / "app.py").read_text() == "x = 1\n"
    errors = [responses(fake, i)[-1].get("error", "") for i in range(1, 6)]
    assert "outside the workspace" in errors[0] or "memory files" in errors[0]
    assert "outside the workspace" in errors[1]
    assert "may only read and write memory files" in errors[2]
    assert "may only read and write memory files" in errors[3]
    assert errors[4].startswith('Tool "search_file_content" not found.')
    listing = responses(fake, 6)[-1]["output"]
    # no app.py; no .git either (git-ignored, Gemini CLI's default)
    assert listing.splitlines()[1:] == ["[DIR] src", "GEMINI.md"]
    assert json.dumps(responses(fake, 6)).count("Host *") == 0
