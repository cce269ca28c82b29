"""Claude Code's agent memory: a subagent whose definition (`.claude/agents/<file>.md` of the
working folder, or `~/.claude/agents/`) sets `memory:` to `user`, `project` or `local` keeps a
memory folder of its own — `~/.claude/agent-memory/<name>/`, `.claude/agent-memory/<name>/`
or `.claude/agent-memory-local/<name>/` — whose `MEMORY.md` is put in that subagent's system
prompt (under `## MEMORY.md`, cut like the main index) each time it runs; the main session
never sees it. Read from Claude Code 2.1.330's definitions schema and prompt builder; a
subagent run is not captured yet, so this is shown as read from Claude Code, not verified."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from memlens.agents.claude.includes import IncludeReader
from memlens.agents.claude.memory_folder import claude_home
from memlens.files.nodecompat import resolve
from memlens.text.frontmatter import line_closed_frontmatter

SCOPES = {"user": "{home}/agent-memory/{name}", "project": "{cwd}/.claude/agent-memory/{name}",
          "local": "{cwd}/.claude/agent-memory-local/{name}"}
MAX_DEFINITIONS = 500


@dataclass
class AgentMemoryFolder:
    """A subagent's memory folder, from its definition."""

    agent: str  # the subagent's name (its `name:`, else the file's stem)
    scope: str  # user | project | local
    definition: str  # the definition file
    folder: str

    @property
    def index(self) -> str:
        return posixpath.join(self.folder, "MEMORY.md")


def _definitions(folder: str) -> list[str]:
    import os
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))
    except OSError:
        return []
    return [posixpath.join(folder, n) for n in names[:MAX_DEFINITIONS]]


def agent_memory_folders(reader: IncludeReader, home: str, cwd: str) -> list[AgentMemoryFolder]:
    """Every subagent definition here that asks for memory, and where that memory lives (a
    project definition wins over a user one of the same name, as Claude Code picks agents)."""
    cwd, config = resolve(cwd), claude_home(resolve(home))
    found: dict[str, AgentMemoryFolder] = {}
    for folder in (posixpath.join(cwd, ".claude", "agents"), posixpath.join(config, "agents")):
        for path in _definitions(folder):
            read = reader._read(path)
            meta = line_closed_frontmatter(read.content) if read.content else None
            if not meta:
                continue
            scope, name = meta.get("memory"), meta.get("name")
            name = name if isinstance(name, str) and name else posixpath.basename(path)[:-3]
            if scope not in SCOPES or name in found or "/" in name or name in (".", ".."):
                continue
            place = SCOPES[str(scope)].format(home=config, cwd=cwd, name=name)
            found[name] = AgentMemoryFolder(name, str(scope), path, place)
    return list(found.values())
