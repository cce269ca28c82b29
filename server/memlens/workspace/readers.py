"""Which agents read each file of a workspace, and the hidden-content check of those files.

Gemini CLI reads the files rendered for it (its loaded files and everything they import);
another agent reads its workspace check's sources. `text.hidden` says what is hidden in one text for
the agents reading it; this module decides who reads what.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from memlens.agents import agent_by_id
from memlens.agents.gemini.imports import Outcome
from memlens.protocol.memory import Diagnostic
from memlens.text.hidden import file_diagnostics

if TYPE_CHECKING:
    from memlens.agents.base import MemoryAgent, WorkspaceCheck
    from memlens.agents.gemini.discovery import LoadedFile


def readers_diagnostics(readers: Mapping[str, Sequence[MemoryAgent]],
                        read: Callable[[str], str | None]) -> list[Diagnostic]:
    """`file_diagnostics` for every file some agent reads (`readers`: file → the agents
    reading it), its text from `read` (None: unreadable, nothing to say)."""
    out: list[Diagnostic] = []
    for path, agents in readers.items():
        text = read(path)
        if text:
            out += file_diagnostics(path, text, agents)
    return out


def readers_of(gemini_files: Iterable[LoadedFile],
               checks: Iterable[tuple[MemoryAgent, WorkspaceCheck]]
               ) -> dict[str, list[MemoryAgent]]:
    """Which agents read each file: Gemini CLI reads `gemini_files` (loaded files are its
    engine's renders: agents/gemini/discovery.py) and everything they import; another agent
    reads its workspace check's sources (an agent whose files have no references: the files
    its check found)."""
    gemini = agent_by_id("gemini")
    readers: dict[str, list[MemoryAgent]] = {}

    def add(path: str, agent: MemoryAgent) -> None:
        agents = readers.setdefault(path, [])
        if agent not in agents:
            agents.append(agent)

    for loaded in gemini_files:
        if loaded.content is not None:
            add(loaded.path, gemini)
        for event in loaded.events:
            if event.outcome is Outcome.IMPORTED:
                add(event.target, gemini)
    for agent, check in checks:
        for path in check.sources if agent.has_references else check.found:
            add(path, agent)
    return readers
