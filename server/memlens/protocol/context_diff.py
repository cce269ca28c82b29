"""Effective-context diffs (issue 14): `memlens diff --json` (DiffResult), the language
server's memlens/contextChanged notification and memlens/contextDiff request."""

from __future__ import annotations

from pydantic import Field

from memlens.protocol.wire import Inbound, Wire


class ContextChangeEntry(Wire):
    """What changed for one agent working in one folder."""

    agent: str  # the agent's id: "gemini", "claude", "codex", "agents"
    agent_label: str  # "Claude Code"
    profile: str  # the profile it was compared with: "gemini@0.44+", "claude@2.1"
    folder: str  # absolute path of the folder the agent works in
    relative_folder: str  # that folder relative to its workspace root ("." for the root)
    diff: str  # unified diff of what it sends at start, before → after
    added: int  # lines added
    removed: int  # lines removed
    # Each agent's own token estimate of the text before and after (`memlens diff`; None where
    # not measured).
    tokens_before: int | None = None
    tokens_after: int | None = None


class DiffHunk(Wire):
    """One changed stretch of a file: lines `line`..`end_line` of the new side (a removal:
    the line it was removed before), `added` and `removed` lines."""

    line: int
    end_line: int
    added: int
    removed: int


class DiffFileChange(Wire):
    """One file an agent can read that differs between the two sides."""

    path: str  # relative to the repository's top
    status: str  # "added", "removed" or "modified"
    added: int  # lines added
    removed: int  # lines removed
    hunks: list[DiffHunk] = Field(default_factory=list)


class DiffChangeGroup(Wire):
    """One change said once: the same lines added and removed in what several (agent,
    folder) pairs send, and the files it comes from."""

    changes: list[int]  # indexes into DiffResult.changes
    files: list[str]  # the changed files it comes from (relative to the repository's top)
    added: int
    removed: int


class DiffResult(Wire):
    """`memlens diff --json`: what each agent sends at start, per folder, compared between
    `base` and `head` (a git revision, or "working tree")."""

    repository: str  # the repository's top folder
    root: str  # the folder compared (the current folder, inside the repository)
    base: str  # as given: "HEAD", "main~1"
    head: str  # as given, or "working tree"
    base_commit: str  # the commit `base` names
    head_commit: str | None  # the commit `head` names (None: the working tree)
    agents: list[str]  # the profiles compared, in order: "gemini@0.44+", "claude@2.1"
    folders: list[str]  # the folders of interest compared, relative to `root`
    changes: list[ContextChangeEntry]
    changed: bool  # any change (the exit status is 1 when true)
    # The files agents can read that changed, by path; `changes` grouped, each change once.
    files: list[DiffFileChange] = Field(default_factory=list)
    groups: list[DiffChangeGroup] = Field(default_factory=list)


class ContextChangedEvent(Wire):
    """memlens/contextChanged: a save (or a change on disk) changed what some agent sends at
    start in some folders."""

    trigger: str  # the URI of the file whose change this is
    trigger_name: str  # its file name: "GEMINI.md"
    summary: str  # "GEMINI.md changes what Claude Code reads in 3 folders"
    changes: list[ContextChangeEntry]


class ContextDiffParams(Inbound):
    """memlens/contextDiff: the last change for one (agent, folder)."""

    agent: str
    folder: str


class ContextDiffResult(Wire):
    """memlens/contextDiff: the texts the agent sent at start before and after the last change
    that touched this (agent, folder)."""

    agent: str
    agent_label: str
    folder: str
    relative_folder: str
    trigger_name: str  # the file whose save made the change
    title: str  # "GEMINI.md → what Claude Code reads in api/ (before ↔ after)"
    before: str
    after: str
