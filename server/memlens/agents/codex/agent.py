"""Codex CLI 0.169 as a `MemoryAgent` (docs/reference.md "Which agent, which version", profile
`codex@0.169`): what it loads at start-up is `load.py`'s, the byte budget's diagnostics
`budget.py`'s."""

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
    files_figures,
    ignores_file,
)
from memlens.agents.codex.budget import budget_diagnostics, cut_diagnostics
from memlens.agents.codex.load import (
    CONFIG_NAME,
    FILE_NAMES,
    CodexLoad,
    codex_home,
    doc_found,
    load_codex,
    raw_bytes,
    read_config,
    rust_trim,
)
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname
from memlens.files.output import markdown_code
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic


def _config_diagnostics(load: CodexLoad) -> list[Diagnostic]:
    """`agent-config-invalid` on the config.toml Codex refuses (it does not start, so nothing
    is sent)."""
    if not load.config_error:
        return []
    path = load.config_error.split(": ", 1)[0]
    if not path.endswith(CONFIG_NAME):
        path = posixpath.join(load.codex_home, CONFIG_NAME)
    return [Diagnostic(path=path, line=1, col=1, end_line=1, end_col=1, severity="error",
                       code="agent-config-invalid",
                       message=f"Codex does not start with this config.toml: "
                               f"{load.config_error}")]


def _blank(reader: FileReader, path: str) -> bool | None:
    """Whether the file is whitespace only as Codex reads it (its bytes, bad UTF-8 as U+FFFD,
    Rust's trim); None when it cannot be read."""
    try:
        data = raw_bytes(reader, path)
    except OSError:
        return None
    return None if data is None else not rust_trim(data.decode("utf-8", "replace"))


def ignored_docs(home: str, found: list[str], reader: FileReader) -> list[Diagnostic]:
    """AGENTS files Codex never sends, as `load_codex` reads them (`agent-ignores-file`).

    The global folder ($CODEX_HOME): a blank file is passed over; a non-blank
    AGENTS.override.md hides AGENTS.md. Project docs, in each folder holding a found
    AGENTS.override.md or AGENTS.md (wherever Codex starts, it reads one file per folder):
    the first of AGENTS.override.md, AGENTS.md and the configured fallback names that is a
    file hides the others, even when it is blank; a blank one is sent as nothing; and with
    `project_doc_max_bytes = 0` no project doc is read at all. Not reported: a doc Codex
    cannot read (its source says every project doc is then dropped; no scenario checks it)."""
    folder = codex_home(home)
    config = read_config(folder)
    out: list[Diagnostic] = []
    override, default = (posixpath.join(folder, n) for n in FILE_NAMES)
    override_blank = _blank(reader, override)
    default_blank = _blank(reader, default)
    if override_blank is True:
        out.append(ignores_file(override, "Codex does not send this file: it is blank, so "
                                          "Codex reads AGENTS.md beside it instead"))
    if override_blank is False and default_blank is not None:
        out.append(ignores_file(default, "Codex does not read this file: AGENTS.override.md "
                                         "beside it is read instead"))
    elif default_blank is True:
        out.append(ignores_file(default, "Codex does not send this file: it is blank"))
    config_path = posixpath.join(folder, CONFIG_NAME)
    names = config.candidate_names()
    folders = [dirname(p) for p in found if posixpath.basename(p) in FILE_NAMES]
    for directory in dict.fromkeys(folders):
        if directory == folder:
            continue
        present = [n for n in names if doc_found(posixpath.join(directory, n))]
        if not present:
            continue
        if config.max_bytes == 0:
            out += [ignores_file(posixpath.join(directory, n),
                                 "Codex does not read project docs: project_doc_max_bytes is "
                                 f"0 in {config_path}") for n in present]
            continue
        hit, *hidden = present
        hit_path = posixpath.join(directory, hit)
        hit_blank = _blank(reader, hit_path)
        if hit_blank:
            out.append(ignores_file(hit_path, "Codex does not send this file: it is blank"
                                    + (" (and still hides " + ", ".join(hidden) + ")"
                                       if hidden else "")))
        for name in hidden:
            out.append(ignores_file(
                posixpath.join(directory, name),
                f"Codex does not read this file: it reads one file per folder, and {hit} "
                f"comes first{' (even blank)' if hit_blank else ''}",
                "Codex's order: " + ", ".join(names)))
    return out


class CodexAgent(WithoutReferences, MemoryAgent):
    id = "codex"
    label = "Codex"
    receiver = "Codex"
    nothing_loads = "no AGENTS.md reaches Codex here"
    list_label_width = 9
    expands_home = False

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return FILE_NAMES

    def owns(self, path: str, settings: MemorySettings) -> bool:
        return posixpath.basename(path) in FILE_NAMES

    def claims(self, path: str) -> bool:
        return False  # an AGENTS.md other agents read is theirs to re-read too

    def home_folder(self, home: str) -> str | None:
        return codex_home(home)

    def home_change_matters(self, path: str, home: str) -> bool:
        # Codex writes sessions and logs under its home; only its memory and config matter.
        folder = codex_home(home)
        return (not path.startswith(folder + "/")
                or posixpath.basename(path) in (*FILE_NAMES, CONFIG_NAME))

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        reader = reader or FileReader()
        load = load_codex(folder, settings.home, reader)
        files = ([AgentFile(load.global_path, "global", load.global_text)]
                 if load.global_path else [])
        files += [AgentFile(d.path, "project", d.text,
                            f"cut at {d.sent_bytes:,} of {d.size:,} bytes" if d.cut else None)
                  for d in load.docs]
        listing = [ListedFile(f.path, f.label, len(f.content or ""), f.content) for f in files]
        listing += [ListedFile(p, "lost") for p in load.lost]
        text = load.render()
        headline = (f"**{self.label} memory for {markdown_code(load.cwd)}** — "
                    f"{files_figures(self.label, files, text)}, sent once at start")
        return AgentMemory(
            agent=self.id, cwd=load.cwd, mode="codex", files=files, text=text,
            diagnostics=_config_diagnostics(load) + cut_diagnostics(load, reader),
            headline=headline, listing=listing,
            details={"budget": load.budget, "lost": load.lost, "shadowed": load.shadowed,
                     "skipped": load.skipped, "failed": load.failed,
                     "configError": load.config_error, "untrusted": load.untrusted},
            payloads=[text] if text else [])

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        check = WorkspaceCheck(found=found)
        check.diagnostics = budget_diagnostics(settings.home, roots, found, reader)
        return check

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        return None  # Codex reads nothing later

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        """Hidden, blank and budget-less docs (`ignored_docs`): per folder, so `roots` is
        not needed (Codex may start in any folder)."""
        return ignored_docs(settings.home, found, reader)

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """What Codex sends starting in the folder, then the files it reads only when it
        starts in a subfolder."""
        rows = self.load(folder, settings, reader).files
        listed = {f.path for f in rows}
        for path in check.found:
            if path not in listed and folder_for(path) == folder:
                rows.append(AgentFile(path, "nested", reader.read(path).content,
                                      f"read when {self.label} starts in "
                                      f"{posixpath.relpath(dirname(path), folder)}/"))
        return rows

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        return []  # Codex reads nothing later

    def section_starts(self, path: str) -> list[str]:
        return []  # Codex does not name the files it sends

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {"content": content, "files": [f.path for f in memory.files],
                **memory.details}
