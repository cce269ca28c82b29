"""Skills and the skills inbox: memlens/skills, memlens/inbox (+ accept / reject),
memlens/skills/extract, and `memlens skills list|inbox|extract --json`."""

from __future__ import annotations

from typing import Literal

from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Inbound, Wire


class SkillEntry(Wire):
    """One skill Gemini CLI offers (`memlens skills list --json`)."""

    name: str
    description: str
    location: str
    body: str
    tier: str


class SkillItem(Wire):
    """One SKILL.md Gemini CLI looks at, offered or not (the Skills view)."""

    name: str
    description: str
    location: str
    tier: str
    offered: bool  # false: another skill of the same name wins, or it does not load
    errors: int
    warnings: int


class SkillsResult(Wire):
    skills: list[SkillItem]


class InboxEntry(Wire):
    """An extracted skill waiting for the user, with what stops it being accepted."""

    name: str
    path: str
    description: str
    problems: list[Diagnostic]


class InboxResult(Wire):
    skills: list[InboxEntry]


class NameParams(Inbound):
    name: str
    uri: str | None = None  # a file or folder: the inbox of its workspace folder


class InboxActionResult(Wire):
    """The outcome of accepting or rejecting an inbox skill: `ok` false with the reason."""

    ok: bool
    message: str
    path: str | None = None  # where an accepted skill now lives


class ExtractResult(Wire):
    """One extraction run. "no-key": no Gemini API key (the editor offers to set one)."""

    status: Literal["done", "cancelled", "error", "no-key"]
    created: list[str]  # the names of the skills written to the inbox
    sessions: int | None = None  # recorded sessions mined
    message: str
