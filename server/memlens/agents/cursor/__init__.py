"""Cursor's project rules (`.cursor/rules/**/*.mdc`, `.cursorrules`, AGENTS.md) as its public
documentation describes them: a convention, not a verified agent. `agent.CursorAgent` is its
face behind `agents.base.MemoryAgent`; `rules` reads and checks one rule."""
