"""GitHub Copilot CLI 1.0 as a `MemoryAgent` (docs/reference.md "Which agent, which version",
profile `copilot@1.0`, verified on 1.0.102 offline): what it loads is in `load.py`, how it reads
`*.instructions.md` in `instructions.py`."""

from __future__ import annotations

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
    files_figures,
    ignores_file,
)
from memlens.agents.copilot.instructions import (
    SUFFIX,
    THIS_AGENT,
    glob_matches,
    glob_regex,
    globs_match,
    is_instructions,
    parse_frontmatter,
)
from memlens.agents.copilot.load import (
    FOLDER_NAMES,
    HOME_FILE,
    INSTRUCTIONS_DIR,
    REPO_FILE,
    RULES_DIR,
    CopilotFile,
    CopilotLoad,
    CopilotSession,
    fixed_copilot_home,
    folder_instruction_files,
    instruction_entry,
    load_copilot,
    stays_inside,
)
from memlens.files.fsread import FileReader
from memlens.files.globs import (
    MatchBudget,
    bounded,
    budget_diagnostic,
    match_cost,
    skipped_globs,
)
from memlens.files.nodecompat import resolve
from memlens.files.output import markdown_code, markdown_text
from memlens.files.tree import run_memo
from memlens.files.walk import walk
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic

FILE_NAMES = ("copilot-instructions.md",)
FRONTMATTER_INVALID = "copilot-frontmatter-invalid"
APPLYTO_INVALID = "copilot-applyto-invalid"
APPLYTO_UNMATCHED = "copilot-applyto-unmatched"
_SKIPPED_FOLDERS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__"})
_MAX_WALK = 20000
_MEMORY_DOT_FOLDERS = frozenset({".claude", ".github"})


def _labels(entry: CopilotFile) -> str:
    return {"home": "user", "repository": "repository", "folder": "folder"}.get(
        entry.kind, "instructions")


def instruction_diagnostics(entry: CopilotFile) -> list[Diagnostic]:
    """What Copilot CLI mis-reads in one `*.instructions.md` file: frontmatter that is not
    YAML (it falls back to the `applyTo:` line), globs that do not parse (they match
    nothing)."""
    front = entry.front
    out: list[Diagnostic] = []
    if front is None:
        return out
    if front.yaml_error:
        fallback = ("first `applyTo:` line" + (f" ({', '.join(front.globs)})" if front.globs
                                               else " (none: the file applies always)")
                    + " and ignores `excludeAgent` and `description`")
        out.append(Diagnostic(
            path=entry.path, line=front.yaml_line, col=1, end_line=front.yaml_line, end_col=1,
            severity="warning", code=FRONTMATTER_INVALID,
            message=("Memory Lens does not read a frontmatter this large, so it cannot say what "
                     "Copilot CLI reads from it; it shows the file as if Copilot CLI fell back "
                     "to the " + fallback) if front.yaml_too_large else
                    "Copilot CLI cannot read this frontmatter as YAML; it falls back to the "
                    + fallback,
            detail=front.yaml_error))
    for glob in bounded(front.globs):
        if glob_regex(glob) is None:
            out.append(Diagnostic(
                path=entry.path, line=1, col=1, end_line=1, end_col=1, severity="warning",
                code=APPLYTO_INVALID,
                message=f"Copilot CLI ignores the malformed applyTo glob {glob!r}: it matches "
                        "no file"))
    skipped = skipped_globs(front.globs)
    if skipped:
        out.append(budget_diagnostic(entry.path, 1, "applyTo globs", skipped=skipped,
                                     total=len(front.globs)))
    return out


def _any_match(globs: list[str], files: list[str], budget: MatchBudget) -> bool | None:
    """One of `globs` (valid ones) matches one of `files`; None: the check's budget ran out
    first."""
    for path in files:
        if not budget.take(match_cost(globs, path)):
            return None
        if any(glob_matches(g, path) for g in globs):
            return True
    return False


# The first part of each path a read in a folder can bring in (FOLDER_NAMES, the instructions
# and rules folders), lower-cased: a folder listing none of them brings nothing in (compared
# without case, as a file system that folds case would open them).
_SIGNS = frozenset(n.split("/")[0].lower() for n in (*FOLDER_NAMES, INSTRUCTIONS_DIR, RULES_DIR))


