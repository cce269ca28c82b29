"""Gemini CLI as a `MemoryAgent`: a thin face on the engine that reproduces it (discovery,
imports, render, jit, diagnostics). Which version it reproduces is the settings' profile
(`MemorySettings.gemini_profile`: "0.43", today's default, or "0.44+", verified on 0.61.0;
`--agent gemini@VERSION`), consulted where the versions differ (`model.py`: JIT only and
context.fileName adding to GEMINI.md; `discovery.py`: a folder named like a context file).
The workspace index renders, diagnoses and watches Gemini CLI's memory itself
(`rendered_by_index`), so its workspace check and Memory view rows are empty."""

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
    WorkspaceCheck,
    ignores_file,
)
from memlens.agents.gemini.discovery import GEMINI_DIR, MemoryEngine
from memlens.agents.gemini.ignore import IgnoreFilter
from memlens.agents.gemini.imports import find_imports
from memlens.agents.gemini.jit import JitSession
from memlens.agents.gemini.render import (
    append_jit_context,
    context_end,
    context_start,
    flatten_memory,
    render_prompt_memory,
)
from memlens.agents.gemini.trust import memory_summary
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname, is_subpath, resolve
from memlens.files.output import markdown_code
from memlens.model import MemorySettings, is_context_file
from memlens.protocol.memory import Diagnostic
from memlens.text.references import ImportToken, relative_import


class GeminiJitSession(AgentJitSession):
    """A `jit.JitSession` in the shape every agent's JIT session has."""

    def __init__(self, session: JitSession):
        self.session = session

    def load_for(self, path: str) -> JitLoad:
        result = self.session.discover(path)
        # No reason of its own (''): its JIT files are the context files between the path
        # and its project root, the notice names none (docs/reference.md).
        files = [JitFile(f.path, f.content or "", "") for f in result.files]
        return JitLoad(result.target, files, result.appendix,
                       [result.appendix] if result.appendix else [])


def _ignored_by(path: str, gemini: IgnoreFilter, git: IgnoreFilter) -> str | None:
    if gemini.ignored(path):
        return ".geminiignore"
    if git.ignored(path):
        return "git's ignore rules (.gitignore)"
    return None


def ignored_context_files(settings: MemorySettings, roots: list[str],
                          reader: FileReader | None = None) -> list[Diagnostic]:
    """Context files Gemini CLI's classic search never reaches because an ignore file skips
    them or a folder above them (`agent-ignores-file`).

    Only classic mode (the 0.43 profile with `jitContext` off) filters memory by ignore files:
    its downward search asks the file service about every folder and file, as `discovery.py`
    reproduces. The upward walk does not ask, so a workspace folder's own files always load.
    JIT loading (0.43's default, and 0.44+, where it is the only mode) asks nothing: an
    ignored folder's context file still loads when `list_directory` lists that folder
    (`read_file` refuses ignored files, `list_directory` only filters the entries it shows;
    checked in the 0.43.0 and 0.61.0 bundles), so in JIT mode nothing is reported.
    Untrusted folders are skipped (their own notice says why nothing loads). The ignored
    folders are walked here (the workspace walk honours the ignore files, so it never sees
    these files), at most `memlens.maxIndexedFolders` folders per workspace folder."""
    if settings.jit_context:
        return []
    engine = MemoryEngine(settings, reader)
    folders = [resolve(r) for r in roots]
    out: list[Diagnostic] = []
    for root in dict.fromkeys(folders):
        if not engine.trust_for(root)[0]:
            continue
        gemini = IgnoreFilter(root, respect_git_ignore=False,
                              respect_gemini_ignore=settings.respect_gemini_ignore)
        git = IgnoreFilter(root, respect_git_ignore=settings.respect_git_ignore,
                           respect_gemini_ignore=False)
        if not (gemini.active or git.active):
            continue
        deeper = [r for r in folders if r != root and is_subpath(root, r)]
        paths, _ = engine.downward_search(root, tuple(settings.context_file_names), None,
                                          settings.max_indexed_folders,
                                          skip_dirs=engine.classic_skip_dirs(root))
        for path in paths:
            if dirname(path) == root or any(is_subpath(r, path) for r in deeper):
                continue  # read by the upward walk / checked from the deeper folder
            parts = path[len(root.rstrip("/")) + 1:].split("/")
            for depth in range(1, len(parts) + 1):
                sub = posixpath.join(root, *parts[:depth])
                source = _ignored_by(sub, gemini, git)
                if source is None:
                    continue
                if depth < len(parts):
                    message = (f"Gemini CLI does not read this file: {source} ignores "
                               f"{'/'.join(parts[:depth])}/, and its search (classic mode) "
                               "skips ignored folders")
                else:
                    message = (f"Gemini CLI does not read this file: {source} ignores it, and "
                               "its search (classic mode) skips ignored files")
                out.append(ignores_file(path, message, (
                    f"Working in {root}, Gemini CLI's downward search for "
                    f"{', '.join(settings.context_file_names)} never reaches it (in JIT "
                    "mode it would load when a tool lists its folder)")))
                break
    return out


