"""The one answer to "when does agent A read file F working in folder D, and why"
(docs/reference.md "At a glance: the agent matrix and `memlens report`").

`AgentReading` asks the agent once per (agent, folder) — its start-up load, what it loads when
a tool reads a path (`on_read_files`), what it ignores (`ignored_files`), its workspace check —
and then answers per file: at start-up, on read (and what triggers it), on demand, listed on
read (a skill whose name and description a read lists; the skill is sent when used), or not
read; why, in a short sentence; and where it is cut. The matrix's cells, `show --agent --json`'s
rows and the report all render this answer, so they cannot disagree; `agent_check` is
`memlens check`'s per-agent diagnostics, which the report lists too."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Literal

from memlens.agents.base import AgentFile, MemoryAgent, WorkspaceCheck
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.agents.gemini.imports import Outcome
from memlens.files.fsread import FileReader
from memlens.files.walk import walk
from memlens.model import MemorySettings
from memlens.protocol.matrix import CellState, MatrixCell
from memlens.protocol.memory import Diagnostic
from memlens.workspace.queries import (
    agent_hidden_check,
    check,
    profile_diagnostics,
    truncate,
    workspace_check,
    workspace_files_named,
)

if TYPE_CHECKING:
    from memlens.protocol.memory import AgentListResult, AgentProfileInfo, AgentShowResult

# Diagnostics that say an agent sends only part of a file.
CUT_CODES = ("payload-budget-exceeded", "memory-index-truncated", "context-truncated")
# What an agent's own load labels mean, for a reader of the matrix.
LABELS = {"global": "global memory", "project": "project memory", "include": "included",
          "active": "the AGENTS.md in force", "auto": "the auto-memory index",
          "user": "user memory", "userRule": "user rule", "rule": "rule", "local":
          "private project memory", "managed": "managed policy", "extension": "extension",
          "userProjectMemory": "private project memory"}
WORDS = {"startup": "at start-up", "on-read": "on read", "on-demand": "on demand",
         "listed": "listed on read", "not-read": "not read"}
BLANK = "not sent (blank)"
NO_MATCH = "on read, but no file matches today"
# Folders no read of a source file is looked for in (what the glob check walks past), and
# how many files it looks at before it stops (a rule past it counts as matching).
_SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules"})
_MAX_FILES = 200_000
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def is_blank(agent: MemoryAgent, text: str | None) -> bool:
    """`text` sends nothing to `agent`: only white space, and the HTML comments it strips."""
    if text is None:
        return False
    kept = _COMMENT.sub(lambda m: m.group(0) if agent.sends_comment(
        text, m.start(), m.end()) else "", text)
    return not kept.strip()


def folder_files(folder: str) -> Iterable[str]:
    """The files under `folder` a tool may read, for the question "does any match a rule's
    globs today" (VCS and dependency folders skipped; bounded)."""
    count = 0
    for here, dirs, names in walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED)
        for name in names:
            yield posixpath.join(here, name)
            count += 1
            if count >= _MAX_FILES:
                return


