"""Which agents the editor shows for a workspace folder (workspace/shown.py): `memlens/agents`,
the status item's agent (`memlens/show` for a file that is no agent's memory), the Memory
view's trust notice, the diagnostics and the on-read notice ask here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlens.workspace.shown import AgentsShown
from memlens.workspace.shown import agents_shown as shown_in

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

__all__ = ["AgentsShown", "agents_shown", "gemini_shown"]


def agents_shown(ls: MemlensServer, folder: str | None) -> AgentsShown:
    """The agents shown for the workspace folder `folder` (None: the default folder)."""
    return shown_in(ls.service, folder)


def gemini_shown(ls: MemlensServer, folder: str | None) -> bool:
    """Gemini CLI is shown for `folder`: its trust notice belongs there."""
    return "gemini" in agents_shown(ls, folder).shown
