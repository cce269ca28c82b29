"""`memlens show|list --summary --json`: the short answer first — per agent, what it reads
at start (files, size, its own token estimate), what it loads later and where, what it cuts,
and its own files it does not read working in the folder, grouped by why
(docs/reference.md "The summary")."""

from __future__ import annotations

from typing import Literal

from memlens.protocol.wire import Wire

# Why an agent leaves one of its own files unread in the folder: it reads it only when it is
# started elsewhere (a subfolder's file, a file it loads in another folder), an ignore rule,
# the file sends nothing (blank), the folder is not trusted, or the agent's own reason.
NotReadKind = Literal["elsewhere", "ignored", "blank", "untrusted", "other"]


class StartupFigures(Wire):
    """The files an agent sends at start, taken together."""

    files: int
    chars: int
    bytes: int
    tokens: int  # the agent's own estimate (docs/reference.md "Budgets")
    estimator: str


class LaterFiles(Wire):
    """Files the agent loads after start: on read (when a tool touches a matching path) or on
    demand (when the model decides to read them); or lists on read without sending them
    (Claude Code's skills found on a read: `tokens` then counts their listing lines)."""

    files: int
    folders: list[str]  # the folders they sit in, absolute, sorted
    tokens: int  # the agent's estimate of each file, summed
    unmatched: int = 0  # on read, but no file under the folder matches their trigger today


class CutFile(Wire):
    """A file the agent sends only part of."""

    path: str
    line: int  # where the cut falls (1-based)
    code: str
    message: str


class NotReadGroup(Wire):
    """The agent's own files it does not read working in the folder, for one reason."""

    kind: NotReadKind
    why: str  # the reading's sentence for the first of them (reading.py)
    paths: list[str]
    folders: list[str]


class AgentSummary(Wire):
    agent: str
    label: str
    profile: str  # what `--agent` takes for it ("claude@2.1")
    startup: StartupFigures
    on_read: LaterFiles
    on_demand: LaterFiles
    cut: list[CutFile]
    not_read: list[NotReadGroup]
    listed: LaterFiles  # listed on read, not sent (Claude Code's skills found on a read)


class FolderSummary(Wire):
    """Every agent a command covers in `cwd`, in the order its sections follow."""

    cwd: str
    agents: list[AgentSummary]
