"""Codex CLI (0.169): `AGENTS.md` / `AGENTS.override.md` from the project root down, under a
byte budget. `agent.CodexAgent` is its face behind `agents.base.MemoryAgent`."""
