"""Every coding agent whose memory Memory Lens shows, behind one interface (`base.MemoryAgent`).

Adding an agent: a module under `agents/` with a class shaped like `MemoryAgent`, and one line
in `REGISTRY` below. The first agent is the primary one: the workspace index renders, diagnoses
and watches its memory itself; every other agent's memory is checked through the interface.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from memlens.agents.base import MemoryAgent
    from memlens.model import MemorySettings

# One line per agent: its id (`--agent`, the wire's name for it) and its class. The classes
# are imported on first use: the CLI reads `--agent` before it needs any agent, and `memlens
# --version` should not pay for them.
REGISTRY: tuple[tuple[str, str], ...] = (
    ("gemini", "gemini.agent:GeminiAgent"),
    ("claude", "claude.agent:ClaudeAgent"),
    ("agents", "agentsmd.agent:AgentsMdAgent"),
    ("codex", "codex.agent:CodexAgent"),
    ("copilot", "copilot.agent:CopilotAgent"),
    ("vscode-chat", "vscode_chat.agent:VsCodeChatAgent"),
    ("cursor", "cursor.agent:CursorAgent"),
    ("antigravity", "antigravity.agent:AntigravityAgent"),
)
AGENT_IDS: tuple[str, ...] = tuple(agent_id for agent_id, _ in REGISTRY)
# The memory-file names of the agents whose names are fixed (the primary agent's are the user's:
# `settings.context_file_names`), for the question "which agents have files here", which a
# command asks before it knows it needs any agent (workspace/agents_here.py); each agent's
# `file_names` says the same (tests/test_every_agent.py).
FIXED_FILE_NAMES: dict[str, tuple[str, ...]] = {
    "claude": ("CLAUDE.md", "CLAUDE.local.md"),
    "agents": ("AGENTS.md",),
    "codex": ("AGENTS.override.md", "AGENTS.md"),
    "copilot": ("copilot-instructions.md",),
    "vscode-chat": ("copilot-instructions.md",),
    "cursor": (".cursorrules",),
    "antigravity": (),  # GEMINI.md and AGENTS.md: other agents' names
}


@functools.cache
def _agent(agent_id: str) -> MemoryAgent:
    """The agent registered as `agent_id`, its module imported on first use (a command that
    covers one agent imports that one)."""
    where = dict(REGISTRY)[agent_id]
    module, _, name = where.partition(":")
    agent: MemoryAgent = getattr(importlib.import_module(f"{__name__}.{module}"), name)()
    if agent.id != agent_id:
        raise ImportError(f"{where} calls itself {agent.id!r}, registered as {agent_id!r}")
    return agent


def all_agents() -> tuple[MemoryAgent, ...]:
    return tuple(_agent(agent_id) for agent_id in AGENT_IDS)


def primary() -> MemoryAgent:
    return all_agents()[0]


def other_agents() -> tuple[MemoryAgent, ...]:
    """Every agent but the primary one."""
    return all_agents()[1:]


def agent_by_id(agent_id: str) -> MemoryAgent:
    if agent_id in AGENT_IDS:
        return _agent(agent_id)
    raise KeyError(f"unknown agent {agent_id!r} (one of {', '.join(AGENT_IDS)})")


def owner_of(path: str, settings: MemorySettings) -> MemoryAgent | None:
    """The agent whose memory file `path` is by name (the primary agent's first: its names
    are the user's to choose)."""
    return next((a for a in all_agents() if a.owns(path, settings)), None)


def workspace_file_names(settings: MemorySettings) -> list[str]:
    """Every agent's memory-file names, each once: what one walk of the workspace finds (in
    the registry's order, as each agent's `file_names` gives them: the primary agent's are
    the settings', the others' `FIXED_FILE_NAMES`; no agent is imported to ask)."""
    return list(dict.fromkeys([*settings.context_file_names,
                               *(n for names in FIXED_FILE_NAMES.values() for n in names)]))


def reading_agent(path: str, settings: MemorySettings,
                  included_by: Callable[[MemoryAgent], bool]) -> MemoryAgent:
    """The agent whose reference syntax `path` is read with: the agent it is named for (a
    fixed name before the primary agent's configurable ones), else an agent that includes it
    (`included_by`), else the primary agent."""
    for agent in (*other_agents(), primary()):
        if agent.has_references and agent.owns(path, settings):
            return agent
    for agent in other_agents():
        if agent.has_references and included_by(agent):
            return agent
    return primary()


def home_folders(home: str) -> list[str]:
    """The folders in HOME where the agents keep memory."""
    return [folder for a in all_agents() if (folder := a.home_folder(home)) is not None]


def home_change_matters(path: str, home: str) -> bool:
    """A change in a home folder that can change some agent's memory."""
    return all(a.home_change_matters(path, home) for a in all_agents())
