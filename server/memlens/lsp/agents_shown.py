"""Which agents the editor shows for a workspace folder: the agents in use (pinned by
`memlens.agents` / MEMLENS_AGENTS, else found on PATH, in the registry's order) and every agent
whose files apply there (workspace/agents_here.py) — Gemini CLI, like every other agent,
nowhere else. `memlens/agents`, the status item's agent (`memlens/show` for a file that is no
agent's memory) and the Memory view's trust notice ask here. Answered once per index
generation: the loads behind "files above the folder or in HOME" are not repeated for every
status update."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlens.agents import AGENT_IDS
from memlens.workspace.agents_here import agents_applying, agents_to_cover

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer
    from memlens.workspace.index import WorkspaceIndex


@dataclass(frozen=True)
class AgentsShown:
    in_use: list[str]  # pinned, else detected on PATH
    applying: list[str]  # whose files apply: in the folder, below it, above it, in HOME
    shown: list[str]  # in use, then applying (workspace/agents_here.agents_to_cover)


# Per workspace folder: the index it was asked of, that index's generation, the answer.
_answers: dict[str, tuple[weakref.ref[WorkspaceIndex], int | None, AgentsShown]] = {}


def agents_shown(ls: MemlensServer, folder: str | None) -> AgentsShown:
    """The agents shown for the workspace folder `folder` (None: the default folder)."""
    service = ls.service
    index = service.index_of_folder(folder)
    generation = getattr(index, "generation", None)
    key = folder or ""
    cached = _answers.get(key)
    if (cached is not None and generation is not None and cached[0]() is index
            and cached[1] == generation):
        return cached[2]
    settings = index.settings
    in_use = list(dict.fromkeys(p.agent for p in settings.chosen_agents
                                if p.agent in AGENT_IDS))
    with_files = service.agents_with_files(folder) if folder else []
    applying = agents_applying(folder, settings, with_files, index.reader) if folder else []
    answer = AgentsShown(in_use, applying, agents_to_cover(in_use, applying))
    if len(_answers) > 64:  # folders of windows long closed
        _answers.clear()
    _answers[key] = (weakref.ref(index), generation, answer)
    return answer


def gemini_shown(ls: MemlensServer, folder: str | None) -> bool:
    """Gemini CLI is shown for `folder`: its trust notice belongs there."""
    return "gemini" in agents_shown(ls, folder).shown
