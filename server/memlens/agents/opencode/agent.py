"""OpenCode 1.18 as a `MemoryAgent` (docs/reference.md "OpenCode", profile `opencode@1.18`,
verified on 1.18.33 offline): what it sends at start and after a read is `load.py`'s, its
`instructions` globs `globs.py`'s."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence

from memlens.agents.base import (
    AgentFile,
    AgentJitSession,
    AgentMemory,
    JitFile,
    JitLoad,
    ListedFile,
    MemoryAgent,
    WithoutReferences,
    WorkspaceCheck,
    defers_to,
    files_figures,
    ignores_file,
)
from memlens.agents.opencode.load import (
    CLAUDE_NAME,
    CONFIG_FOLDER,
    CONFIG_NAMES,
    NAMES,
    OpenCodeLoad,
    OpenCodeSession,
    claude_disabled,
    find_in,
    global_folder,
    load_opencode,
    names,
)
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname, resolve
from memlens.files.output import markdown_code
from memlens.files.tree import run_memo
from memlens.files.walk import walk
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic

DUPLICATE = "opencode-duplicate-instructions"
NAME_DROPPED = "opencode-name-dropped"
_MAX_NAMED = 2000  # chain files compared for `dropped_names`, at most
_SKIPPED_FOLDERS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__"})
_MAX_FOLDERS = 2000
_NAME_SET = frozenset(NAMES)


def _folders_below(cwd: str) -> list[tuple[str, bool]]:
    """The folders below `cwd` a read can bring memory from (bounded, in walk order), each
    with whether it lists one of its names (a file, a link or a folder so named: only those
    are looked up), once per command run (`files.tree.run_memo`; the language server's build
    keeps it for the matrix: `walk_for_views`)."""
    return run_memo(("opencode.folders_below", cwd), lambda: _walk_folders_below(cwd))


def _walk_folders_below(cwd: str) -> list[tuple[str, bool]]:
    found: list[tuple[str, bool]] = []
    for count, (folder, dirs, files) in enumerate(walk(cwd), start=1):
        named = not _NAME_SET.isdisjoint(dirs) or not _NAME_SET.isdisjoint(files)
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_FOLDERS)
        if count > _MAX_FOLDERS:
            break
        if folder != cwd:
            found.append((folder, named))
    return found


def _label(kind: str) -> str:
    return {"global": "global", "project": "project", "instructions": "instructions"}.get(
        kind, kind)


def duplicate_diagnostics(load: OpenCodeLoad) -> list[Diagnostic]:
    """A file sent twice in effect: the same text as a file sent before it (a copy, or a link
    to it under another path; OpenCode names each by the path it found)."""
    out: list[Diagnostic] = []
    first: dict[str, str] = {}
    for entry in load.sent:
        earlier = first.setdefault(entry.text, entry.path)
        if earlier != entry.path:
            out.append(Diagnostic(
                path=entry.path, line=1, col=1, end_line=1, end_col=1, severity="info",
                code=DUPLICATE,
                message=f"OpenCode sends this text twice: {earlier} holds the same, and both "
                        "are sent"))
    return out


def dropped_names(found: list[str], roots: list[str]) -> list[Diagnostic]:
    """A CLAUDE.md (or CONTEXT.md) that OpenCode reads from its own folder but drops when it
    starts in a folder below holding a name it tries first (a nested AGENTS.md): the first
    name found in the chain wins, for every folder of the chain. One that a name beside it
    already drops everywhere is `ignored_files`' finding, said once there."""
    tried = names()
    named = sorted(p for p in found if posixpath.basename(p) in tried
                   and any(p.startswith(r.rstrip("/") + "/") for r in roots))[:_MAX_NAMED]
    present = set(named)
    out: list[Diagnostic] = []
    for path in named:
        name = posixpath.basename(path)
        earlier = tried[:tried.index(name)]
        if not earlier or any(posixpath.join(dirname(path), n) in present for n in earlier):
            continue
        below = dirname(path).rstrip("/") + "/"
        shadow = next((q for q in named if q.startswith(below)
                       and posixpath.basename(q) in earlier), None)
        if shadow is None:
            continue
        where = posixpath.relpath(dirname(shadow), dirname(path))
        out.append(Diagnostic(
            path=path, line=1, col=1, end_line=1, end_col=1, severity="info", code=NAME_DROPPED,
            message=f"OpenCode drops this file when it starts in {where}/ or below: "
                    f"{posixpath.basename(shadow)} there is found first, and it sends only the "
                    "first name it finds in the chain"))
    return out


