"""Cursor's rules as a `MemoryAgent`: a convention read from Cursor's public documentation,
never verified (Cursor is closed; no program here shows what it sends).

Memory Lens reads a folder as the workspace Cursor opened:

- at start: the folder's `.cursor/rules` rules with `alwaysApply: true`, its legacy
  `.cursorrules`, and its `AGENTS.md`;
- when a file is referenced (a tool reads it: `on_read_files`, `jit_session`): the rules
  whose `globs` match it, and a subfolder's own `.cursor/rules` (its always rules, its glob
  rules that match) and `AGENTS.md` for a file in that subfolder;
- offered only: rules with a `description` alone (the agent decides to read them) and manual
  rules (only when @-mentioned).

The text shown is each file's Markdown (a rule's body after its frontmatter) under a
`--- path ---` line, in that order: Cursor's own framing and order are not documented.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

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
)
from memlens.agents.cursor.rules import (
    ALWAYS,
    AUTO,
    LEGACY_FILE,
    MANUAL,
    REQUESTED,
    RULE_SUFFIX,
    RULES_DIR,
    CursorRule,
    TreeScan,
    check_globs,
    legacy_beside_rules,
    outside_rules,
    parse_rule,
    rule_files,
    rules_not_a_folder,
    scan_tree,
    shorten,
)
from memlens.files.fsread import FileReader
from memlens.files.globs import MatchBudget
from memlens.files.nodecompat import is_subpath, resolve
from memlens.files.output import markdown_code, markdown_text
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic

AGENTS_FILE = "AGENTS.md"
CONVENTION_NOTE = "a convention from Cursor's docs, not verified"


def heading(path: str) -> str:
    """The line that opens a file's text in the rendered context."""
    return f"--- {path} ---"


def render(files: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f"{heading(path)}\n{text.strip()}" for path, text in files)


def folder_rules(owner: str, reader: FileReader) -> list[CursorRule]:
    """The rules of `owner`'s `.cursor/rules`, read and checked (unreadable ones left out)."""
    out = []
    for path in rule_files(posixpath.join(owner, RULES_DIR)):
        content = reader.read(path).content
        if content is not None:
            out.append(parse_rule(path, content, owner))
    return out


def _note(rule: CursorRule) -> str:
    if rule.kind == AUTO:
        return "auto attached: when a referenced file matches " + shorten(", ".join(rule.globs))
    if rule.kind == REQUESTED:
        return ("agent requested: only offered by its description "
                f"({shorten(rule.description or '')})")
    if rule.kind == MANUAL:
        return "manual: only when @-mentioned"
    return "always applied"


@dataclass
class CursorLoad:
    """What Cursor loads with `cwd` open, by the convention."""

    cwd: str
    rules: list[CursorRule]  # the folder's own rules, every kind
    legacy: tuple[str, str] | None  # `.cursorrules` (path, text)
    agents: tuple[str, str] | None  # AGENTS.md (path, text)

    @property
    def startup(self) -> list[AgentFile]:
        files = [AgentFile(r.path, "always", r.body) for r in self.rules if r.kind == ALWAYS]
        if self.legacy:
            files.append(AgentFile(self.legacy[0], "legacy", self.legacy[1]))
        if self.agents:
            files.append(AgentFile(self.agents[0], "AGENTS.md", self.agents[1]))
        return files

    def of_kind(self, kind: str) -> list[CursorRule]:
        return [r for r in self.rules if r.kind == kind]


def load_cursor(cwd: str, reader: FileReader | None = None) -> CursorLoad:
    reader = reader or FileReader()
    cwd = resolve(cwd)

    def read(name: str) -> tuple[str, str] | None:
        path = posixpath.join(cwd, name)
        content = reader.read(path).content
        return (path, content) if content is not None else None

    return CursorLoad(cwd, folder_rules(cwd, reader), read(LEGACY_FILE), read(AGENTS_FILE))


