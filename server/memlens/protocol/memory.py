"""What the memory views show, in the CLI (--json) and in the editor: diagnostics, the merged
context (`show`), the loaded files (`list`), what JIT loading adds (`jit`), and the other
agents' views (`--dialect claude`, `--dialect agents`)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from memlens.protocol.wire import Mode, Severity, Tier, Wire


class RelatedLocation(Wire):
    """Another place a diagnostic concerns (LSP related information, SARIF
    `relatedLocations`): the other rule of an `instruction-conflict`."""

    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters
    end_line: int
    end_col: int
    message: str


class Diagnostic(Wire):
    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters
    end_line: int
    end_col: int
    severity: Severity
    code: str
    message: str  # short, for the Problems panel: e.g. "Import not found: ./docs/deploy.md"
    # The rest: the resolved path, what Gemini CLI embeds instead (LSP relatedInformation, the
    # CLI's indented second line, JSON).
    detail: str | None = None
    # Other places it concerns (the rule an `instruction-conflict` disagrees with); left out
    # of the JSON when there are none.
    related: list[RelatedLocation] | None = Field(default=None,
                                                  exclude_if=lambda value: value is None)

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.line, self.col, self.code, self.message)

    def text(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.severity}[{self.code}] {self.message}"


class HierarchicalMemory(Wire):
    global_: str = Field(default="", alias="global")
    extension: str = ""
    project: str = ""
    user_project_memory: str = ""


class ShowResult(Wire):
    """`memlens show --json`."""

    cwd: str
    mode: Mode
    trusted: bool
    files: list[str]
    file_count: int
    content: str
    hierarchical: HierarchicalMemory
    prompt: str
    session_memory: str
    truncated: bool = False
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    # The loaded files' texts taken together (docs/reference.md "Budgets"): code points,
    # UTF-8 bytes, Gemini CLI's token estimate, and whose estimate it is.
    chars: int = 0
    bytes: int = 0
    tokens: int = 0
    estimator: str = ""
    # `--count-exact`: the model's own count of the same text, and the model.
    exact_tokens: int | None = None
    exact_model: str | None = None


class ContextSection(Wire):
    """Where one file's text lies in a rendered context (0-based lines): `start_line` is the
    line naming `path` (`--- Context from: <path> ---`, `Contents of <path> (…):`,
    `--- <path> ---`), `end_line` the section's last line (its end marker, when it has one).
    The editor links the path on `start_line` without parsing the text."""

    path: str
    start_line: int
    end_line: int


class ListedFile(Wire):
    path: str
    tier: Tier
    chars: int | None  # None: listed by Gemini CLI but not readable (e.g. a directory)
    # UTF-8 bytes and Gemini CLI's token estimate of the same text (docs/reference.md "Budgets").
    bytes: int | None = None
    tokens: int | None = None


class ListResult(Wire):
    """`memlens list --json` and memlens/list."""

    cwd: str
    mode: Mode
    files: list[ListedFile]
    file_count: int
    # The files' texts taken together (docs/reference.md "Budgets"), and whose estimate `tokens` is.
    chars: int = 0
    bytes: int = 0
    tokens: int = 0
    estimator: str = ""
    # `--count-exact`: the model's own count of the same text, and the model.
    exact_tokens: int | None = None
    exact_model: str | None = None


class JitEntry(Wire):
    """One target of `memlens jit --json`."""

    target: str
    files: list[str]
    context: str


class AgentJitFile(Wire):
    """A file an agent loads on a read, and why (None: the agent gives no reason of its own,
    as Gemini CLI's JIT files, found above the file read)."""

    path: str
    chars: int
    reason: str | None = None


class AgentJitLoad(Wire):
    """What one agent loads on a read: its files, and the text it appends to the tool's
    output ('' when it appends none)."""

    agent: str  # the agent's id: "gemini", "claude", "cursor"
    label: str  # as the notice names it: "Claude Code", "Cursor (convention)"
    files: list[AgentJitFile]
    context: str = ""


# --- `memlens show|list --dialect agents|claude --json` ---------------------------------------

class AgentsShowResult(Wire):
    cwd: str
    dialect: Literal["agents"] = "agents"
    active: str | None  # the AGENTS.md in force (the nearest), if any
    shadowed: list[str]
    content: str


class AgentsFile(Wire):
    path: str
    tier: Literal["active", "shadowed"]


class AgentsListResult(Wire):
    cwd: str
    dialect: Literal["agents"] = "agents"
    files: list[AgentsFile]


class ConditionalRule(Wire):
    """A Claude Code rule loaded only for files matching its `paths:` globs."""

    path: str
    paths: list[str]


class ClaudeShowResult(Wire):
    cwd: str
    dialect: Literal["claude"] = "claude"
    content: str
    files: list[str]
    conditional_rules: list[ConditionalRule]


class ClaudeFileRow(Wire):
    path: str
    tier: str  # the file's kind, or "rule (paths: …)"
    chars: int


class ClaudeListResult(Wire):
    cwd: str
    dialect: Literal["claude"] = "claude"
    files: list[ClaudeFileRow]


# --- `memlens show|jit --agent NAME[@VERSION] --json` ---------------------------

class AgentFileRow(Wire):
    """A file the agent reads working in the folder: at start, later when a tool touches a
    path (`on-read`), or when the model decides to read it (`on-demand`: Claude Code's
    auto-memory topic files, which its index points to); or one a read lists without sending
    it (`listed`: Claude Code's skills found on a read, their name and description)."""

    path: str
    label: str  # its place in the agent's load: a tier or a kind ("global", "rule", "jit")
    chars: int | None  # None: listed but not readable
    bytes: int | None = None  # UTF-8
    tokens: int | None = None  # the agent's own estimate (docs/reference.md "Budgets")
    when: Literal["startup", "on-read", "on-demand", "listed"]
    note: str | None = None  # why or when it applies ("when a tool reads a file in api/")


class AgentProfileInfo(Wire):
    """Which agent, which profile serves it and whether that profile was verified on it."""

    agent: str  # "gemini", "claude", "codex", "agents"
    profile: str  # "gemini@0.44+", "claude@2.1", "codex@0.169", "agents"
    version: str | None  # the profile's version ("0.44+"); None for the agents convention
    installed: str | None = None  # the version found on PATH, when it was
    verified: bool  # False: a convention, or a version no profile was verified on
    note: str | None = None  # why it is not verified


class AgentShowResult(AgentProfileInfo):
    """`memlens show --agent A --json`: the agent's own `show --json` facts (extra keys), with
    `files` as rows and `payloads`, the exact strings it puts in its first request."""

    model_config = ConfigDict(extra="allow")

    cwd: str
    mode: str
    files: list[AgentFileRow]
    file_count: int  # the files read at start
    content: str
    payloads: list[str]
    diagnostics: list[Diagnostic] = Field(default_factory=list)
    # The start-up files' texts taken together: chars, UTF-8 bytes, the agent's own token
    # estimate, and whose estimate it is (docs/reference.md "Budgets").
    chars: int = 0
    bytes: int = 0
    tokens: int = 0
    estimator: str = ""


class AgentListedFile(Wire):
    """A row of another agent's `memlens list --json`: `tier` is the agent's own label for
    the file; `chars` None where its listing shows no size; `tokens` the agent's own estimate
    of what it reads of the file (None when it reads none of it)."""

    path: str
    tier: str
    chars: int | None = None
    tokens: int | None = None


class AgentListResult(Wire):
    """`memlens list --agent A --json` for an agent other than Gemini CLI (whose listing is
    `ListResult`): its files in the order it reads them."""

    cwd: str
    agent: str
    files: list[AgentListedFile]


class AgentJitEntry(Wire):
    """One target of `memlens jit --agent A --json`."""

    target: str
    files: list[str]
    payloads: list[str]  # the exact strings it adds after a tool touches `target`
    context: str  # what is appended to the tool's output ('' when nothing)