def _folders_below(cwd: str) -> list[tuple[str, frozenset[str]]]:
    """The folders below `cwd` (bounded; VCS, dependency and dot folders skipped but
    `.claude` and `.github`: a read there brings in their own memory files, `.claude/CLAUDE.md`
    as the `.claude` folder's CLAUDE.md), each with the `_SIGNS` it lists (no file is opened
    in a folder that lists none: 20,000 folders were 140,000 failed opens), once per command
    run (`files.tree.run_memo`)."""
    return run_memo(("copilot.folders_below", cwd), lambda: _walk_folders_below(cwd))


def _walk_folders_below(cwd: str) -> list[tuple[str, frozenset[str]]]:
    found: list[tuple[str, frozenset[str]]] = []
    for folder, dirs, files in walk(cwd):
        signs = frozenset(n.lower() for n in (*dirs, *files)) & _SIGNS
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_FOLDERS
                         and (not d.startswith(".") or d in _MEMORY_DOT_FOLDERS))
        if folder != cwd:
            found.append((folder, signs))
        if len(found) > _MAX_WALK // 10:
            break
    return found


def _workspace_files(root: str) -> list[str]:
    """Paths relative to `root` of the files under it (bounded; VCS and dependency folders
    skipped), once per command run (`files.tree.run_memo`)."""
    return run_memo(("copilot.workspace_files", root), lambda: _walk_workspace_files(root))


def _walk_workspace_files(root: str) -> list[str]:
    found: list[str] = []
    inside = root.rstrip("/") + "/"
    for folder, dirs, files in walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_FOLDERS]
        if folder == root:
            found += files
        elif folder.startswith(inside):
            prefix = folder[len(inside):] + "/"
            found += [prefix + f for f in files]
        else:
            found += [posixpath.relpath(posixpath.join(folder, f), root) for f in files]
        if len(found) > _MAX_WALK:
            break
    return found


