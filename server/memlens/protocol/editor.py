"""The language server's own requests and notifications for the editor's memory features:
memlens/show, memlens/list (memory.ListResult), memlens/refresh, memlens/jit,
memlens/memoryTree, memlens/addMemory and the requests it sends back, memlens/jitLoaded and
memlens/ready."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memlens.protocol.memory import AgentJitLoad, AgentListedFile, ContextSection
from memlens.protocol.wire import Inbound, Wire

Dialect = Literal["gemini", "claude", "agents", "codex", "copilot", "vscode-chat", "cursor",
                  "antigravity", "opencode", "pi"]


class UriParams(Inbound):
    uri: str


class ShowParams(Inbound):
    uri: str
    # Whose view: Gemini CLI's, Claude Code's or an AGENTS.md agent's. Unset: the dialect of
    # the file named by `uri` (a CLAUDE.md shows Claude Code's), else Gemini CLI's.
    dialect: Dialect | None = None


class SourceLink(Wire):
    """Where a section's path is written on its first line, so the editor links it: `line`
    (0-based) and the characters `start`..`end`, counted in UTF-16 code units as the editor
    counts them."""

    path: str
    line: int
    start: int
    end: int


class ShowResponse(Wire):
    """memlens/show: what the agent of `dialect` reads for the folder of the request's uri."""

    # None: no agent is in use there and none has files that apply (nothing loads).
    dialect: Dialect | None
    content: str
    files: list[str]
    file_count: int
    mode: str
    trusted: bool
    prompt: str
    session_memory: str
    # Characters of the loaded files (imports expanded): what the Memory view's per-file
    # figures add up to; `content` adds the source markers.
    chars: int = 0
    # The same text's UTF-8 bytes and tokens (Gemini CLI's estimate; docs/reference.md "Budgets").
    bytes: int = 0
    tokens: int = 0
    summary: str = ""  # e.g. "2 memory files · 1,391 chars · ~348 tokens", as the code lens
    # says it
    notice: str | None = None  # Restricted Mode: why project memory is missing
    trust_rules: str | None = None  # as TreeFolder.trust_rules
    # Where each file's text lies in `content`, and where its path is written.
    sections: list[ContextSection] = Field(default_factory=list)
    links: list[SourceLink] = Field(default_factory=list)
    # Whose view this is (docs/reference.md "Which agent, which version"): "Gemini CLI 0.61.0", the
    # profile serving it, and why it is not verified when it is not (`agent-version-unverified`).
    agent_label: str = ""
    agent_profile: str = ""
    agent_note: str | None = None


class AgentListing(Wire):
    """One agent's files in the editor's "List Memory Files": `memlens list --agent A`'s rows."""

    agent: str
    label: str
    files: list[AgentListedFile]


class EditorListResult(Wire):
    """memlens/list: what each agent shown for the folder reads working there (lsp/agents_shown.py),
    in the registry's order, every agent alike (workspace/reading.py `agent_listing`)."""

    cwd: str
    agents: list[AgentListing]


class RefreshResponse(Wire):
    file_count: int


class JitResponse(Wire):
    """`memlens/jit`: what a read of `uri` brings, in `memlens/jitLoaded`'s shape — one entry
    per agent shown for its folder that loads something, in the registry's order — in a
    session just started there (a preview: nothing is marked loaded)."""

    uri: str
    loads: list[AgentJitLoad]


class JitLoadedEvent(Wire):
    """`memlens/jitLoaded`: what opening `uri` loads on that read, one entry per agent shown
    for its folder that loads something (lsp/agents_shown.py), in the registry's order."""

    uri: str
    loads: list[AgentJitLoad]


class ReadyEvent(Wire):
    """`memlens/ready`: the first index is built."""

    memory_files: int
    index_seconds: float
    marks: dict[str, int]  # start-up milestones, in ms since the epoch


# --- memlens/memoryTree -------------------------------------------------------------------

class TreeImport(Wire):
    text: str  # the token as written, e.g. "@./docs/style.md"
    target: str
    line: int  # 0-based, for the client to reveal
    exists: bool


class TreeFile(Wire):
    path: str
    tier: str
    chars: int | None
    errors: int  # the file's own problems
    warnings: int
    imports: list[TreeImport]
    # The problems in the files it imports (directly or not, each file once): a missing
    # import is the file's own; a hidden character in an imported file is its import's.
    import_errors: int = 0
    import_warnings: int = 0
    # UTF-8 bytes and tokens (the agent's own estimate; docs/reference.md "Budgets");
    # None: unreadable.
    bytes: int | None = None
    tokens: int | None = None
    note: str | None = None  # e.g. when a Claude Code rule or subfolder file applies
    # The heading the client groups the row under, in the order rows come (Claude Code's topic
    # files by type: "Memories · feedback"); None: not grouped.
    group: str | None = None


class TreeAgent(Wire):
    """Another agent's memory in the same folder: Claude Code's, or the AGENTS.md files."""

    agent: Literal["claude", "agents", "codex", "copilot", "vscode-chat", "cursor",
                   "antigravity", "opencode", "pi"]
    files: list[TreeFile]


