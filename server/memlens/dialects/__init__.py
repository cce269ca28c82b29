"""Memory dialects other than Gemini CLI's: Claude Code (CLAUDE.md, auto memory) and AGENTS.md.

Each file belongs to the dialect of its name; `memlens show --dialect claude|agents` shows what
that agent loads for a folder, and `memlens check --dialect ...` its problems.
"""

from __future__ import annotations

DIALECTS = ("gemini", "claude", "agents")
