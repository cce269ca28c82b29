"""AGENTS.md, following the agents.md convention: the file nearest to the code being worked on
wins. For a folder, the nearest `AGENTS.md` walking up (to the repository root) is the one in
force; the ones above it are shadowed (Codex-style concatenation is not what the convention
specifies, and an agent that follows it reads only the nearest)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..fsread import FileReader
from ..imports import repository_root
from ..nodecompat import dirname, resolve


@dataclass
class AgentsLoad:
    cwd: str
    active: str | None
    content: str
    shadowed: list[str]

    def render(self) -> str:
        if self.active is None:
            return ""
        return f"--- {self.active} ---\n{self.content.strip()}"


def load_agents(cwd: str, reader: FileReader | None = None) -> AgentsLoad:
    reader = reader or FileReader()
    cwd = resolve(cwd)
    ceiling = repository_root(cwd)
    found: list[tuple[str, str]] = []
    current = cwd
    while True:
        path = posixpath.join(current, "AGENTS.md")
        read = reader.read(path)
        if read.content is not None:
            found.append((path, read.content))
        if current == ceiling or dirname(current) == current:
            break
        current = dirname(current)
    if not found:
        return AgentsLoad(cwd, None, "", [])
    return AgentsLoad(cwd, found[0][0], found[0][1], [p for p, _ in found[1:]])
