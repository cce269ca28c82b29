"""Which agents the language server shows for a workspace folder (pure engine): the agents in
use (pinned by `memlens.agents` / MEMLENS_AGENTS, else found on PATH, in the registry's order)
and every agent whose files apply there (workspace/agents_here.py) — Gemini CLI, like every
other agent, nowhere else. The views ask here (lsp/agents_shown.py), and so do the
diagnostics and the on-read notice: an agent not shown has no findings and loads nothing
there (docs/reference.md "Which agent, which version"). Answered once per index generation:
the loads behind "files above the folder or in HOME" are not repeated for every query."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from memlens.agents import AGENT_IDS
from memlens.workspace.agents_here import agents_applying, agents_to_cover

if TYPE_CHECKING:
    from memlens.workspace.index import WorkspaceIndex


class FolderIndexes(Protocol):
    """What this asks of the workspace service (workspace/service.py), which asks here."""

    def index_of_folder(self, folder: str | None) -> WorkspaceIndex: ...

    def agents_with_files(self, folder: str | None) -> list[str]: ...


@dataclass(frozen=True)
class AgentsShown:
    in_use: list[str]  # pinned, else detected on PATH
    applying: list[str]  # whose files apply: in the folder, below it, above it, in HOME
    shown: list[str]  # in use, then applying (workspace/agents_here.agents_to_cover)


# Per service and workspace folder: the index it was asked of, that index's generation, the
# answer.
_answers: weakref.WeakKeyDictionary[
    FolderIndexes, dict[str, tuple[weakref.ref[WorkspaceIndex], int, AgentsShown]]
] = weakref.WeakKeyDictionary()


def agents_shown(service: FolderIndexes, folder: str | None) -> AgentsShown:
    """The agents shown for the workspace folder `folder` (None: the default folder)."""
    index = service.index_of_folder(folder)
    key = folder or ""
    answers = _answers.setdefault(service, {})
    cached = answers.get(key)
    if cached is not None and cached[0]() is index and cached[1] == index.generation:
        return cached[2]
    settings = index.settings
    in_use = list(dict.fromkeys(p.agent for p in settings.chosen_agents
                                if p.agent in AGENT_IDS))
    with_files = service.agents_with_files(folder) if folder else []
    applying = agents_applying(folder, settings, with_files, index.reader) if folder else []
    answer = AgentsShown(in_use, applying, agents_to_cover(in_use, applying))
    if len(answers) > 64:  # folders of windows long closed
        answers.clear()
    answers[key] = (weakref.ref(index), index.generation, answer)
    return answer
