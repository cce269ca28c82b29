"""The base of every payload (snake_case in Python, camelCase on the wire) and the words
payloads share: a diagnostic's severity, a memory file's tier, Gemini CLI's loading mode."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

Severity = Literal["error", "warning", "info"]
Tier = Literal["global", "userProjectMemory", "extension", "project", "jit"]
Mode = Literal["jit", "classic"]


class Wire(BaseModel):
    """A payload the server sends (or writes). Its TypeScript type lists every field as sent:
    a field with a default is always there; one that may be None may also be left out (the
    `compact` form)."""

    # Schemas are built on first use: the server and CLI load many payload models they may
    # never touch in a session (start-up time and resident memory).
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=False,
                              defer_build=True, json_schema_serialization_defaults_required=True)

    def wire(self) -> dict[str, object]:
        return self.model_dump(by_alias=True, mode="json")

    def compact(self) -> dict[str, object]:
        """The wire form without the fields that are unset (None)."""
        return self.model_dump(by_alias=True, mode="json", exclude_none=True)


class Inbound(Wire):
    """A payload the server receives (request params, the client's reply to a server request):
    its TypeScript type is what the client may send, so a field with a default is optional."""
