"""AGENTS.md, following the agents.md convention: the file nearest to the code being worked on
wins. For a folder, the nearest `AGENTS.md` walking up (to the repository root) is the one in
force; the ones above it are shadowed (Codex-style concatenation is not what the convention
specifies, and an agent that follows it reads only the nearest). The convention has no
includes and nothing loads just in time."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memlens.agents.base import (
    AgentFile,
    AgentJitSession,
    AgentMemory,
    ListedFile,
    MemoryAgent,
    WithoutReferences,
    WorkspaceCheck,
)
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname, resolve
from memlens.files.output import markdown_code
from memlens.files.roots import repository_root
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic

FILE_NAME = "AGENTS.md"


def heading(path: str) -> str:
    """The line that opens the file's text in the rendered context."""
    return f"--- {path} ---"


@dataclass
class AgentsLoad:
    cwd: str
    active: str | None
    content: str
    shadowed: list[str]

    def render(self) -> str:
        if self.active is None:
            return ""
        return f"{heading(self.active)}\n{self.content.strip()}"


def load_agents(cwd: str, reader: FileReader | None = None) -> AgentsLoad:
    reader = reader or FileReader()
    cwd = resolve(cwd)
    ceiling = repository_root(cwd)
    found: list[tuple[str, str]] = []
    current = cwd
    while True:
        path = posixpath.join(current, FILE_NAME)
        read = reader.read(path)
        if read.content is not None:
            found.append((path, read.content))
        if current == ceiling or dirname(current) == current:
            break
        current = dirname(current)
    if not found:
        return AgentsLoad(cwd, None, "", [])
    return AgentsLoad(cwd, found[0][0], found[0][1], [p for p, _ in found[1:]])


class AgentsMdAgent(WithoutReferences, MemoryAgent):
    """Any agent that follows the AGENTS.md convention (Codex and others)."""

    id = "agents"
    label = "AGENTS.md"
    receiver = "an AGENTS.md agent"
    nothing_loads = "no AGENTS.md applies here"
    list_label_width = 9
    expands_home = False

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return (FILE_NAME,)

    def owns(self, path: str, settings: MemorySettings) -> bool:
        return posixpath.basename(path) == FILE_NAME

    def claims(self, path: str) -> bool:
        return False  # an AGENTS.md other agents import is theirs to re-read

    def home_folder(self, home: str) -> str | None:
        return None

    def home_change_matters(self, path: str, home: str) -> bool:
        return True

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        agents = load_agents(folder, reader)
        files = [AgentFile(agents.active, "active", agents.content)] if agents.active else []
        note = (f"shadows {len(agents.shadowed)} farther AGENTS.md" if agents.shadowed
                else "the only AGENTS.md here")
        listing = ([ListedFile(agents.active, "active", len(agents.content), agents.content)]
                   if agents.active else []) + [
            ListedFile(p, "shadowed") for p in agents.shadowed]
        return AgentMemory(
            agent=self.id, cwd=agents.cwd, mode="nearest", files=files, text=agents.render(),
            diagnostics=[], listing=listing,
            headline=(f"**AGENTS.md in force for {markdown_code(folder)}** (nearest ancestor "
                      f"wins; {note})"),
            details={"active": agents.active, "shadowed": agents.shadowed})

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        return WorkspaceCheck(found=found)  # one plain file per folder: nothing to check

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        return None

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        return []  # every AGENTS.md is the nearest one for its own subtree

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """The AGENTS.md in force for the folder, then those of its subfolders."""
        active = load_agents(folder, reader).active
        found = [p for p in check.found if folder_for(p) == folder]
        if active and active not in found:
            found.insert(0, active)
        rows = []
        for path in found:
            note = ("in force here (nearest)" if path == active
                    else f"in force in {posixpath.relpath(dirname(path), folder)}/ and below")
            rows.append(AgentFile(path, "agents", reader.read(path).content, note))
        return rows

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        return []  # the convention names no later loading

    def section_starts(self, path: str) -> list[str]:
        return [heading(path)]

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {**memory.details, "content": content}
