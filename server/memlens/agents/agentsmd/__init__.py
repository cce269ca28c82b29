"""The AGENTS.md convention (agents.md): the nearest file wins. A convention, not a verified
agent. `agent.AgentsMdAgent` is its face behind `agents.base.MemoryAgent`."""