class CopilotAgent(WithoutReferences, MemoryAgent):
    id = "copilot"
    label = "GitHub Copilot CLI"
    receiver = "GitHub Copilot CLI"
    nothing_loads = "no custom instructions reach GitHub Copilot CLI here"
    list_label_width = 12
    expands_home = False
    skips_blank_files = True  # a blank AGENTS.md, CLAUDE.md... is not sent on read

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return FILE_NAMES

    def owns(self, path: str, settings: MemorySettings) -> bool:
        name = posixpath.basename(path)
        return name in FILE_NAMES or (is_instructions(name) and "/instructions/" in path)

    def claims(self, path: str) -> bool:
        name = posixpath.basename(path)
        return is_instructions(name) or name == HOME_FILE

    def home_folder(self, home: str) -> str | None:
        return fixed_copilot_home(home)

    def home_change_matters(self, path: str, home: str) -> bool:
        folder = fixed_copilot_home(home)
        if folder is None or not path.startswith(folder + "/"):
            return True
        return (path == posixpath.join(folder, HOME_FILE)
                or path.startswith(posixpath.join(folder, "instructions") + "/"))

    def _load(self, folder: str, settings: MemorySettings,
              reader: FileReader | None) -> CopilotLoad:
        # A folder inside `.github` or `.claude` (where its instruction files live: the hover
        # on copilot-instructions.md asks about `.github`) stands for the folder holding it,
        # where the user works.
        parts = folder.split("/")
        for index, part in enumerate(parts):
            if part in (".github", ".claude") and index > 0:
                folder = "/".join(parts[:index]) or "/"
                break
        return load_copilot(folder, settings.home, reader)

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        reader = reader or FileReader()
        load = self._load(folder, settings, reader)
        text = load.render()
        files = [AgentFile(f.path, _labels(f), f.text, f.note) for f in load.files]
        later: list[AgentFile] = []
        if target is not None:
            read = CopilotSession(load, reader).touch(target)
            if read.files:
                text = "\n".join([text, read.payload()]) if text else read.payload()
            later = [AgentFile(f.path, "on read", f.text, None, when="on-read")
                     for f in read.files]
        listing = [ListedFile(f.path, _labels(f), len(f.text), f.text) for f in load.files]
        listing += [ListedFile(f.path, "scoped (applyTo: "
                               + ((f.front.raw_apply_to or "") if f.front else "") + ")",
                               len(f.text), f.text) for f in load.scoped]
        listing += [ListedFile(f.path, "excluded") for f in load.excluded]
        diagnostics = [d for f in [*load.always, *load.scoped, *load.excluded]
                       for d in instruction_diagnostics(f)]
        scoped = "".join(f"\n- {markdown_code(f.display)} applies to "
                         f"{markdown_text(str(f.front.raw_apply_to))}"
                         for f in load.scoped if f.front)
        start = load.render()
        headline = (f"**{self.label} instructions for {markdown_code(load.cwd)}** — "
                    f"{files_figures(self.label, files, start)}"
                    + (f"\n\nFiles scoped by `applyTo` (sent on read):{scoped}" if scoped else ""))
        return AgentMemory(
            agent=self.id, cwd=load.cwd, mode="copilot", files=[*files, *later], text=text,
            diagnostics=diagnostics, headline=headline, listing=listing,
            details={"root": load.root,
                     "scoped": [{"path": f.path, "applyTo": f.front.globs if f.front else [],
                                 "description": f.front.description if f.front else None}
                                for f in load.scoped],
                     "excluded": [f.path for f in load.excluded]},
            payloads=[start] if start else [])

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        """Its instruction files in each root: what it mis-reads, and the `applyTo` globs that
        match no file in the workspace."""
        check = WorkspaceCheck(found=found)
        budget = MatchBudget()
        for root in roots:
            load = self._load(root, settings, reader)
            entries = [*load.always, *load.scoped, *load.excluded]
            check.watched |= {f.path for f in [*load.blocks, *entries]}
            # Copilot counts as having memory here (its notices on read in the editor) only
            # with files of its own: AGENTS.md, CLAUDE.md, GEMINI.md and .claude/rules alone
            # are other agents'.
            own = [f.path for f in [*load.blocks, *entries]
                   if f.kind == "home" or f.path.endswith("/" + REPO_FILE)
                   or (f.kind == "instructions" and "/.claude/rules/" not in f.path)]
            if own or any(posixpath.basename(p) in FILE_NAMES for p in found):
                check.sources += [f.path for f in [*load.files, *load.scoped]]
            files: list[str] | None = None
            for entry in entries:
                if not entry.path.startswith(root + "/"):
                    continue  # HOME's: not this workspace's to judge
                check.diagnostics += instruction_diagnostics(entry)
                front = entry.front
                if front is None or front.always or front.excluded:
                    continue
                if files is None:
                    files = _workspace_files(load.root)
                valid = [g for g in bounded(front.globs) if glob_regex(g) is not None]
                if not valid:
                    continue
                matched = _any_match(valid, files, budget)
                if matched is None:
                    check.diagnostics.append(budget_diagnostic(
                        entry.path, 1, "applyTo globs", total=len(valid), files=len(files)))
                elif not matched:
                    check.diagnostics.append(Diagnostic(
                        path=entry.path, line=1, col=1, end_line=1, end_col=1, severity="info",
                        code=APPLYTO_UNMATCHED,
                        message=f"applyTo ({', '.join(valid)}) matches no file in "
                                f"{load.root} today: Copilot CLI sends this file only once "
                                "a file it reads matches"))
        return check

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        return _Session(CopilotSession(self._load(folder, settings, reader), reader))

    def walk_for_views(self, folder: str) -> None:
        _folders_below(resolve(folder))

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        """Instruction files it leaves out: `excludeAgent: coding-agent`, a file in
        `.github/instructions` not named `*.instructions.md`."""
        out: list[Diagnostic] = []
        for root in roots:
            directory = posixpath.join(root, INSTRUCTIONS_DIR)
            for folder, dirs, files in walk(directory):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                for name in sorted(files):
                    path = posixpath.join(folder, name)
                    if name.endswith(".md") and not is_instructions(name):
                        out.append(ignores_file(
                            path, f"GitHub Copilot CLI does not read this file: only "
                                  f"`*{SUFFIX}` files in {INSTRUCTIONS_DIR} are instructions"))
                    elif is_instructions(name):
                        text = reader.read(path).content
                        if text is not None and parse_frontmatter(text).excluded:
                            out.append(ignores_file(
                                path, f"GitHub Copilot CLI does not read this file: "
                                      f"`excludeAgent` names `{THIS_AGENT}` (the CLI)"))
        return out

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """What it reads starting in the folder, its `applyTo` files, and the files of the
        folders below, which it reads when a tool touches a path there; nothing where the
        workspace holds no Copilot file of its own (`check_workspace`: AGENTS.md, CLAUDE.md
        and GEMINI.md alone are shown under their own agents)."""
        if not check.has_memory:
            return []
        return self._rows(self._load(folder, settings, reader), reader, with_startup=True)

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        return self._rows(self._load(memory.cwd, settings, reader), reader,
                          with_startup=False)

    def _rows(self, load: CopilotLoad, reader: FileReader, *,
              with_startup: bool) -> list[AgentFile]:
        rows = ([AgentFile(f.path, _labels(f), f.text) for f in load.files]
                if with_startup else [])
        rows += [AgentFile(f.path, "scoped", f.text,
                           f"applies to {f.front.raw_apply_to if f.front else ''}",
                           when="on-read", reads_on=_scoped_reads_on(f, load.root))
                 for f in load.scoped]
        listed = {f.path for f in rows}
        for folder, signs in _folders_below(load.cwd):
            if not signs:
                continue
            rel = posixpath.relpath(folder, load.cwd)
            for path in (posixpath.join(folder, n) for n in FOLDER_NAMES
                         if n.split("/")[0].lower() in signs):
                text = reader.read(path).content
                if text is not None and path not in listed and stays_inside(path, load.root):
                    listed.add(path)
                    rows.append(AgentFile(path, "nested", text,
                                          f"when a tool touches a path in {rel}/",
                                          when="on-read"))
            # The folder's `.github/instructions` and `.claude/rules` files, as its session
            # sends them: the always-on ones on any read in the folder, the others when the
            # path read (below the folder) matches their globs; excluded ones never; a blank
            # one too (only a blank AGENTS.md, CLAUDE.md... is skipped).
            for path in folder_instruction_files(folder, signs):
                text = reader.read(path).content
                if text is None or path in listed or not stays_inside(path, load.root):
                    continue  # a link leading out of the repository is not sent on read
                entry = instruction_entry(path, text, posixpath.relpath(path, load.root))
                if entry.front is None or entry.front.excluded:
                    continue
                listed.add(path)
                if entry.scoped:
                    rows.append(AgentFile(path, "nested scoped", text,
                                          f"in {rel}/: applies to {entry.front.raw_apply_to}",
                                          when="on-read", sent_blank=True,
                                          reads_on=_nested_reads_on(entry, folder, load.root)))
                else:
                    rows.append(AgentFile(path, "nested", text,
                                          f"when a tool touches a path in {rel}/",
                                          when="on-read", sent_blank=True))
        return rows

    def section_starts(self, path: str) -> list[str]:
        # Its start-up blocks all open with the same `<custom_instruction>` line and name no
        # file: marking them would give every block to one path (the merged-context view's
        # links), so none is marked, as for Codex.
        return []

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {"content": content, "files": [f.path for f in memory.files], **memory.details}