class OpenCodeAgent(WithoutReferences, MemoryAgent):
    id = "opencode"
    label = "OpenCode"
    receiver = "OpenCode"
    nothing_loads = "no instructions reach OpenCode here"
    list_label_width = 12
    expands_home = False

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return NAMES

    def owns(self, path: str, settings: MemorySettings) -> bool:
        return posixpath.basename(path) == "CONTEXT.md"

    def claims(self, path: str) -> bool:
        return posixpath.basename(path) in (*CONFIG_NAMES, "CONTEXT.md")

    def home_folder(self, home: str) -> str | None:
        return global_folder(home)

    def home_change_matters(self, path: str, home: str) -> bool:
        folder = global_folder(home)
        return (folder is None or not path.startswith(folder + "/")
                or posixpath.basename(path) in ("AGENTS.md", *CONFIG_NAMES))

    def _load(self, folder: str, settings: MemorySettings,
              reader: FileReader | None) -> OpenCodeLoad:
        parts = folder.split("/")
        if CONFIG_FOLDER in parts[1:]:  # its config folder stands for the folder holding it
            folder = "/".join(parts[:parts.index(CONFIG_FOLDER, 1)]) or "/"
        return load_opencode(folder, settings.home, reader)

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        reader = reader or FileReader()
        load = self._load(folder, settings, reader)
        start = load.render()
        files = [AgentFile(f.path, _label(f.kind), f.text, f.note) for f in load.sent]
        text = start
        later: list[AgentFile] = []
        if target is not None:
            read = OpenCodeSession(load, reader).read(target)
            if read.files:
                text = "\n".join([start, read.payload()]) if start else read.payload()
            later = [AgentFile(f.path, "on read", f.text, f.note, when="on-read")
                     for f in read.files]
        listing = [ListedFile(f.path, _label(f.kind), len(f.text), f.text) for f in load.files]
        headline = (f"**{self.label} instructions for {markdown_code(load.cwd)}** — "
                    f"{files_figures(self.label, files, start)}"
                    + (f"; of the chain's names it reads {load.chosen}" if load.chosen else ""))
        return AgentMemory(
            agent=self.id, cwd=load.cwd, mode="opencode", files=[*files, *later], text=text,
            diagnostics=[*load.diagnostics, *duplicate_diagnostics(load)], headline=headline,
            listing=listing,
            details={"root": load.root, "chosen": load.chosen, "configs": load.configs,
                     "refused": load.refused,
                     "empty": [f.path for f in load.files if not f.text]},
            payloads=[start] if start else [])

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        check = WorkspaceCheck(found=found)
        check.diagnostics += dropped_names(found, roots)
        for root in roots:
            load = self._load(root, settings, reader)
            check.diagnostics += [d for d in load.diagnostics
                                  if d.path.startswith(root + "/")]
            check.diagnostics += duplicate_diagnostics(load)
            check.watched |= {*load.paths, *load.configs}
            check.sources += [f.path for f in load.sent]
        return check

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        return _Session(OpenCodeSession(self._load(folder, settings, reader), reader))

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        """The files of the chain's names that OpenCode never reads from any folder: one
        beside a file of a name tried before it (a read there brings the first; a start
        finds the first name in the chain), CLAUDE.md when Claude Code's files are switched
        off."""
        out: list[Diagnostic] = []
        tried = names()
        for path in found:
            name = posixpath.basename(path)
            if name not in NAMES or not any(path.startswith(r.rstrip("/") + "/") for r in roots):
                continue
            if name == CLAUDE_NAME and claude_disabled():
                out.append(ignores_file(path, "OpenCode does not read CLAUDE.md files: "
                                              "OPENCODE_DISABLE_CLAUDE_CODE is set"))
                continue
            folder = dirname(path)
            before = [n for n in tried[:tried.index(name)]
                      if os.path.exists(posixpath.join(folder, n))]
            if before and not defers_to(path, before[0], reader):
                out.append(ignores_file(
                    path, f"OpenCode does not read this file: {before[0]} beside it comes "
                          f"first (it reads one of {', '.join(tried)} per folder)"))
        return out

    def why_not_read(self, path: str, folder: str, settings: MemorySettings) -> str | None:
        name = posixpath.basename(path)
        if name not in NAMES:
            return None
        load = load_opencode(folder, settings.home)
        if load.chosen and load.chosen != name and path.startswith(load.root.rstrip("/") + "/"):
            return (f"OpenCode reads {load.chosen} files here: the first name found from "
                    f"{folder} up to {load.root} drops the others")
        return None

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        if not check.has_memory and not any(posixpath.basename(p) in NAMES
                                            for p in check.found):
            return []
        load = self._load(folder, settings, reader)
        rows = [AgentFile(f.path, _label(f.kind), f.text, f.note) for f in load.sent]
        return rows + self._nested(load, reader)

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        return self._nested(self._load(memory.cwd, settings, reader), reader)

    def _nested(self, load: OpenCodeLoad, reader: FileReader) -> list[AgentFile]:
        """Each folder below the working folder brings its first file by name on a read
        there (unless sent at start)."""
        rows: list[AgentFile] = []
        system = load.paths
        for folder, named in _folders_below(load.cwd):
            if not named:  # lists none of its names: nothing to look up
                continue
            found = find_in(folder, reader)
            if found is None or found in system:
                continue
            text = reader.read(found).content
            if not text or not text.removeprefix("\ufeff"):
                continue
            rel = posixpath.relpath(folder, load.cwd)
            rows.append(AgentFile(found, "nested", text.removeprefix("\ufeff"),
                                  f"when a read touches a path in {rel}/", when="on-read",
                                  reads_on=_read_below(folder, found)))
        return rows

    def walk_for_views(self, folder: str) -> None:
        _folders_below(resolve(folder))

    def section_starts(self, path: str) -> list[str]:
        return [f"Instructions from: {path}"]

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {"content": content, "files": [f.path for f in memory.files], **memory.details}


class _Session(AgentJitSession):
    def __init__(self, session: OpenCodeSession) -> None:
        self.session = session

    def load_for(self, path: str) -> JitLoad:
        read = self.session.read(resolve(path))
        payload = read.payload()
        return JitLoad(target=read.target,
                       files=[JitFile(f.path, f.text, f.note or "") for f in read.files],
                       context=payload, payloads=[payload] if payload else [])



def _read_below(folder: str, source: str) -> Callable[[str], bool]:
    """Whether reading a path brings the folder's file in: any path below the folder but the
    file itself."""
    below = folder.rstrip("/") + "/"
    return lambda target: target != source and target.startswith(below)