class GeminiAgent(MemoryAgent):
    id = "gemini"
    label = "Gemini CLI"
    receiver = "Gemini CLI"
    nothing_loads = "no memory files loaded"
    list_label_width = 17
    has_references = True
    expands_home = False
    rendered_by_index = True  # its files, imports and start-up loads: the index's own

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return settings.context_file_names

    def read_tool_target(self, path: str, settings: MemorySettings) -> str | None:
        """read_file fails on a missing file or a folder; from 0.44 it discovers memory from
        the file's real path (a symbolic link's target), 0.43 from the path as given."""
        if not os.path.isfile(path):
            return None
        return os.path.realpath(path) if settings.gemini_profile != "0.43" else path

    def owns(self, path: str, settings: MemorySettings) -> bool:
        return is_context_file(path, settings.context_file_names)

    def claims(self, path: str) -> bool:
        return False  # the index follows Gemini CLI's files through its import graph

    def home_folder(self, home: str) -> str | None:
        return os.path.join(home, GEMINI_DIR)

    def home_change_matters(self, path: str, home: str) -> bool:
        return True

    def find_references(self, text: str) -> list[ImportToken]:
        return find_imports(text)

    def resolve_reference(self, source: str, written: str, home: str) -> str:
        return resolve(dirname(source), written)

    def rewrite_reference(self, written: str, from_dir: str, target: str, home: str) -> str:
        return target if written.startswith("/") else relative_import(from_dir, target)

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        """Startup memory; with `target` (jit mode), plus what JIT loading adds for it."""
        from memlens.agents.gemini.diagnostics import diagnose

        engine = MemoryEngine(settings, reader)
        load = engine.load(folder)
        m = load.memory
        text = flatten_memory(m.global_, m.user_project_memory, m.extension, m.project)
        files = [AgentFile(f.path, f.tier, f.content) for f in load.files
                 if f.content is not None]
        if target is not None and settings.jit_context:
            jit = JitSession.after_startup(engine, load).preview(target)
            text = append_jit_context(text, jit.context)
            files += [AgentFile(f.path, "jit", f.content) for f in jit.files]
        chars = sum(len(f.content or "") for f in files)
        # The memory part of the system instruction, then of the first user message.
        system, session = render_prompt_memory(load.mode, m.global_, m.user_project_memory,
                                               m.extension, m.project,
                                               settings.context_file_names)
        return AgentMemory(
            agent=self.id, cwd=load.cwd, mode=load.mode, files=files, text=text,
            diagnostics=diagnose(load, engine),
            headline=f"**{self.label} memory for {markdown_code(folder)}** — "
                     f"{memory_summary(len(files), chars)}",
            listing=[ListedFile(f.path, f.tier, None if f.content is None else len(f.content))
                     for f in load.files],
            details={"trusted": load.trusted, "prompt": system, "sessionMemory": session},
            payloads=[p for p in (system, session) if p])

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        return WorkspaceCheck(found=found)

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        if not settings.jit_context:
            return None
        engine = MemoryEngine(settings, reader)
        return GeminiJitSession(JitSession.after_startup(engine, engine.load(folder)))

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        """Classic mode's ignored folders and files (`ignored_context_files`); `found` is not
        needed (the workspace walk skips what is ignored)."""
        return ignored_context_files(settings, roots, reader)

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        return []  # the Memory view lists Gemini CLI's files itself, tier by tier

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        """In jit mode, in a trusted folder: the context files below the working folder it did
        not load at start (JIT loading reads each when a tool touches a path in its folder).
        Classic mode reads nothing later."""
        if not settings.jit_context or not memory.details.get("trusted"):
            return []
        loaded = {f.path for f in memory.files}
        rows = []
        for path in check.found:
            if path in loaded or not path.startswith(memory.cwd.rstrip("/") + "/"):
                continue
            folder = posixpath.relpath(dirname(path), memory.cwd)
            rows.append(AgentFile(path, "jit", reader.read(path).content,
                                  f"when a tool touches a path in {folder}/", when="on-read"))
        return rows

    def section_starts(self, path: str) -> list[str]:
        return [context_start(path)]

    def section_end(self, path: str) -> str | None:
        return context_end(path)

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {"content": content, "files": [f.path for f in memory.files],
                **memory.details}