class AgentReading:
    """One agent's reading of a folder: every file's state, why, trigger and cut."""

    def __init__(self, agent: MemoryAgent, folder: str, settings: MemorySettings,
                 found: list[str], reader: FileReader, *,
                 files: Callable[[str], Iterable[str]] = folder_files):
        self.agent, self.settings, self.folder = agent, settings, folder
        self.memory = agent.load(folder, settings, reader)
        names = set(agent.file_names(settings))
        own = [p for p in found if posixpath.basename(p) in names or agent.owns(p, settings)]
        self.check: WorkspaceCheck = workspace_check(agent, settings, [folder], own, reader)
        later = agent.on_read_files(self.memory, settings, reader, self.check)
        # What a read finds but leaves out (a skill it does not offer): not read, and why.
        self.not_offered = {f.path: f for f in later if not f.offered}
        later = [f for f in later if f.offered]
        # What loads on read loads once a tool reads a file; a file that only white space (or
        # comments it strips) fills is never sent (its JIT session skips it).
        self.blank = {f.path for f in later if agent.skips_blank_files and not f.sent_blank
                      and f.when == "on-read" and is_blank(agent, f.content)}
        self.later = [f for f in later if f.path not in self.blank]
        self.unmatched = self._unmatched(files)
        self.ignored = agent.ignored_files(settings, [folder], found, reader)
        self.diagnostics = [*self.memory.diagnostics, *self.check.diagnostics]
        self.sources = set(self.check.sources)
        # The agent whose memory the index renders (Gemini CLI) inlines its imports: each
        # imported file, by the memory file it came in.
        self.imports: dict[str, str] = {}
        self._real: dict[str, str] | None = None  # each file read, by its real path
        # And where it is inlined: the file holding the `@import` and the import's offset
        # there (the order of what the agent receives: workspace/conflicts.py).
        self.import_sites: dict[str, tuple[str, int]] = {}
        if agent.rendered_by_index:
            for loaded in MemoryEngine(settings, reader).load(folder).files:
                for event in loaded.events:
                    if event.outcome is Outcome.IMPORTED and loaded.content is not None:
                        self.imports.setdefault(event.target, loaded.path)
                        self.import_sites.setdefault(
                            event.target, (event.file or loaded.path, event.token.start))

    def _alias(self, path: str) -> str | None:
        """The file the agent reads under another name that is the same file as `path`
        (one is a symbolic link to the other), if any."""
        if self._real is None:
            self._real = {}
            for f in self.files():
                self._real.setdefault(os.path.realpath(f.path), f.path)
            for imported in self.imports:
                self._real.setdefault(os.path.realpath(imported), imported)
        alias = self._real.get(os.path.realpath(path))
        return alias if alias != path else None

    def _unmatched(self, files: Callable[[str], Iterable[str]]) -> set[str]:
        """The on-read files whose trigger (`AgentFile.reads_on`) no file under the folder
        matches today: one walk, stopped once every trigger has matched."""
        waiting = {f.path: f.reads_on for f in self.later
                   if f.when == "on-read" and f.reads_on is not None}
        if not waiting:
            return set()
        for path in files(self.folder):
            for source, reads_on in list(waiting.items()):
                if source != path and reads_on(path):
                    del waiting[source]
            if not waiting:
                break
        return set(waiting)

    def files(self) -> list[AgentFile]:
        """What it reads: at start-up, then later (on read, on demand)."""
        return [*self.memory.files, *self.later]

    def reads_anything(self) -> bool:
        return bool(self.memory.files or self.later)

    def when(self, f: AgentFile) -> Literal["startup", "on-read", "on-demand", "listed"]:
        """When a file of `files()` loads (or, "listed", is listed)."""
        if f in self.memory.files:
            return "startup"
        if f.when == "listed":
            return "listed"
        return "on-demand" if f.when == "on-demand" else "on-read"

    def answer(self, path: str) -> MatrixCell:
        """When the agent reads `path` working in the folder, why, and where it is cut."""
        cut = next((f"cut at line {d.line}" for d in self.diagnostics
                    if d.path == path and d.code in CUT_CODES), None)

        def cell(state: CellState, why: str, trigger: str | None = None,
                 foreign: bool = False) -> MatrixCell:
            return MatrixCell(state=state, word=WORDS[state], why=why, trigger=trigger,
                              cut=cut if state != "not-read" else None, foreign=foreign)

        startup = next((f for f in self.memory.files if f.path == path), None)
        if startup is not None:
            return cell("startup", startup.note or LABELS.get(startup.label, startup.label))
        if path in self.imports:
            return cell("startup", f"imported into {posixpath.basename(self.imports[path])}")
        later = next((f for f in self.later if f.path == path), None)
        if later is not None:
            trigger = later.note or later.label
            if later.when == "listed":
                return cell("listed", later.why or trigger, trigger)
            if later.when == "on-demand":
                return cell("on-demand", trigger)
            if path in self.unmatched:
                return cell("on-read", NO_MATCH, trigger)
            return cell("on-read", trigger, trigger)
        unlisted = self.not_offered.get(path)
        if unlisted is not None:
            return cell("not-read", unlisted.why or "not offered")
        alias = self._alias(path)
        if alias is not None:
            # One file with two names (`CLAUDE.md -> AGENTS.md`): what the agent reads under
            # the other name, it reads of this one.
            same = self.answer(alias)
            shown = (posixpath.relpath(alias, self.folder)
                     if alias.startswith(self.folder.rstrip("/") + "/") else alias)
            return same.model_copy(update={
                "why": f"the same file as {shown} (a symbolic link): {same.why}"})
        ignored = next((d for d in self.ignored if d.path == path), None)
        if ignored is not None:
            return cell("not-read", ignored.message)
        if self.memory.details.get("trusted") is False and self.agent.owns(path, self.settings):
            return cell("not-read", f"the folder is not trusted: {self.agent.label} reads no "
                                    "project memory here until it is")
        if path in self.blank or (self.agent.skips_blank_files and is_blank(
                self.agent, _text(path)) and (path in self.sources
                                              or self.agent.owns(path, self.settings))):
            return cell("not-read", BLANK)
        if path in self.sources:
            return cell("not-read", "read only when it works in another folder")
        own_reason = self.agent.why_not_read(path, self.folder, self.settings)
        if own_reason is not None:
            return cell("not-read", own_reason)
        below = posixpath.dirname(path)
        if self.agent.owns(path, self.settings) and below.startswith(
                self.folder.rstrip("/") + "/"):
            # Its own kind of file in a subfolder that nothing loads on read: "not its file"
            # would be untrue (Codex's nested AGENTS.md, VS Code's chat's).
            rel = posixpath.relpath(below, self.folder)
            return cell("not-read", f"not read working here: {self.agent.label} reads "
                                    f"{posixpath.basename(path)} only in the folder it starts "
                                    f"in and above; started in {rel}/ it reads this one")
        return cell("not-read", "not its file", foreign=True)


