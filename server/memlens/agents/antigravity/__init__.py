"""Antigravity CLI (GEMINI.md and AGENTS.md, `.agents/` rules, workflows and skills) as public
descriptions of it say it reads them: a convention, not a verified agent.
`agent.AntigravityAgent` is its face behind `agents.base.MemoryAgent`."""
