"""The chat protocol (docs/chat-protocol.md): memlens/chat/* requests, the memlens/chat/event
notification (one model per event kind), the approval requests the server sends, and the
transcript records written to disk."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field
from typing_extensions import TypedDict

from memlens.protocol.wire import Inbound, Wire

# --- client → server requests ---------------------------------------------------------------


class SendParams(Inbound):
    session_id: str  # chosen by the client; a new id starts a new chat
    text: str
    # A file or folder: a new chat works in its workspace folder (unset: the only folder of a
    # single-root window; a multi-root window's new chat without one is refused).
    uri: str | None = None


class SendResult(Wire):
    """Answered when the turn ends (progress arrives as events meanwhile)."""

    session_id: str
    status: Literal["done", "cancelled", "error"]
    message: str | None = None


class SessionParams(Inbound):
    session_id: str


class CancelResult(Wire):
    cancelled: bool


class SessionSummary(Wire):
    session_id: str
    title: str
    summary: str
    updated: float  # seconds since the epoch
    message_count: int


class SessionsResult(Wire):
    sessions: list[SessionSummary]  # newest first


class HistoryMessage(Wire):
    role: Literal["user", "model"]
    text: str


class HistoryResult(Wire):
    session_id: str
    messages: list[HistoryMessage]


class ChatStatus(Wire):
    has_api_key: bool
    model: str
    approval_mode: str
    base_url: str | None = None


class ApiKeyParams(Inbound):
    key: str  # held in memory only, never logged or recorded


class ApiKeyResult(Wire):
    has_api_key: bool


# --- server → client: memlens/chat/event ----------------------------------------------------

class MemoryFile(TypedDict):
    """A memory file JIT loaded, with its size (a plain dict in Python)."""

    path: str
    chars: int


class _Event(Wire):
    session_id: str

    def payload(self) -> dict[str, object]:
        return self.compact()


class TextEvent(_Event):
    """A streamed chunk of the model's answer (markdown)."""

    kind: Literal["text"] = "text"
    text: str


class ThoughtEvent(_Event):
    """A chunk of the model's thinking, when the model sends one."""

    kind: Literal["thought"] = "thought"
    text: str


class ToolCallEvent(_Event):
    kind: Literal["toolCall"] = "toolCall"
    call_id: str
    tool: str
    args: dict[str, Any]
    needs_approval: bool


class ToolResultEvent(_Event):
    kind: Literal["toolResult"] = "toolResult"
    call_id: str
    tool: str
    ok: bool
    summary: str  # one line
    output: str  # the text returned to the model, truncated to 4,000 characters


class MemoryLoadedEvent(_Event):
    """Memory JIT loaded because a tool touched a path."""

    kind: Literal["memoryLoaded"] = "memoryLoaded"
    files: list[MemoryFile]


class ErrorEvent(_Event):
    kind: Literal["error"] = "error"
    message: str
    retryable: bool


class DoneEvent(_Event):
    kind: Literal["done"] = "done"
    reason: Literal["stop", "cancelled", "error", "maxTurns"]


ChatEvent: TypeAlias = Annotated[
    TextEvent | ThoughtEvent | ToolCallEvent | ToolResultEvent | MemoryLoadedEvent
    | ErrorEvent | DoneEvent, Field(discriminator="kind")]


# --- server → client requests: approvals ----------------------------------------------------

class ApprovalRequest(Wire):
    """memlens/chat/approve and memlens/memory/approve: may this tool call run?"""

    session_id: str
    call_id: str
    tool: str
    args: dict[str, Any]
    title: str
    # A unified diff for file writes and memory saves, headed as Gemini CLI heads its
    # confirmation diffs.
    diff: str | None = None


class ApprovalResponse(Inbound):
    outcome: Literal["approve", "approveAlways", "deny"]
    modified_args: dict[str, Any] | None = None
    # The user's reply when the request was an `ask_user` question.
    answer: str | None = None


# --- transcripts on disk ----------------------------------------------------------------------

class SessionRecord(Wire):
    """One line of a transcript."""

    ts: float = Field(default_factory=time.time)
    session_id: str
    kind: str  # user | model | toolCall | toolResult | memoryLoaded | error | done
    data: dict[str, Any] = Field(default_factory=dict)