@dataclass
class CursorJitSession:
    """What referencing a file attaches over one session (each file once)."""

    cwd: str
    reader: FileReader
    _loaded: set[str] = field(default_factory=set)
    _scan: TreeScan | None = None
    _nested: dict[str, list[CursorRule]] = field(default_factory=dict)
    _root: list[CursorRule] | None = None

    def _candidates(self, path: str) -> list[tuple[str, str, str]]:
        """(path, text, why) of everything referencing `path` attaches, loaded or not."""
        if self._scan is None:
            self._scan = scan_tree(self.cwd)
            self._root = folder_rules(self.cwd, self.reader)
        out = [(r.path, r.body, "its globs match " + posixpath.relpath(path, self.cwd))
               for r in self._root or [] if r.applies_to(path)]
        for owner in self._scan.rule_folders:
            if not is_subpath(owner, path):
                continue
            rel = posixpath.relpath(owner, self.cwd)
            if owner not in self._nested:
                self._nested[owner] = folder_rules(owner, self.reader)
            for rule in self._nested[owner]:
                if rule.kind == ALWAYS:
                    out.append((rule.path, rule.body, f"a file in {rel}/ was referenced"))
                elif rule.applies_to(path):
                    out.append((rule.path, rule.body,
                                "its globs match " + posixpath.relpath(path, owner)))
        for agents in self._scan.agents_files:
            if is_subpath(posixpath.dirname(agents), path):
                content = self.reader.read(agents).content
                if content is not None:
                    rel = posixpath.relpath(posixpath.dirname(agents), self.cwd)
                    out.append((agents, content, f"a file in {rel}/ was referenced"))
        return out

    def load_for(self, path: str) -> JitLoad:
        path = resolve(path)
        files = []
        if is_subpath(self.cwd, path) and path != self.cwd:
            for source, text, why in self._candidates(path):
                if source not in self._loaded:
                    self._loaded.add(source)
                    files.append(JitFile(source, text, why))
        context = render([(f.path, f.content) for f in files])
        return JitLoad(path, files, context + "\n" if context else "",
                       [context] if context else [])


def check_folder(root: str, reader: FileReader,
                 budget: MatchBudget | None = None) -> WorkspaceCheck:
    """Every rule of the workspace folder `root` and its subfolders, checked; its sources
    (what it reads, for the on-read notices and hidden-content checks) only where Cursor's
    own files are."""
    root = resolve(root)
    scan = scan_tree(root)
    check = WorkspaceCheck()
    budget = budget or MatchBudget()
    own_rules = 0
    for owner in [root, *scan.rule_folders]:
        for rule in folder_rules(owner, reader):
            check.diagnostics += rule.diagnostics
            # Only an auto-attached rule attaches through its globs (an always-applied one
            # applies whatever they match).
            if scan.complete and rule.kind == AUTO:
                check.diagnostics += check_globs(rule, scan.files_under(owner), budget)
            check.sources.append(rule.path)
            own_rules += owner == root
    check.diagnostics += [outside_rules(p) for p in scan.stray_rules]
    rules_file = posixpath.join(root, RULES_DIR)
    if os.path.isfile(rules_file):
        check.diagnostics.append(rules_not_a_folder(rules_file))
    legacy = posixpath.join(root, LEGACY_FILE)
    if reader.read(legacy).content is not None:
        check.sources.append(legacy)
        if own_rules:
            check.diagnostics.append(legacy_beside_rules(legacy))
    if not check.sources:
        return check  # no Cursor files here: its AGENTS.md is the AGENTS.md convention's
    agents = posixpath.join(root, AGENTS_FILE)
    check.sources += [p for p in [agents, *scan.agents_files]
                      if reader.read(p).content is not None]
    check.folders = list(scan.rule_folders)
    return check


