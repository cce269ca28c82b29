"""VS Code's own chat agent (VS Code 1.139 with its bundled GitHub Copilot Chat 0.67, agent
mode) as a `MemoryAgent`: read from their sources, and checked against the real chat in
code-server with a recording model (scripts/vscode/chat-oracle.sh; docs/reference.md, "VS Code
chat"). Which files load and how they are framed: `discovery`; the settings that decide it:
`settings`.

The working folder is taken as the workspace folder VS Code has open (inside its `.github`,
`.claude` or `.vscode` folder: the folder above); a target file is taken
as a file attached to the request (what `applyTo` patterns are matched against). Nothing
loads later in a session: VS Code computes the instructions once per request.
"""

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
from memlens.agents.vscode_chat.discovery import (
    COPILOT_INSTRUCTIONS,
    INSTRUCTIONS_SUFFIX,
    ChatLoad,
    is_instruction_file,
    load_chat,
    render_attachment,
)
from memlens.agents.vscode_chat.globs import applies, parts_of
from memlens.agents.vscode_chat.settings import (
    USE_AGENTS_MD,
    USE_NESTED_AGENTS_MD,
    user_settings_file,
)
from memlens.agents.vscode_chat.walkdiags import walk_diagnostics
from memlens.files.fsread import FileReader
from memlens.files.globs import budget_diagnostic, skipped_globs
from memlens.files.output import markdown_code
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic

FILE_NAMES = (COPILOT_INSTRUCTIONS,)
SETTINGS_FILE = ".vscode/settings.json"


CONFIG_FOLDERS = (".github", ".claude", ".vscode")


def workspace_of(folder: str) -> str:
    """The workspace folder VS Code has open, for a folder Memory Lens asks about: the folder
    itself, except inside a `.github`, `.claude` or `.vscode` folder (the instructions' own
    folders), where it is the folder holding that one."""
    parts = folder.split("/")
    for index, part in enumerate(parts):
        if part in CONFIG_FOLDERS and index > 0:
            return "/".join(parts[:index]) or "/"
    return folder


def _trusted(settings: MemorySettings) -> bool:
    """Whether the workspace's VS Code settings are read: not in the editor's Restricted Mode,
    not with `--untrusted` (or a client's `folderTrust` saying no) — docs/security.md."""
    return settings.editor_trusted is not False and settings.trusted is not False


def _settings_diagnostics(load: ChatLoad) -> list[Diagnostic]:
    out = []
    for problem in load.settings.problems:
        path, _, why = problem.partition(": ")
        out.append(Diagnostic(path=path, line=1, col=1, end_line=1, end_col=1,
                              severity="warning", code="agent-config-invalid",
                              message=f"VS Code cannot read these settings ({why}): its chat "
                                      "uses the defaults for what this file sets"))
    return out


def _glob_diagnostics(load: ChatLoad) -> list[Diagnostic]:
    """`glob-budget-exceeded` on an instruction file with more `applyTo` parts than are
    matched (`memlens.files.globs`)."""
    out = []
    for item in load.instructions:
        parts = parts_of(item.pattern) if item.pattern else []
        skipped = skipped_globs(parts)
        if skipped:
            out.append(budget_diagnostic(item.path, 1, "applyTo patterns", skipped=skipped,
                                         total=len(parts)))
    return out


def _frontmatter_diagnostics(load: ChatLoad) -> list[Diagnostic]:
    """An instruction file VS Code reads no frontmatter from because it starts with a
    byte-order mark: its `applyTo` and `description` are lost (checked in the real chat)."""
    out = []
    for item in load.instructions:
        if item.bom_hides_header:
            out.append(ignores_file(
                item.path, "VS Code's chat reads no applyTo or description from this file: it "
                           "starts with a byte-order mark before its `---` line",
                "it is only listed, never attached; save the file as UTF-8 without BOM"))
    return out


def _reads_on(pattern: str) -> Callable[[str], bool]:
    """Whether attaching a file (absolute path) attaches the instruction file whose `applyTo`
    is `pattern`."""
    return lambda target: applies(pattern, [target]) is not None


class AttachSession:
    """What attaching files to requests adds: the instruction files whose `applyTo` matches
    each (VS Code puts them first in the request's instructions block), each file once."""

    def __init__(self, start: ChatLoad, settings: MemorySettings, reader: FileReader) -> None:
        self.start = start
        self.settings = settings
        self.reader = reader
        self.sent = {a.path for a in start.attached}

    def load_for(self, path: str) -> JitLoad:
        load = load_chat(self.start.workspace, self.settings.home, self.reader,
                         attached=[path], trusted=_trusted(self.settings),
                         settings=self.start.settings)
        added = [a for a in load.attached if a.kind == "applying" and a.path not in self.sent]
        self.sent.update(a.path for a in added)
        payloads = [render_attachment(a.path, a.text) for a in added]
        return JitLoad(target=path,
                       files=[JitFile(a.path, a.text, a.note or "applyTo matches")
                              for a in added],
                       context="".join(payloads), payloads=payloads)


