"""Claude Code (2.1): `startup` (what loads at start, in order), `includes` (`@path`
includes), `rules` (`.claude/rules` and their `paths:`), `memory_index` (auto memory's
`MEMORY.md`), `on_read` (what a Read adds), `messages` (the exact strings sent).
`agent.ClaudeAgent` is its face behind `agents.base.MemoryAgent`."""
