"""What the fake Gemini API records of each request it receives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class RecordedRequest:
    """One request as the fake received it (secrets redacted)."""

    index: int
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    api_key_sent: bool
    """A non-empty key came in ``x-goog-api-key`` (or ``?key=``)."""
    api_key_matches: bool | None
    """The key equals ``expect_key``; None when the fake has no ``expect_key``."""
    body: Any
    raw_body: bytes = field(repr=False)
    api_version: str | None = None
    model: str | None = None
    action: str | None = None
    status: int | None = None
    """HTTP status answered (None while the answer is being produced)."""
    outcome: str = "pending"
    """scripted | error | unscripted | rejected | not_found | bad_request | internal |
    dropped (a drop() piece) | stopped (stop() cut the answer short)"""
    events_sent: int = 0
    """SSE events (or JSON array items) written for a stream."""
    disconnected: bool = False
    """The client closed the connection before the answer was complete."""
    completed: bool = False

    @property
    def stream(self) -> bool:
        return self.action == "streamGenerateContent"

    def _get(self, key: str) -> Any:
        return self.body.get(key) if isinstance(self.body, dict) else None

    @property
    def contents(self) -> list[dict[str, Any]]:
        return self._get("contents") or []

    @property
    def system_instruction(self) -> dict[str, Any] | None:
        return self._get("systemInstruction")

    @property
    def system_text(self) -> str:
        si = self.system_instruction or {}
        return "".join(p.get("text", "") for p in si.get("parts", []))

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self._get("tools") or []

    @property
    def tool_config(self) -> dict[str, Any] | None:
        return self._get("toolConfig")

    @property
    def generation_config(self) -> dict[str, Any]:
        return self._get("generationConfig") or {}

    @property
    def function_declarations(self) -> list[dict[str, Any]]:
        return [d for t in self.tools for d in t.get("functionDeclarations", [])]

    @property
    def function_names(self) -> list[str]:
        return [d.get("name", "") for d in self.function_declarations]

    @property
    def function_responses(self) -> list[dict[str, Any]]:
        """Every ``functionResponse`` in the history, oldest first."""
        return [
            p["functionResponse"]
            for c in self.contents
            for p in c.get("parts", [])
            if "functionResponse" in p
        ]

    @property
    def last_user_text(self) -> str:
        for c in reversed(self.contents):
            if c.get("role", "user") == "user":
                texts = [p["text"] for p in c.get("parts", []) if "text" in p]
                if texts:
                    return "".join(texts)
        return ""