class VsCodeChatAgent(WithoutReferences, MemoryAgent):
    id = "vscode-chat"
    label = "VS Code chat"
    receiver = "VS Code's chat agent"
    nothing_loads = "no instruction file reaches VS Code's chat here"
    list_label_width = 20
    expands_home = False

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return FILE_NAMES

    def owns(self, path: str, settings: MemorySettings) -> bool:
        name = posixpath.basename(path)
        return name == COPILOT_INSTRUCTIONS or name.endswith(INSTRUCTIONS_SUFFIX)

    def claims(self, path: str) -> bool:
        return False  # the files it reads are other agents' too

    def why_not_read(self, path: str, folder: str, settings: MemorySettings) -> str | None:
        if posixpath.basename(path) == "AGENTS.md" and posixpath.dirname(path).startswith(
                folder.rstrip("/") + "/"):
            return (f"not read: {self.label} reads a subfolder's AGENTS.md only with "
                    f"{USE_NESTED_AGENTS_MD} (and {USE_AGENTS_MD}) on")
        return None

    def home_folder(self, home: str) -> str | None:
        return posixpath.join(home, ".copilot")  # ~/.claude is Claude Code's, watched already

    def home_change_matters(self, path: str, home: str) -> bool:
        """Under ~/.copilot only its instructions matter (Copilot CLI keeps its state there)."""
        folder = posixpath.join(home, ".copilot")
        if not path.startswith(folder + "/"):
            return True
        return (path == posixpath.join(folder, COPILOT_INSTRUCTIONS)
                or path.startswith(posixpath.join(folder, "instructions") + "/"))

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        reader = reader or FileReader()
        load = load_chat(workspace_of(folder), settings.home, reader,
                         attached=[target] if target else None, trusted=_trusted(settings))
        files = [AgentFile(a.path, a.kind, a.text, a.note) for a in load.attached]
        listing = [ListedFile(a.path, a.kind, len(a.text), a.text) for a in load.attached]
        attached = {a.path for a in load.attached}
        listing += [ListedFile(i.path, "listed") for i in load.instructions
                    if i.path not in attached]
        listing += [ListedFile(p, "listed (nested)") for p in load.nested_agents]
        text = load.render()
        payloads = load.index_parts() + load.attachments()
        headline = (f"**{self.label} instructions for {markdown_code(load.workspace)}** — "
                    f"{files_figures(self.label, files, text)}, attached to each request "
                    "(read from VS Code's sources)")
        return AgentMemory(
            agent=self.id, cwd=load.workspace, mode="vscode-chat", files=files, text=text,
            diagnostics=(_settings_diagnostics(load) + _frontmatter_diagnostics(load)
                         + walk_diagnostics(load, reader)),
            headline=headline, listing=listing,
            details={
                "settings": load.settings.changed(),
                "listed": [i.path for i in load.instructions],
                "nestedAgents": load.nested_agents,
                "leftOut": [{"path": p, "why": w} for p, w in load.left_out],
                "switchedOff": [{"path": p, "setting": s} for p, s in load.disabled],
                "notWalked": [n.wire() for n in load.not_walked],
                "attachedTo": [target] if target else [],
            },
            payloads=payloads)

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        check = WorkspaceCheck(found=found)
        for root in roots:
            load = load_chat(root, settings.home, reader, trusted=_trusted(settings))
            check.diagnostics += (_settings_diagnostics(load) + _frontmatter_diagnostics(load)
                                  + walk_diagnostics(load, reader)
                                  + _glob_diagnostics(load))
            check.sources += [a.path for a in load.attached]
            check.sources += [i.path for i in load.instructions]
            check.watched.add(posixpath.join(load.workspace, SETTINGS_FILE))
        check.watched.add(user_settings_file(settings.home))
        check.sources = list(dict.fromkeys(check.sources))
        return check

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        """Attaching a file to a request (VS Code does nothing on a tool's read): the
        instruction files whose `applyTo` it matches, each once."""
        return AttachSession(load_chat(workspace_of(folder), settings.home, reader,
                                       trusted=_trusted(settings)), settings, reader)

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        """Files a setting switches off, links to a file already attached, blank files and
        files whose text another file already sent, in each workspace folder."""
        out: list[Diagnostic] = []
        for root in roots:
            load = load_chat(root, settings.home, reader, trusted=_trusted(settings))
            for path, setting in load.disabled:
                if path.endswith(INSTRUCTIONS_SUFFIX) or "/.claude/rules/" in path:
                    continue  # still listed for the model to read
                out.append(ignores_file(path, f"VS Code's chat does not read this file: "
                                              f"{setting} is off"))
            for path, why in load.left_out:
                if why != "cannot be read":
                    out.append(ignores_file(path, f"VS Code's chat does not send this file: "
                                                  f"{why}"))
        return out

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """What is attached to every request (no file attached), then the instruction files
        only listed for the model, each with its `applyTo`."""
        load = load_chat(folder, settings.home, reader, trusted=_trusted(settings))
        rows = [AgentFile(a.path, a.kind, a.text, a.note) for a in load.attached]
        attached = {a.path for a in load.attached}
        for item in load.instructions:
            if item.path in attached:
                continue
            note = (f"attached when a file matching {item.pattern} is" if item.pattern
                    else "listed; the model reads it when it sees fit")
            rows.append(AgentFile(item.path, "instructions", item.content, note,
                                  when="on-read" if item.pattern else "on-demand"))
        return rows

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        """The instruction files not attached to every request: attached with a file their
        `applyTo` matches ("on-read", what the matrix and the notices call it), or only
        listed for the model ("on-demand")."""
        load = load_chat(memory.cwd, settings.home, reader, trusted=_trusted(settings))
        attached = {a.path for a in load.attached}
        return [AgentFile(i.path, "instructions", i.content,
                          f"attached when a file matching {i.pattern} is" if i.pattern
                          else "listed; the model reads it when it sees fit",
                          when="on-read" if i.pattern else "on-demand",
                          reads_on=_reads_on(i.pattern) if i.pattern else None)
                for i in load.instructions if i.path not in attached]

    def section_starts(self, path: str) -> list[str]:
        return [render_attachment(path, "").split("\n", 1)[0]]

    def section_end(self, path: str) -> str | None:
        return "</attachment>"

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {"content": content, "files": [f.path for f in memory.files], **memory.details}


__all__ = ["VsCodeChatAgent", "is_instruction_file"]
