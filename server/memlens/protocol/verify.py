"""`memlens verify` and the editor's "Verify What My Agents Read" (`memlens/verify`): each
installed agent run offline on a copy of the workspace, what it sent compared with the
prediction."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memlens.protocol.wire import Inbound, Wire

VerifyStatus = Literal["identical", "differs", "missing", "failed", "timeout", "offline"]


class PayloadComparison(Wire):
    """One payload: what the agent sent and what Memory Lens predicted, paths mapped back to
    the user's workspace and HOME."""

    name: str  # "start-up message 1", "after reading src/app.ts, message 1"
    identical: bool
    sent: str
    predicted: str
    diff: str  # a unified diff (predicted → sent), '' when identical


class AgentVerification(Wire):
    """One agent's verification."""

    agent: str  # "gemini", "claude", "codex"
    label: str  # "Claude Code 2.1.332"
    version: str | None = None
    executable: str | None = None
    status: VerifyStatus
    message: str  # one line: "identical", "2 of 3 payloads differ", "not installed (...)"
    # how the agent was kept from the user's machine: "sandbox" (bubblewrap: no network but
    # loopback, HOME hidden, only the scratch copy writable), "network-namespace" (network
    # cut only; --unsafe-no-sandbox as root), "loopback-only" (nothing enforced)
    isolation: Literal["sandbox", "network-namespace", "loopback-only"] | None = None
    read: str | None = None  # the file the scripted tool call read (relative to the workspace)
    # the wall time from the start of the verification to this agent's result (the agents
    # run at once: the last one's is the whole wait)
    seconds: float = 0.0
    remembered: bool = False  # this version is now remembered as verified on this machine
    payloads: list[PayloadComparison] = Field(default_factory=list)
    # Claude Code: what it was told about its auto memory (its `# Memory` system-prompt
    # section, as it sent it, paths mapped back); None when it has none (auto memory off).
    memory_instructions: str | None = None
    # What the copy left out or changed (special files skipped, settings scrubbed of what
    # runs: verify/scrub.py), relative to the workspace ("HOME: …" for the scratch HOME).
    notes: list[str] = Field(default_factory=list)


class VerifyResult(Wire):
    """`memlens verify --json` and the `memlens/verify` answer."""

    path: str
    identical: bool  # every agent that ran sent exactly what was predicted, and one ran
    agents: list[AgentVerification]
    seconds: float = 0.0  # the wall time of the whole verification


class VerifyParams(Inbound):
    """`memlens/verify`: the workspace folder (left out: the only folder of a single-root
    window; a multi-root window's request without one is refused), the agents (default: the
    installed ones), and `read` (a file for the scripted tool call to read; default: chosen)."""

    folder: str | None = None
    agents: list[str] = Field(default_factory=list)
    read: str | None = None
    # run the agents where no sandbox can (the user accepted the risk in a modal)
    unsandboxed: bool = False
