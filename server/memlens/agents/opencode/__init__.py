"""OpenCode (profile `opencode@1.18`, verified on 1.18.33): AGENTS.md, CLAUDE.md, CONTEXT.md
and the `instructions` of `opencode.json`."""
