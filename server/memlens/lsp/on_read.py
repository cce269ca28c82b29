"""What a read of a file loads, per agent shown for its folder: one query behind the
`memlens/jitLoaded` notification (the editor's session: each file once) and the `memlens/jit`
preview (a session just started: nothing marked loaded)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memlens.agent_versions import is_unverified, profile_for
from memlens.agents import all_agents
from memlens.lsp.agents_shown import agents_shown
from memlens.protocol.memory import AgentJitFile, AgentJitLoad

if TYPE_CHECKING:
    from memlens.agents.base import MemoryAgent
    from memlens.lsp.state import MemlensServer


def on_read_loads(ls: MemlensServer, path: str, *, preview: bool = False) -> list[AgentJitLoad]:
    """What a read of `path` brings each agent shown for its workspace folder
    (lsp/agents_shown.py) that loads something then, in the registry's order — every agent
    through its JIT session (workspace/service.py `agent_jit_session_for`): Gemini CLI's JIT
    files, Claude Code's subfolder CLAUDE.md and matching rules, and so on. Without `preview`
    the editor's session marks them loaded (each file once per session); with it, a session
    just started in the folder answers and nothing is marked."""
    folder = ls.service.folder_for(path)
    if folder is None:
        return []
    shown = set(agents_shown(ls, folder).shown)
    loads: list[AgentJitLoad] = []
    for agent in all_agents():
        if agent.id not in shown:
            continue
        session = ls.service.agent_jit_session_for(agent, path, fresh=preview)
        if session is None:
            continue
        load = session.load_for(path)
        if load.files:
            loads.append(AgentJitLoad(
                agent=agent.id, label=agent_label(agent),
                files=[AgentJitFile(path=f.path, chars=len(f.content), reason=f.reason or None)
                       for f in load.files],
                context=load.context))
    return loads


def agent_label(agent: MemoryAgent) -> str:
    """How the notice names it: "Cursor (convention)", never called verified."""
    return profile_for(agent.id, None).label if is_unverified(agent.id) else agent.label
