"""Payloads of the chat protocol (docs/chat-protocol.md), as pydantic models."""

from __future__ import annotations

from typing import Any, Literal

from ..model import Wire

EventKind = Literal["text", "thought", "toolCall", "toolResult", "memoryLoaded", "error", "done"]


class ChatEvent(Wire):
    session_id: str
    kind: EventKind
    text: str | None = None
    call_id: str | None = None
    tool: str | None = None
    args: dict[str, Any] | None = None
    needs_approval: bool | None = None
    ok: bool | None = None
    summary: str | None = None
    output: str | None = None
    files: list[dict[str, Any]] | None = None
    message: str | None = None
    retryable: bool | None = None
    reason: str | None = None

    def payload(self) -> dict[str, object]:
        return self.compact()


class ApprovalRequest(Wire):
    session_id: str
    call_id: str
    tool: str
    args: dict[str, Any]
    title: str
    diff: str | None = None


class ApprovalResponse(Wire):
    outcome: Literal["approve", "approveAlways", "deny"]
    modified_args: dict[str, Any] | None = None
    # The user's reply when the request was an `ask_user` question.
    answer: str | None = None


class SendParams(Wire):
    session_id: str
    text: str
    uri: str | None = None  # a file or folder: the chat works in its workspace folder


class SendResult(Wire):
    session_id: str
    status: Literal["done", "cancelled", "error"]
    message: str | None = None


class SessionParams(Wire):
    session_id: str


class ApiKeyParams(Wire):
    key: str


class ChatStatus(Wire):
    has_api_key: bool
    model: str
    approval_mode: str
    base_url: str | None = None