def _text(path: str) -> str | None:
    return FileReader().read(path).content


def named(found: list[str], names: Iterable[str]) -> list[str]:
    """The files of `found` (a walk's, every agent's names) with one of `names`, name by name
    as a walk for those names alone lists them (a relative name matches the path's end)."""
    out: list[str] = []
    for name in names:
        tail = "/" + posixpath.normpath(name)
        out += [p for p in found if p.endswith(tail)]
    return list(dict.fromkeys(out))


def static_settings(settings: MemorySettings) -> MemorySettings:
    """The settings a check runs with: memory files are checked whatever Gemini CLI's folder
    trust (static analysis), unless the user said the folder is not trusted."""
    if settings.trusted is False:
        return settings
    return settings.model_copy(update={"trusted": True})


def agent_check(agent: MemoryAgent, root: str, settings: MemorySettings, *, profile: bool,
                found: list[str] | None = None,
                rendered: Callable[[Collection[str] | None], list[Diagnostic]] | None = None,
                reader: FileReader | None = None,
                receivers: Collection[str] | None = None) -> list[Diagnostic]:
    """`memlens check`'s diagnostics for one agent working in the folder `root` (the settings
    `static_settings` gives): with `profile`, what its profile says (`agent-ignores-file`,
    `agent-version-unverified`); then its own checks (its skills' among them) and the
    hidden-content findings in what it reads (Gemini CLI's check of the folder covers every
    agent's). `found`: every agent's memory files under `root`, when the caller has walked
    for them already. `rendered`: the
    check of the agent the index renders, as the language server's index holds it (equal to
    `queries.check`'s: tests/test_matrix_index.py). `reader`: the files' text (the disk's by
    default). `receivers`: the agents a hidden-content finding names as receiving a file
    (the agents shown in `root`, this one among them; None: this agent alone, and every
    agent in Gemini CLI's check)."""
    from memlens.agents import agent_by_id, workspace_file_names

    reader = reader or FileReader()
    if found is None:
        names = workspace_file_names(settings)
        by_name = workspace_files_named(MemoryEngine(settings, reader), [root], names)
        found = [p for n in names for p in by_name[n]]
    said: list[Diagnostic] = []
    if profile:
        said += profile_diagnostics(settings, [root], found, reader, only=agent.id)
    if agent.rendered_by_index:  # Gemini CLI's own check: its files, imports and folders
        return said + (rendered(receivers) if rendered is not None
                       else check(root, settings, reader=reader, receivers=receivers))

    def checked(other: MemoryAgent) -> WorkspaceCheck:
        return workspace_check(other, settings, [root], named(found, other.file_names(settings)),
                               reader)

    from memlens.workspace.skills import skill_diagnostics

    others = [agent_by_id(a) for a in receivers or () if a != agent.id]
    # Its own verdicts on its skills (Claude Code's, Codex's): only with its check, as
    # Gemini CLI's are in its own.
    return [*said, *checked(agent).diagnostics, *skill_diagnostics(agent.id, settings, root),
            *agent_hidden_check(agent, checked(agent), reader,
                                [(o, checked(o)) for o in others if not o.rendered_by_index])]


