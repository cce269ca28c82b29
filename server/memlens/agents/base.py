"""The one shape every coding agent has in Memory Lens: `MemoryAgent`.

An agent owns some memory-file names, writes references (`@path`) in them its own way, loads a
folder's memory in its own order, may add memory just in time when a tool touches a path, and
is named in the text Memory Lens sends. The adapters (index, CLI, language server) ask these
questions through this interface and never branch on which agent it is.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname, resolve
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.text.references import ImportToken, find_references, relative_import


@dataclass
class AgentFile:
    """One file an agent reads (or lists) working in a folder."""

    path: str
    label: str  # its place in the load: a tier, a kind ("include", "rule"), "active"
    content: str | None  # None: listed but not readable
    note: str | None = None  # why it applies, e.g. "applies to **/*.py"
    # "startup"; "on-read": it loads when a tool touches a path; "on-demand": the model reads
    # it when it decides to; "listed": a read lists it without sending it (Claude Code's
    # skills found on a read: their name and description), `note` saying which read.
    when: str = "startup"
    # A heading the editor's Memory view groups the row under (Claude Code's topic files by
    # type: "Memories · feedback"), and the row's text there (the heading says the rest).
    group: str | None = None
    group_note: str | None = None
    # For a file that loads on read only when the path read matches its globs: whether the
    # read of this (absolute) path loads it. None: any read in the folder it belongs to does.
    reads_on: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)
    # Sent on read even when blank, by an agent that skips blank files otherwise
    # (`MemoryAgent.skips_blank_files`: Copilot CLI's instruction files).
    sent_blank: bool = False
    # Listed on read: what the listing says of it ("its name and description are listed; the
    # skill is sent when used"); with `offered` false, the read finds it but leaves it out,
    # and `why` says why (it is then not read at all).
    why: str | None = None
    offered: bool = True

    def described(self) -> str | None:
        """Its note with, for a file listed on read, what the listing says of it: the row's
        text in the editor's Memory view and `show --agent --json`."""
        if self.when != "listed" or self.why is None:
            return self.note
        return self.why if not self.offered else f"listed {self.note}: {self.why}"


@dataclass
class ListedFile:
    """A row of `memlens list --agent A`: `chars` None when the agent's listing shows no
    size."""

    path: str
    label: str
    chars: int | None = None
    text: str | None = None  # what the agent reads of it (its tokens column), when it reads it


@dataclass
class AgentMemory:
    """What an agent puts in context working in `cwd` (and, given a target file, on it)."""

    agent: str  # the agent's id
    cwd: str
    mode: str  # how it loaded: "jit"/"classic" (Gemini CLI), "claude", "nearest" (AGENTS.md)
    files: list[AgentFile]  # what reaches the context, in load order
    text: str  # the context as the agent renders it
    diagnostics: list[Diagnostic]
    headline: str  # one Markdown line saying what loads (the line-1 hover's title)
    listing: list[ListedFile] = field(default_factory=list)  # what `memlens list` shows
    # The agent's own facts for `memlens show --json` (rules scoped by `paths:`, the AGENTS.md
    # files shadowed), as JSON values.
    details: dict[str, object] = field(default_factory=dict)
    # The exact strings the agent puts in its first request (`payloads`:
    # docs/reference.md "Which agent, which version"), each of which appears verbatim in what it
    # sends; [] when it sends no memory.
    payloads: list[str] = field(default_factory=list)


@dataclass
class JitFile:
    """A file an agent adds just in time, and why."""

    path: str
    content: str
    reason: str


@dataclass
class JitLoad:
    """What touching `target` added (each file at most once per session)."""

    target: str
    files: list[JitFile]
    context: str  # what the agent appends to the tool's output ('' when nothing is appended)
    # The exact strings it adds to its next request (each verbatim in it); [] when nothing.
    payloads: list[str] = field(default_factory=list)


class AgentJitSession(Protocol):
    """An agent's just-in-time loading over one working session."""

    def load_for(self, path: str) -> JitLoad:
        """What a tool touching `path` adds now; marks it loaded."""
        ...


@dataclass
class WorkspaceCheck:
    """An agent's memory across the workspace, checked (the index keeps one per agent)."""

    found: list[str] = field(default_factory=list)  # its own files the workspace walk found
    folders: list[str] = field(default_factory=list)  # folders it works in besides the roots
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # every file it reads as memory here
    watched: set[str] = field(default_factory=set)  # a change to any of these re-checks

    @property
    def has_memory(self) -> bool:
        return bool(self.folders or self.sources)


