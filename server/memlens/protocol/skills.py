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
    # Gemini CLI is shown for the folder (in use, or its files apply: lsp/agents_shown.py):
    # the Skills view has a Gemini CLI group only then, like every other agent's.
    shown: bool = True


class AgentSkill(Wire):
    """One SKILL.md an agent looks at, as that agent lists it (`memlens skills list --agent A
    --json`, the Skills view per agent): `offered` false with the `reason` it is dropped;
    `on_read` set for one it lists only when it reads a file below the working folder."""

    name: str  # as the agent names it in its listing ("" when it never loads)
    description: str  # as the agent shows it (cut, escaped) ("" when it never loads)
    location: str  # the SKILL.md
    tier: str  # where it comes from: "user", "project", "system", ...
    offered: bool
    reason: str | None = None  # why it is not offered (not loaded, shadowed, over the cap)
    # Claude Code past its listing budget: listed by name only (still offered).
    name_only: bool = False
    # Codex past its listing budget: the characters of the description it still lists.
    cut_to: int | None = None
    # A skill the agent lists only on a read, not at start (Claude Code's `.claude/skills`
    # below the working folder): when, in the agent matrix's words ("when Claude Code reads a
    # file under web/"); None for a skill it lists at start. Its `reason`, when not offered,
    # is what that read does with it.
    on_read: str | None = None


class AgentSkillsResult(Wire):
    """Every skill an agent looks at working in `cwd`, and its listing exactly as it sends it."""

    agent: str
    label: str  # "Claude Code"
    cwd: str
    skills: list[AgentSkill]
    # The text it puts in its request for these skills, verbatim ("" when it lists none of
    # them): Claude Code's listing head and its user and project lines (its own built-in
    # skills follow in the request); Codex's whole `<skills_instructions>` block.
    listing: str
    diagnostics: list[Diagnostic]


class AgentSkillsParams(Inbound):
    """memlens/agentSkills: the skills each agent in use offers for a workspace folder (that of
    `uri`; unset: the only folder of a single-root window, refused in a multi-root one)."""

    uri: str | None = None
    agents: list[str] | None = None  # None: every agent the folder is shown for


class AgentSkillsResults(Wire):
    agents: list[AgentSkillsResult]


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
    uri: str | None = None  # a file or folder: the inbox of its workspace folder (as above)


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