class TreeFolder(Wire):
    folder: str
    mode: str
    trusted: bool
    files: list[TreeFile]
    other_agents: list[TreeAgent] = Field(default_factory=list)
    agent_label: str = ""  # the chosen agent, as ShowResponse.agent_label
    agent_note: str | None = None
    notice: str | None = None  # Restricted Mode: why project memory is missing
    # The trusted folders file, when a DO_NOT_TRUST rule there is why (the client offers to
    # open it rather than VS Code's trust editor).
    trust_rules: str | None = None


class AgentChoice(Wire):
    """An agent the editor can show (`memlens/agents`)."""

    agent: Dialect
    label: str  # "Gemini CLI 0.61.0", "Claude Code", "AGENTS.md (convention)"
    profile: str  # "gemini@0.44+"
    installed: str | None  # the version found on PATH (or pinned)
    verified: bool
    note: str | None = None
    chosen: bool  # detected or pinned; the first is the chosen agent
    has_files: bool = False  # the workspace folder holds its memory files
    # How Memory Lens knows what it reads: checked against the real agent, a documented
    # convention, or read from the agent's sources (the last two are never called verified).
    basis: Literal["agent", "convention", "sources"] = "agent"


class AgentsParams(Inbound):
    # A file or folder: the agents of its workspace folder (left out: the only folder of a
    # single-root window; a multi-root window's request without one is refused).
    uri: str | None = None


class AgentsResponse(Wire):
    """`memlens/agents` {uri?}: the chosen agents first, then every other one; `side_by_side`:
    the agents to open side by side (the chosen ones and every one with files in the folder;
    when that is one agent, every agent)."""

    agents: list[AgentChoice]
    side_by_side: list[Dialect] = Field(default_factory=list)


class TreeResponse(Wire):
    folders: list[TreeFolder]


# --- memlens/addMemory, and what the memory manager asks the editor -----------------------

class AddMemoryParams(Inbound):
    fact: str
    scope: Literal["global", "project"] = "global"
    preview: bool = False
    # The proposal as the user edited it, written verbatim (as Gemini CLI does).
    modified_content: str | None = None
    # A file or folder: project memory is that workspace folder's (unset: the only folder of a
    # single-root window; a multi-root window's request without one is refused).
    uri: str | None = None
    # Whose memory: Gemini CLI's (`scope` says which file) or Claude Code's auto memory (a
    # topic file and its pointer line in MEMORY.md; `scope` and the memory manager unused).
    agent: Literal["gemini", "claude"] = "gemini"
    # Claude Code's topic file: its type (default project), name (a kebab-case slug; default
    # made from the fact) and one-line description (default the fact's first line).
    memory_type: str | None = None
    name: str | None = None
    description_line: str | None = None
    # Claude Code: the memory folder the user agreed to write to when the repository's own
    # settings chose it (the `memoryFolder` of a result with `needsConfirmation`); any other
    # folder the repository chose is still refused.
    confirmed_folder: str | None = None


class AddMemoryResult(Wire):
    """The outcome of a save (or of its preview): `success` false with the sentence to show
    when the memory was not saved."""

    managed: bool = False
    path: str
    description: str
    success: bool
    message: str
    diff: str | None = None
    proposed: str | None = None
    needs_key: bool | None = None  # the editor offers Set Gemini API Key with the message
    # Claude Code: the index the pointer line goes to, the line, the memory's name and type,
    # and the types it may have (the editor's pick).
    index_path: str | None = None
    index_line: str | None = None
    name: str | None = None
    memory_type: str | None = None
    memory_types: list[str] | None = None
    # Claude Code: the auto-memory folder and who chose it — "repository" (the workspace's
    # .claude/settings.json or settings.local.json, named in `chosen_in`), "user" (the user's
    # own or managed settings, or the environment) or "default" (~/.claude/projects/…).
    memory_folder: str | None = None
    chosen_by: Literal["repository", "user", "default"] | None = None
    chosen_in: str | None = None
    # True: nothing was written because the repository chose the folder; ask the user, then
    # send the request again with `confirmed_folder` = `memory_folder`.
    needs_confirmation: bool | None = None


class AskUserParams(Wire):
    """`memlens/askUser` (server → client request): the memory manager's question."""

    session_id: str
    question: str
    options: list[str]  # suggested answers (the user may write another)


class AskUserReply(Inbound):
    answer: str | None = None  # None: the user dismissed the question


class CountTokensResponse(Wire):
    """`memlens/countTokens` {uri}: the model's own token count (the Gemini API's
    countTokens) of the text the line-1 code lens measures for the folder of `uri`, beside
    Gemini CLI's estimate of it (docs/reference.md "Budgets")."""

    uri: str
    tokens: int | None = None  # the model's count (None: it could not be asked; see `error`)
    model: str = ""
    estimate: int  # Gemini CLI's estimate of the same text
    chars: int
    bytes: int
    # Why the model was not asked (no API key, the API failed): an outcome the user reads, not
    # a failed request (errors.py).
    error: str | None = None