def _below(cwd: str, check: WorkspaceCheck, reader: FileReader, *, walk: bool) -> TreeScan:
    """The subfolders of `cwd` with their own `.cursor/rules`, and their AGENTS.md files: from
    the workspace check when it found Cursor's files (no second walk: the Memory view asks
    often), else from a walk of `cwd` when `walk` (its own rules are there), else none."""
    below = [f for f in check.folders if is_subpath(cwd, f) and f != cwd]
    if check.folders or check.sources:
        agents = [p for p in check.sources if posixpath.basename(p) == AGENTS_FILE
                  and posixpath.dirname(p) != cwd and is_subpath(cwd, p)]
        return TreeScan(cwd, rule_folders=below, agents_files=agents)
    return scan_tree(cwd) if walk else TreeScan(cwd)


class CursorAgent(WithoutReferences, MemoryAgent):
    """Cursor, by its documented rules (a convention)."""

    id = "cursor"
    label = "Cursor"
    receiver = "Cursor"
    nothing_loads = "no Cursor rules load here"
    list_label_width = 15
    expands_home = False

    def file_names(self, settings: MemorySettings) -> Sequence[str]:
        return (LEGACY_FILE,)

    def owns(self, path: str, settings: MemorySettings) -> bool:
        return (posixpath.basename(path) == LEGACY_FILE
                or (path.endswith(RULE_SUFFIX) and f"/{RULES_DIR}/" in path))

    def claims(self, path: str) -> bool:
        return "/.cursor/" in path or posixpath.basename(path) == LEGACY_FILE

    def home_folder(self, home: str) -> str | None:
        return None  # Cursor's user rules live in its settings, not in files

    def home_change_matters(self, path: str, home: str) -> bool:
        return True

    def load(self, folder: str, settings: MemorySettings, reader: FileReader | None = None,
             *, target: str | None = None) -> AgentMemory:
        """With `target`, what referencing it attaches loads too."""
        reader = reader or FileReader()
        load = load_cursor(folder, reader)
        startup = load.startup
        sent = render([(f.path, f.content or "") for f in startup])
        text, later = sent, []
        if target is not None:
            read = CursorJitSession(load.cwd, reader).load_for(target)
            text = "\n\n".join(p for p in (sent, read.context) if p)
            later = [AgentFile(f.path, "on read", f.content, f.reason, when="on-read")
                     for f in read.files]
        offered = [r for r in load.rules if r.kind != ALWAYS]
        headline = (f"**Cursor rules for {markdown_code(load.cwd)}** ({CONVENTION_NOTE}) — "
                    f"{files_figures(self.label, startup, sent)}"
                    + "".join(f"\n- {markdown_code(r.path)}: {markdown_text(_note(r))}"
                            for r in offered))
        listing = [ListedFile(f.path, f.label, len(f.content or ""), f.content)
                   for f in startup]
        listing += [ListedFile(r.path, f"auto ({shorten(', '.join(r.globs), 40)})", len(r.body),
                               r.body)
                    for r in load.of_kind(AUTO)]
        listing += [ListedFile(r.path, "requested", len(r.body), r.body)
                    for r in load.of_kind(REQUESTED)]
        listing += [ListedFile(r.path, "manual", len(r.body), r.body)
                    for r in load.of_kind(MANUAL)]
        diagnostics: list[Diagnostic] = [d for r in load.rules for d in r.diagnostics]
        return AgentMemory(
            agent=self.id, cwd=load.cwd, mode="convention", files=[*startup, *later],
            text=text, diagnostics=diagnostics, headline=headline, listing=listing,
            details={"convention": True,
                     "always": [r.path for r in load.of_kind(ALWAYS)],
                     "autoAttached": [{"path": r.path, "globs": r.globs}
                                      for r in load.of_kind(AUTO)],
                     "agentRequested": [{"path": r.path, "description": r.description}
                                        for r in load.of_kind(REQUESTED)],
                     "manual": [r.path for r in load.of_kind(MANUAL)],
                     "legacy": load.legacy[0] if load.legacy else None,
                     "agentsMd": load.agents[0] if load.agents else None},
            # What the convention predicts it sends at start (`memlens diff` compares it);
            # Cursor's own framing is not documented, so nothing here is verified.
            payloads=[sent] if sent else [])

    def check_workspace(self, settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader) -> WorkspaceCheck:
        out = WorkspaceCheck(found=found)
        budget = MatchBudget()  # one for the check: its glob × file matches
        for root in roots:
            one = check_folder(root, reader, budget)
            out.diagnostics += one.diagnostics
            out.sources += [s for s in one.sources if s not in out.sources]
            out.folders += [f for f in one.folders if f not in out.folders]
        out.watched = set(out.sources)
        return out

    def jit_session(self, settings: MemorySettings, folder: str, reader: FileReader,
                    check: WorkspaceCheck) -> AgentJitSession | None:
        return CursorJitSession(resolve(folder), reader)

    def ignored_files(self, settings: MemorySettings, roots: list[str], found: list[str],
                      reader: FileReader) -> list[Diagnostic]:
        return []  # an `.mdc` outside .cursor/rules is a check of its own (check_workspace)

    def view_files(self, folder: str, settings: MemorySettings, reader: FileReader,
                   check: WorkspaceCheck, folder_for: Callable[[str], str | None]
                   ) -> list[AgentFile]:
        """Its start-up files for the folder, its other rules (each with when it applies),
        then the subfolders' rules and AGENTS.md files (on read); nothing where Cursor's own
        files (rules, `.cursorrules`) are not (an AGENTS.md alone is the AGENTS.md
        convention's to show)."""
        load = load_cursor(folder, reader)
        nested = _below(load.cwd, check, reader, walk=bool(load.rules or load.legacy))
        if not (load.rules or load.legacy or nested.rule_folders):
            return []
        rows = [AgentFile(f.path, f.label, f.content, "always applied (convention)")
                for f in load.startup]
        for rule in load.rules:
            if rule.kind != ALWAYS:
                rows.append(AgentFile(rule.path, rule.kind, rule.body,
                                      _note(rule) + " (convention)",
                                      when="on-read" if rule.kind == AUTO else "on-demand",
                                      reads_on=rule.applies_to if rule.kind == AUTO else None))
        for owner in nested.rule_folders:
            rel = posixpath.relpath(owner, load.cwd)
            for rule in folder_rules(owner, reader):
                note = (f"when a file in {rel}/ is referenced" if rule.kind == ALWAYS
                        else f"in {rel}/: {_note(rule)}")
                rows.append(AgentFile(rule.path, "nested " + rule.kind, rule.body,
                                      note + " (convention)",
                                      when="on-read" if rule.kind in (ALWAYS, AUTO)
                                      else "on-demand"))
        for agents in nested.agents_files:
            content = reader.read(agents).content
            if content is not None:
                rel = posixpath.relpath(posixpath.dirname(agents), load.cwd)
                rows.append(AgentFile(agents, "nested AGENTS.md", content,
                                      f"when a file in {rel}/ is referenced (convention)",
                                      when="on-read"))
        return rows

    def on_read_files(self, memory: AgentMemory, settings: MemorySettings, reader: FileReader,
                      check: WorkspaceCheck) -> list[AgentFile]:
        """Glob rules, subfolder rules and AGENTS.md files (on read), and the rules only
        offered by description or @-mention (on demand). A referenced file's folder brings its
        AGENTS.md in whether or not Cursor's own files are here (its JIT session): every
        subfolder's AGENTS.md is a row."""
        rows = [r for r in self.view_files(memory.cwd, settings, reader, check,
                                           lambda p: memory.cwd)
                if r.when in ("on-read", "on-demand")]
        listed = {r.path for r in rows}
        for agents in _below(memory.cwd, check, reader, walk=True).agents_files:
            content = reader.read(agents).content
            if content is not None and agents not in listed:
                rel = posixpath.relpath(posixpath.dirname(agents), memory.cwd)
                rows.append(AgentFile(agents, "nested AGENTS.md", content,
                                      f"when a file in {rel}/ is referenced (convention)",
                                      when="on-read"))
        return rows

    def section_starts(self, path: str) -> list[str]:
        return [heading(path)]

    def section_end(self, path: str) -> str | None:
        return None

    def show_json(self, memory: AgentMemory, content: str) -> dict[str, object]:
        return {**memory.details, "content": content}