def _scoped_reads_on(entry: CopilotFile, root: str) -> Callable[[str], bool]:
    """Whether reading a path sends the `applyTo` file (its globs, from the repository
    root)."""
    globs = entry.front.globs if entry.front else []
    return lambda target: globs_match(globs, root, target)


def _nested_reads_on(entry: CopilotFile, folder: str, root: str) -> Callable[[str], bool]:
    """Whether reading a path sends a subfolder's scoped instruction file: a path below its
    folder that its globs (from the repository root) match."""
    globs = entry.front.globs if entry.front else []
    below = folder.rstrip("/") + "/"
    return lambda target: target.startswith(below) and globs_match(globs, root, target)


class _Session(AgentJitSession):
    def __init__(self, session: CopilotSession) -> None:
        self.session = session

    def load_for(self, path: str) -> JitLoad:
        read = self.session.touch(resolve(path))
        payload = read.payload()
        return JitLoad(target=read.target,
                       files=[JitFile(f.path, f.text, _why(f, self.session.load.root))
                              for f in read.files],
                       context=payload, payloads=[payload] if payload else [])


def _why(entry: CopilotFile, root: str) -> str:
    """Why a file comes on read: its `applyTo`, else the folder it belongs to being read."""
    if entry.front is not None and entry.scoped:
        return f"applyTo: {entry.front.raw_apply_to}"
    folder = entry.path.split("/.github/", 1)[0] if "/.github/" in entry.path else (
        posixpath.dirname(entry.path).removesuffix("/.claude"))
    return f"{posixpath.relpath(folder, root)}/ is read"
