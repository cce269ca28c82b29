"""Every coding agent whose memory Memory Lens shows, behind one interface (`base.MemoryAgent`).

Adding an agent: a module under `agents/` with a class shaped like `MemoryAgent`, and one line
in `REGISTRY` below. The registry's order is only the order agents are listed in: no agent is
"the" agent. What sets one apart is said on the interface: Gemini CLI's memory is rendered by
the workspace index itself (`MemoryAgent.rendered_by_index`: workspace/index_agents.py's
`RenderedGeminiMemory`), every other agent's is checked (`checked_agents`); Gemini CLI's
memory-file names are the user's (`SETTINGS_NAMED`).
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
    ("opencode", "opencode.agent:OpenCodeAgent"),
    ("pi", "pi.agent:PiAgent"),
)
AGENT_IDS: tuple[str, ...] = tuple(agent_id for agent_id, _ in REGISTRY)
# Gemini CLI, whose memory-file names are the user's (`settings.context_file_names`, its
# context.fileName) rather than fixed: a name the user chose is its own before any other
# agent's (`owner_of`), even CLAUDE.md.
SETTINGS_NAMED = "gemini"
# The memory-file names of the agents whose names are fixed (`SETTINGS_NAMED`'s are the user's:
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
    "opencode": ("AGENTS.md", "CLAUDE.md", "CONTEXT.md"),
    "pi": ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"),
}
# The SKILL.md frontmatter fields an agent acts on beyond the Agent Skills specification's
# (name, description, license, compatibility, metadata, allowed-tools), as each agent's own
# skills reference lists them: one an agent reading the skill uses is not "unknown"
# (`skill-unknown-field`, agents/gemini/skillcheck.py). Data here, so the check imports no
# agent; an agent that acts on no other field has no entry.
SKILL_FIELDS: dict[str, tuple[str, ...]] = {
    "claude": ("argument-hint", "disable-model-invocation", "user-invocable", "model", "effort",
               "context", "agent", "hooks", "paths", "when_to_use", "when-to-use"),
    "vscode-chat": ("argument-hint", "user-invocable", "user-invokable",
                    "disable-model-invocation"),
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


def checked_agents() -> tuple[MemoryAgent, ...]:
    """The agents whose memory the workspace index knows from their workspace checks
    (`check_workspace`, `view_files`): every agent but those it renders itself
    (`rendered_by_index`), whose files, imports and JIT loads the index holds."""
    return tuple(a for a in all_agents() if not a.rendered_by_index)


def agent_by_id(agent_id: str) -> MemoryAgent:
    if agent_id in AGENT_IDS:
        return _agent(agent_id)
    raise KeyError(f"unknown agent {agent_id!r} (one of {', '.join(AGENT_IDS)})")


def owner_of(path: str, settings: MemorySettings) -> MemoryAgent | None:
    """The agent whose memory file `path` is by name (`SETTINGS_NAMED` first: its names are
    the user's to choose; then the registry's order)."""
    ordered = sorted(all_agents(), key=lambda a: a.id != SETTINGS_NAMED)
    return next((a for a in ordered if a.owns(path, settings)), None)


def workspace_file_names(settings: MemorySettings) -> list[str]:
    """Every agent's memory-file names, each once: what one walk of the workspace finds (in
    the registry's order, as each agent's `file_names` gives them: `SETTINGS_NAMED`'s are
    the settings', the others' `FIXED_FILE_NAMES`; no agent is imported to ask)."""
    return list(dict.fromkeys([*settings.context_file_names,
                               *(n for names in FIXED_FILE_NAMES.values() for n in names)]))


def reading_agent(path: str, settings: MemorySettings,
                  included_by: Callable[[MemoryAgent], bool]) -> MemoryAgent:
    """The agent whose reference syntax `path` is read with: the agent it is named for (a
    checked agent's fixed name before the configurable names of the agents the index
    renders), else a checked agent that includes it (`included_by`), else Gemini CLI: the
    index's import graph follows every other file by Gemini CLI's `@import` rules."""
    checked = checked_agents()
    rendered = [a for a in all_agents() if a.rendered_by_index]
    for agent in (*checked, *rendered):
        if agent.has_references and agent.owns(path, settings):
            return agent
    for agent in checked:
        if agent.has_references and included_by(agent):
            return agent
    return agent_by_id("gemini")


def home_folders(home: str) -> list[str]:
    """The folders in HOME where the agents keep memory."""
    return [folder for a in all_agents() if (folder := a.home_folder(home)) is not None]


def home_change_matters(path: str, home: str) -> bool:
    """A change in a home folder that can change some agent's memory."""
    return all(a.home_change_matters(path, home) for a in all_agents())