def agent_show(agent: MemoryAgent, cwd: str, settings: MemorySettings,
               profile: AgentProfileInfo) -> AgentShowResult:
    """`memlens show --agent`: what `agent` reads working in `cwd` — at start and later (its
    reading's rows, as the matrix has them) — and the exact strings it sends at start."""
    from memlens.agents import workspace_file_names
    from memlens.protocol.memory import AgentFileRow, AgentShowResult
    from memlens.reports.budgets import context_budget, measure

    reader = FileReader()
    names = workspace_file_names(settings)
    by_name = workspace_files_named(MemoryEngine(settings, reader), [os.path.realpath(cwd)],
                                    names)
    reading = AgentReading(agent, cwd, settings, [p for n in names for p in by_name[n]],
                           reader)
    memory = reading.memory

    def row(f: AgentFile) -> AgentFileRow:
        figures = None if f.content is None else measure(agent.id, f.content)
        when = reading.when(f)
        return AgentFileRow(path=f.path, label=f.label, when=when, note=f.described(),
                            chars=figures.chars if figures else None,
                            bytes=figures.bytes if figures else None,
                            tokens=figures.tokens if figures else None)

    rows = [row(f) for f in reading.files()]
    budget = context_budget(agent.id, [(f.path, f.label, f.content) for f in memory.files])
    content, _ = truncate(memory.text, settings.max_context_chars, agent.receiver)
    facts = {k: v for k, v in agent.show_json(memory, content).items()
             if k not in AgentShowResult.model_fields and k != "fileCount"}
    return AgentShowResult.model_validate({
        **profile.model_dump(), **facts, "cwd": memory.cwd, "mode": memory.mode, "files": rows,
        "file_count": len(memory.files), "content": content, "payloads": memory.payloads,
        "diagnostics": memory.diagnostics, "chars": budget.total.chars,
        "bytes": budget.total.bytes, "tokens": budget.total.tokens,
        "estimator": budget.estimator.label})


def agent_listing(agent: MemoryAgent, folder: str, settings: MemorySettings,
                  reader: FileReader | None = None) -> AgentListResult:
    """What the agent reads working in `folder`, in the order it reads it, each file under the
    agent's own label with its size and the agent's token estimate of what it reads of it:
    `memlens list --agent A --json` and the editor's "List Memory Files" (memlens/list)."""
    from memlens.protocol.memory import AgentListedFile, AgentListResult
    from memlens.reports.budgets import estimate_tokens

    memory = agent.load(folder, settings, reader)
    return AgentListResult(cwd=folder, agent=agent.id, files=[
        AgentListedFile(path=f.path, tier=f.label, chars=f.chars,
                        tokens=None if f.text is None else estimate_tokens(agent.id, f.text))
        for f in memory.listing])
