"""What `memlens mcp`'s tools answer (docs/mcp.md): each tool's structured output, its JSON
schema published with the tool. snake_case here, camelCase on the wire, like every other
payload of Memory Lens."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

When = Literal["startup", "on-read", "on-demand", "listed", "not-read"]


class Answer(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Withheld(Answer):
    """What an untrusted folder keeps from an agent, and why (Gemini CLI's folder trust)."""

    agent: str
    what: str  # "project memory and settings"
    why: str  # "no rule in ~/.gemini/trustedFolders.json matches it"
    how_to_trust: str


class AgentHere(Answer):
    agent: str  # the id `what_agent_reads` takes: "gemini", "claude", "codex", …
    label: str  # "Gemini CLI"
    profile: str  # what `--agent` takes for the profile serving it: "gemini@0.44+"
    version: str | None  # detected on PATH or pinned (None: not known)
    verified: bool  # Memory Lens was checked against the real agent at that version
    note: str | None = None  # why it is not verified
    # How we know it is here: "pinned (MEMLENS_AGENTS)" or "on PATH" (in use), "its files
    # apply here" (in the folder, below it, above it where it looks, or in HOME).
    how: list[str]


class AgentsHere(Answer):
    folder: str
    agents: list[AgentHere]
    withheld: list[Withheld] = Field(default_factory=list)


class Source(Answer):
    """A file a part of the text comes from."""

    path: str
    label: str  # its place in the agent's load: "project", "rule", "active", "jit", …
    when: When = "startup"
    note: str | None = None  # why it applies, e.g. "applies to **/*.py"


class Part(Answer):
    """One part of what an agent receives: the exact text (as `memlens show` / `memlens jit`
    prints it, without the final newline) and the files it comes from."""

    text: str
    sources: list[Source]
    truncated: bool = False  # longer than `memlens mcp` sends: `memlens show` prints all of it


class AgentReads(Answer):
    agent: str
    profile: str
    folder: str
    startup: Part  # what it receives at start-up working in `folder`
    path: str | None = None
    on_path: Part | None = None  # with `path`: what reading or writing it adds
    withheld: list[Withheld] = Field(default_factory=list)


class FileDiagnostic(Answer):
    line: int
    severity: str
    code: str
    message: str


class AgentOnFile(Answer):
    agent: str
    label: str
    when: When
    word: str  # "at start-up", "on read", "on demand", "not read"
    why: str
    trigger: str | None = None  # what makes it load on read (its globs, its folder)
    cut: str | None = None  # "cut at line 201": the agent sends only part of it
    diagnostics: list[FileDiagnostic]


class FileExplained(Answer):
    path: str
    folder: str  # the folder the agents are taken to work in
    agents: list[AgentOnFile]
    withheld: list[Withheld] = Field(default_factory=list)


class AgentRules(Answer):
    agent: str
    label: str
    rules: Part  # the scoped instructions it adds for the path, exactly as it sends them


class RulesFor(Answer):
    path: str
    folder: str
    agents: list[AgentRules]  # the agents whose scoped instructions apply (others add nothing)
    quiet: list[str]  # the agents covered here that add nothing for this path
    withheld: list[Withheld] = Field(default_factory=list)