class MemoryAgent(Protocol):
    """A coding agent whose memory Memory Lens shows."""

    id: str  # `--agent` and the wire's name for it: "gemini", "claude", "agents"
    label: str  # how messages name it: "Claude Code"
    receiver: str  # who "would receive more" than a truncated preview
    nothing_loads: str  # `memlens show` with nothing to show
    list_label_width: int  # the label column of `memlens list`
    has_references: bool  # False: its files hold no `@path` references at all
    # True: a file of only white space (and comments it strips) is never sent on read.
    skips_blank_files: bool = False
    expands_home: bool  # `@~/x` names HOME/x
    # True: the workspace index renders its memory itself, file by file with the `@import`s
    # each inlines, and each folder's start-up load (workspace/index_agents.py's
    # `RenderedGeminiMemory`: Gemini CLI's). The editor's hovers, links, renames, JIT notices
    # and Memory view read its files from the index; every other agent's come through
    # `check_workspace`, `view_files` and `jit_session`.
    rendered_by_index: bool = False

    # --- which files -----------------------------------------------------------------------
    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        """The memory-file names it reads in any folder (searched for in the workspace)."""
        ...

    def owns(self, path: str, settings: MemorySettings) -> bool:
        """`path` is one of its memory files by name."""
        ...

    def claims(self, path: str) -> bool:
        """A change to `path` concerns this agent's memory alone (no other agent re-reads)."""
        ...

    def home_folder(self, home: str) -> str | None:
        """Where it keeps memory in HOME (watched for changes made by other tools)."""
        ...

    def home_change_matters(self, path: str, home: str) -> bool:
        """A change under its home folder that can change its memory."""
        ...

    # --- references ------------------------------------------------------------------------
    def find_references(self, text: str) -> list[ImportToken]:
        ...

    def resolve_reference(self, source: str, written: str, home: str) -> str:
        """The file `@written` in `source` names."""
        ...

    def rewrite_reference(self, written: str, from_dir: str, target: str, home: str) -> str:
        """`@written` made to name `target` from `from_dir`, in the form it was written."""
        ...

    # --- loading ---------------------------------------------------------------------------
    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        """What it loads working in `folder`; with `target`, working on that file."""
        ...

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        """Its memory for the workspace folders `roots`, given its files the walk `found`."""
        ...

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        """A JIT session for work in `folder` (None: it loads nothing just in time here)."""
        ...

    def read_tool_target(self, path: str, settings: MemorySettings) -> str | None:
        """Where the agent's read tool looks for memory after reading `path` (None: the read
        fails before any memory is discovered: a missing file, a folder)."""
        return path if os.path.isfile(path) else None

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        """Memory files this agent will not read in the workspace folders `roots`, and why:
        one `agent-ignores-file` warning at line 1, column 1 of each (`ignores_file`).

        `found`: every memory file the workspace walk found, whatever agent's name it has
        (`agents.workspace_file_names`); each agent picks the names that concern it (Claude
        Code reports AGENTS.md files) and may look further where the walk does not (ignored
        folders, rules folders, its home folder). Only what the agent never reads, from any
        folder it may start in, is reported; files that load later (on read) are not
        ignored, and an untrusted folder's files have their own notice."""
        ...

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """Its files the Memory view lists for a workspace folder (`folder_for`: the
        workspace folder holding a path)."""
        ...

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        """The files it loads later in the session `memory` starts, when a tool touches a path
        (`when` "on-read"), given its workspace check for `memory.cwd`."""
        ...

    def why_not_read(self, path: str, folder: str, settings: MemorySettings) -> str | None:
        """Why it never reads `path` working in `folder`, when it has a reason of its own to
        say (a setting that would make it read the file); None: the views' general answer."""
        return None

    def walk_for_views(self, folder: str) -> None:
        """Walk now what its views of `folder` walk (`on_read_files`: the folders whose read
        brings memory in), so that a run keeping its walks (files.tree.kept_walks: the
        language server's build, for the matrix) holds them. Most agents' checks walk all
        they need already: nothing."""

    # --- the strings it sends ---------------------------------------------------------------
    def sends_comment(self, text: str, start: int, end: int) -> bool:
        """The HTML comment `text[start:end]` of one of its files reaches its context (Gemini
        CLI and Codex send comments verbatim; Claude Code strips comment blocks)."""
        return True

    def section_starts(self, path: str) -> list[str]:
        """The lines that open `path`'s text in its rendered context."""
        ...

    def section_end(self, path: str) -> str | None:
        """The line that closes `path`'s text (None: the next section or the end does)."""
        ...

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        """The agent's own facts in `memlens show --agent A --json` (AgentShowResult's extra
        keys), with `content` the preview."""
        ...


IGNORES_FILE = "agent-ignores-file"


def files_figures(label: str, files: list[AgentFile], sent: str) -> str:
    """"2 file(s), 201 characters": what the hover's table totals (the files' texts), then
    what the agent sends when its own wrapper text (headings, a reminder) makes it differ:
    "(661 sent, with Claude Code's wrapper text)"."""
    chars = sum(len(f.content) for f in files if f.content is not None)
    said = f"{len(files)} file(s), {chars:,} characters"
    if sent and len(sent) != chars:
        said += f" ({len(sent):,} sent, with {label}'s wrapper text)"
    return said


def defers_to(path: str, name: str, reader: FileReader) -> bool:
    """The memory file `path` stands for the file `name` beside it: a link to it (langfuse's
    `CLAUDE.md -> AGENTS.md`) or a file that includes it (a CLAUDE.md that says `See
    @AGENTS.md`, written for Claude Code). Another agent that reads `name` there instead loses
    nothing by passing over `path`, and an `agent-ignores-file` about it is noise
    (docs/reference.md "agent-ignores-file")."""
    beside = posixpath.join(posixpath.dirname(path), name)
    try:
        if os.path.samefile(path, beside):
            return True
    except OSError:
        return False
    read = reader.read(path)
    if not read.ok or not read.content or "@" not in read.content:
        return False
    return any(not token.in_code and posixpath.normpath(token.path) == name
               for token in find_references(read.content))


def ignores_file(path: str, message: str, detail: str | None = None) -> Diagnostic:
    """An `agent-ignores-file` warning at line 1, column 1 of `path`."""
    return Diagnostic(path=path, line=1, col=1, end_line=1, end_col=1, severity="warning",
                      code=IGNORES_FILE, message=message, detail=detail)


class WithoutReferences:
    """The reference rules of an agent whose files hold no `@path` references (AGENTS.md,
    Codex): a path written in them is only ever renamed as a relative path."""

    has_references = False

    def find_references(self, text: str) -> list[ImportToken]:
        return []

    def resolve_reference(self, source: str, written: str, home: str) -> str:
        return resolve(dirname(source), written)

    def rewrite_reference(self, written: str, from_dir: str, target: str, home: str) -> str:
        return relative_import(from_dir, target)
