"""pi 0.73 (`@mariozechner/pi-coding-agent`) as a `MemoryAgent` (docs/reference.md "pi",
profile `pi@0.73`, verified on 0.73.1 offline): what it loads at start is `load.py`'s; it loads
nothing later and has no includes."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from memlens.agents.base import (
    AgentFile,
    AgentJitSession,
    AgentMemory,
    ListedFile,
    MemoryAgent,
    WithoutReferences,
    WorkspaceCheck,
    defers_to,
    files_figures,
    ignores_file,
)
from memlens.agents.pi.load import (
    APPEND_NAME,
    CONFIG_DIR,
    CONTEXT_NAMES,
    SYSTEM_NAME,
    PiFile,
    PiLoad,
    agent_dir,
    load_pi,
)
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname
from memlens.files.output import markdown_code
from memlens.files.roots import repository_root
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic

DUPLICATE = "pi-duplicate-context"
# The names no other agent reads: pi's own (AGENTS.md and CLAUDE.md are other agents' too).
OWN_NAMES = ("AGENTS.MD", "CLAUDE.MD")
PROMPT_NAMES = (SYSTEM_NAME, APPEND_NAME)
_LABELS = {"global": "global", "project": "project", "system": "system prompt",
           "append": "appended prompt"}


def _note(entry: PiFile, cwd: str) -> str | None:
    if entry.as_path:
        return "cannot be read: pi sends its path instead"
    if entry.role == "system":
        return "replaces pi's own system prompt"
    if entry.role == "project":
        repo = repository_root(cwd)
        folder = dirname(entry.path)
        if repo is not None and folder != repo and not folder.startswith(repo + "/") \
                and repo.startswith(folder.rstrip("/") + "/"):
            return "above the repository: pi reads every folder up to /"
    return None


def duplicate_diagnostics(load: PiLoad) -> list[Diagnostic]:
    """`pi-duplicate-context` (info) on a context file whose text pi already sent from
    another file of the chain (a link, a copy): it is sent, and paid for, twice."""
    out: list[Diagnostic] = []
    first: dict[str, str] = {}
    for entry in load.context:
        if not entry.text.strip():
            continue
        earlier = first.setdefault(entry.text, entry.path)
        if earlier != entry.path:
            out.append(Diagnostic(
                path=entry.path, line=1, col=1, end_line=1, end_col=1, severity="info",
                code=DUPLICATE, message=f"pi sends this text twice: {earlier} has the same "
                                        f"text, and pi sends every file of the chain"))
    return out


def ignored_here(load: PiLoad) -> list[Diagnostic]:
    """The context files pi passes over in the folders it reads (one per folder)."""
    out = []
    for path, read in load.shadowed:
        out.append(ignores_file(
            path, f"pi does not read this file: it reads one file per folder, and "
                  f"{posixpath.basename(read)} comes first",
            "pi's order: " + ", ".join(CONTEXT_NAMES)))
    return out


class PiAgent(WithoutReferences, MemoryAgent):
    id = "pi"
    label = "pi"
    receiver = "pi"
    nothing_loads = "no context file reaches pi here"
    list_label_width = 15
    expands_home = False

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return CONTEXT_NAMES

    def owns(self, path: str, settings: MemorySettings) -> bool:
        name = posixpath.basename(path)
        if name in PROMPT_NAMES:
            return f"/{CONFIG_DIR}/" in path
        return name in OWN_NAMES

    def claims(self, path: str) -> bool:
        return posixpath.basename(path) in PROMPT_NAMES and f"/{CONFIG_DIR}/" in path

    def home_folder(self, home: str) -> str | None:
        return agent_dir(home)

    def home_change_matters(self, path: str, home: str) -> bool:
        # pi keeps sessions, settings and models under its folder: only its memory matters.
        folder = agent_dir(home)
        return (not path.startswith(folder + "/")
                or posixpath.basename(path) in (*CONTEXT_NAMES, *PROMPT_NAMES))

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        reader = reader or FileReader()
        load = load_pi(self._working_folder(folder), settings.home, reader)
        files = [AgentFile(f.path, _LABELS[f.role], f.text, _note(f, load.cwd))
                 for f in load.files]
        listing = [ListedFile(f.path, f.label, len(f.content or ""), f.content) for f in files]
        listing += [ListedFile(p, "shadowed") for p, _ in load.shadowed]
        text = load.render()
        headline = (f"**{self.label} context for {markdown_code(load.cwd)}** — "
                    f"{files_figures(self.label, files, text)}, sent once at start")
        return AgentMemory(
            agent=self.id, cwd=load.cwd, mode="pi", files=files, text=text,
            diagnostics=duplicate_diagnostics(load), headline=headline, listing=listing,
            details={"agentDir": load.agent_dir,
                     "shadowed": [p for p, _ in load.shadowed],
                     "unreadable": load.unreadable,
                     "system": load.system.path if load.system else None,
                     "append": load.append.path if load.append else None},
            payloads=[text] if text else [])

    @staticmethod
    def _working_folder(folder: str) -> str:
        """A folder inside `.pi` (where SYSTEM.md lives: a hover there) stands for the folder
        holding it, where the user works."""
        parts = folder.split("/")
        if CONFIG_DIR in parts[1:]:
            return "/".join(parts[:parts.index(CONFIG_DIR, 1)]) or "/"
        return folder

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        check = WorkspaceCheck(found=found)
        for root in roots:
            load = load_pi(root, settings.home, reader)
            check.sources += [f.path for f in load.files if f.path not in check.sources]
            check.diagnostics += [d for d in duplicate_diagnostics(load)
                                  if d not in check.diagnostics]
        return check

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        return None  # pi reads nothing later: a read returns the file alone

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        """In each folder holding one of its names (and its global folder), the names pi
        passes over: it reads the first of AGENTS.md, AGENTS.MD, CLAUDE.md, CLAUDE.MD there.
        Per folder, so `roots` is not needed (pi may start in any folder). A CLAUDE.md that
        only points at the file pi reads beside it (`See @AGENTS.md`) loses pi nothing."""
        return [d for d, read in self._passed_over(settings, found, reader)
                if not defers_to(d.path, posixpath.basename(read), reader)]

    def _passed_over(self, settings: MemorySettings, found: list[str], reader: FileReader
                     ) -> list[tuple[Diagnostic, str]]:
        """Each file pi passes over, with the file it reads in that folder instead."""
        folders = [dirname(p) for p in found if posixpath.basename(p) in CONTEXT_NAMES]
        folders.append(agent_dir(settings.home))
        out: list[tuple[Diagnostic, str]] = []
        seen: set[str] = set()
        for directory in dict.fromkeys(folders):
            load = load_pi(directory, settings.home, reader)
            for diagnostic, read in zip(ignored_here(load), (r for _, r in load.shadowed),
                                        strict=True):
                if diagnostic.path not in seen and dirname(diagnostic.path) == directory:
                    seen.add(diagnostic.path)
                    out.append((diagnostic, read))
        return out

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """What pi sends starting in the folder, then the files it reads only when it starts
        in a subfolder."""
        rows = self.load(folder, settings, reader).files
        listed = {f.path for f in rows}
        shadowed = {d.path for d, _ in self._passed_over(settings, check.found, reader)}
        for path in check.found:
            if (path not in listed and path not in shadowed and folder_for(path) == folder
                    and posixpath.basename(path) in CONTEXT_NAMES):
                listed.add(path)
                rows.append(AgentFile(path, "nested", reader.read(path).content,
                                      f"read when {self.label} starts in "
                                      f"{posixpath.relpath(dirname(path), folder)}/"))
        return rows

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        return []  # pi reads nothing later

    def section_starts(self, path: str) -> list[str]:
        return [f"## {path}"]

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {"content": content, "files": [f.path for f in memory.files], **memory.details}
