"""Chat settings: model, endpoint, approval mode, retry policy (from editor settings or env)."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import Field

from memlens.protocol.wire import Wire

ApprovalMode = Literal["manual", "autoEdit", "deny"]
DEFAULT_MODEL = "gemini-flash-latest"


class ChatSettings(Wire):
    model: str = DEFAULT_MODEL
    base_url: str | None = None
    approval_mode: ApprovalMode = "manual"
    # Gemini CLI's retry policy (retryWithBackoff): attempts, first delay, cap.
    max_attempts: int = Field(default=10, ge=1)
    initial_delay_ms: int = Field(default=5000, ge=0)
    max_delay_ms: int = Field(default=30000, ge=0)
    max_turns: int = Field(default=50, ge=1)
    # A model stream that sends nothing for this long is abandoned (and retried like a
    # network error when nothing had arrived yet); 0 waits forever.
    stall_timeout_ms: int = Field(default=60000, ge=0)

    @classmethod
    def from_sources(cls, editor: dict[str, Any] | None = None) -> ChatSettings:
        """Editor settings (`chat.model` or `{"chat": {...}}`), then MEMLENS_* environment."""
        values: dict[str, Any] = {}
        editor = editor or {}
        nested = editor.get("chat")
        if isinstance(nested, dict):
            values.update({k: v for k, v in nested.items() if v not in (None, "")})
        for key, value in editor.items():
            if key.startswith("chat.") and value not in (None, ""):
                values[key.removeprefix("chat.")] = value
        env_url = os.environ.get("MEMLENS_GEMINI_BASE_URL")
        if env_url and not values.get("baseUrl") and not values.get("base_url"):
            values["base_url"] = env_url
        for env, field in (("MEMLENS_RETRY_INITIAL_DELAY_MS", "initial_delay_ms"),
                           ("MEMLENS_RETRY_MAX_ATTEMPTS", "max_attempts"),
                           ("MEMLENS_STALL_TIMEOUT_MS", "stall_timeout_ms")):
            if os.environ.get(env, "").isdigit():
                values[field] = int(os.environ[env])
        return cls.model_validate(values)
