"""Claude Code's memory, as its documentation and the source analysis (seed 001) describe it.

Load order (later = higher priority): managed `/etc/claude-code/CLAUDE.md`, user
`~/.claude/CLAUDE.md`, then for each folder from the filesystem root down to the working
folder `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/*.md` (rules without `paths:`; rules
with `paths:` apply only to matching files), `CLAUDE.local.md`; last the auto-memory index
`MEMORY.md` of the auto-memory folder (memory_folder.py says where, and whether at all;
memory_index.py how much of it is sent, and what Claude Code writes when it is missing). In a
git worktree nested in its main repository, the main repository's checked-in files above the
worktree (CLAUDE.md, .claude/CLAUDE.md, its rules) are skipped — the worktree has its own
copies — and its CLAUDE.local.md is still read (seen in 2.1.330).
`@path` includes (`@./rel`, `@~/x`, `@/abs`, `@rel`) are followed four levels deep (a file
is read once per load), text files only, not in code; a project file's include must lie
inside the working folder (outside it Claude Code asks first, and nobody answers a
non-interactive run), the user's may go anywhere. A file that
is empty once its frontmatter and HTML comments are gone is not sent, nor what it includes.
Without a non-empty CLAUDE.md in the working folder or above, AGENTS.md (and
`.claude/AGENTS.md`) of those folders load in their place (Claude Code's agents-md plugin,
default mode `claude-md-or-agents-md`).
"""

from __future__ import annotations

import functools
import os
import posixpath
from dataclasses import dataclass, field

from memlens.agents.base import WorkspaceCheck
from memlens.agents.claude.agent_memory import AgentMemoryFolder, agent_memory_folders
from memlens.agents.claude.includes import IncludeReader, external_includes_approved
from memlens.agents.claude.memory_folder import (
    AutoMemoryFolder,
    auto_memory_folder,
    claude_home,
    main_repository,
    settings_sources,
)
from memlens.agents.claude.memory_index import cut_index, synthesized_index
from memlens.agents.claude.memory_topics import TopicFile, check_index, scan_topics
from memlens.agents.claude.messages import (
    ClaudeFile,
    chain_top,
    is_blank,
    owner_folder,
    sent_text,
)
from memlens.agents.claude.rules import (
    globs_match,
    globs_of,
    linked_rule_files,
    read_frontmatter,
    rule_files,
)
from memlens.files import tree
from memlens.files.fsread import FileReader, ReadKind
from memlens.files.globs import budget_diagnostic, skipped_globs, stopped
from memlens.files.nodecompat import dirname, is_subpath, js_trim, resolve
from memlens.files.roots import repository_root
from memlens.protocol.memory import Diagnostic

CLAUDE_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
AGENTS_NAMES = ("AGENTS.md", ".claude/AGENTS.md")


def ancestors(cwd: str) -> list[str]:
    """`cwd` and the folders above it, top first, without the filesystem root (Claude Code's
    walk stops below it)."""
    chain: list[str] = []
    current = resolve(cwd)
    while dirname(current) != current:
        chain.insert(0, current)
        current = dirname(current)
    return chain


_PROJECT_KINDS = ("project", "rule", "local")


def _origin(entry: ClaudeFile, by_path: dict[str, ClaudeFile]) -> tuple[str, str]:
    """The kind and path of the memory file that brought `entry` in. A `paths:` rule's
    includes load at start without the rule (it waits for a read): their origin is the rule."""
    top = chain_top(entry, by_path)
    if top.included_from is not None and top.owner_kind is not None:
        return top.owner_kind, top.included_from
    return top.kind, top.path


def _is_project(entry: ClaudeFile, by_path: dict[str, ClaudeFile]) -> bool:
    return _origin(entry, by_path)[0] in _PROJECT_KINDS


def _insert_at(files: list[ClaudeFile], folder: str) -> int:
    """Where the agents-md plugin puts a folder's AGENTS.md: before the first project file of
    a folder below it, else after the last project file (a scoped rule's includes among
    them), else before the auto memory."""
    by_path = {f.path: f for f in files}
    for i, f in enumerate(files):
        kind, origin = _origin(f, by_path)
        if kind in _PROJECT_KINDS and owner_folder(origin).startswith(folder.rstrip("/") + "/"):
            return i
    last = [i for i, f in enumerate(files) if _is_project(f, by_path)]
    if last:
        return last[-1] + 1
    auto = [i for i, f in enumerate(files) if f.kind == "auto"]
    return auto[0] if auto else len(files)


def dedupe_against(found: list[ClaudeFile], loaded: list[ClaudeFile]) -> list[ClaudeFile]:
    """`found` without what `loaded` already has: the same path, or the same trimmed text as
    a project file."""
    by_path = {f.path: f for f in loaded}
    paths = set(by_path)
    texts = {js_trim(sent_text(f.content)) for f in loaded if _is_project(f, by_path)}
    kept: list[ClaudeFile] = []
    for f in found:
        text = js_trim(sent_text(f.content))
        if f.path in paths or (text and text in texts):
            continue
        paths.add(f.path)
        kept.append(f)
    return kept


def main_repository_above(cwd: str) -> tuple[str, str] | None:
    """(main repository root, worktree root) when `cwd` is in a git worktree that lies inside
    its main repository: Claude Code skips the main repository's checked-in memory files in
    the folders between the two."""
    root = repository_root(cwd)
    main = main_repository(root) if root else None
    if root is None or main is None or main == root or not is_subpath(main, root):
        return None
    return main, root


@dataclass
class ClaudeLoad:
    """What Claude Code loads at start in a working folder: its files in order, the rules that
    load on read, the diagnostics, and the memory folders beside them."""

    cwd: str
    files: list[ClaudeFile]
    conditional_rules: list[ClaudeFile]
    diagnostics: list[Diagnostic]
    auto_memory: AutoMemoryFolder | None = None
    topics: list[TopicFile] = field(default_factory=list)
    agent_memory: list[AgentMemoryFolder] = field(default_factory=list)


class ClaudeLoader(IncludeReader):
    """Claude Code's start-up load of a working folder (one per run; see the module's doc)."""

    def add(self, path: str, kind: str, out: list[ClaudeFile]) -> ClaudeFile | None:
        """Read a memory file (and what it includes) into `out`; None when it cannot be read,
        was read already in this load, or is blank."""
        if path in self.processed:
            return None
        self.tried.add(path)
        read = self._read(path)
        if read.content is None:
            if read.kind in (ReadKind.SPECIAL, ReadKind.DENIED, ReadKind.ERROR):
                self.diagnostics.append(Diagnostic(
                    path=path, line=1, col=1, end_line=1, end_col=1, severity="error",
                    code="file-unreadable",
                    message=(f"Not readable ({read.error}); Claude Code skips it"
                             if read.kind is not ReadKind.SPECIAL else
                             "Not a regular file (a FIFO, socket or device): Memory Lens never "
                             "opens it, and Claude Code could block reading it")))
            return None
        self.processed.add(path)
        content = read.content
        if is_blank(content):
            return None
        self._too_large(path, content, read.size)
        entry = ClaudeFile(path, kind, content)
        out.append(entry)
        self._includes(path, content, {path}, 0, out, kind in ("user", "userRule"))
        return entry

    def begin(self, cwd: str) -> None:
        """A new load from `cwd`: nothing read yet."""
        self.cwd = resolve(cwd)
        self.processed = set()
        self.rejected_reported: set[str] = set()
        self.approved = external_includes_approved(self.home, self.cwd)

    def load(self, cwd: str) -> ClaudeLoad:
        self.begin(cwd)
        cwd = self.cwd
        files: list[ClaudeFile] = []
        conditional: list[ClaudeFile] = []
        self.add("/etc/claude-code/CLAUDE.md", "managed", files)
        self.add(posixpath.join(claude_home(self.home), "CLAUDE.md"), "user", files)
        # User rules apply to every project (their `paths:` are relative to the working
        # folder); they load before the project's, which take precedence.
        self._rules(posixpath.join(claude_home(self.home), "rules"), cwd, files, conditional,
                    "userRule")
        skipped = main_repository_above(cwd)
        for folder in ancestors(cwd):
            if folder == self.home or folder == claude_home(self.home):
                continue
            if not (skipped and is_subpath(skipped[0], folder)
                    and not is_subpath(skipped[1], folder)):
                self.add(posixpath.join(folder, "CLAUDE.md"), "project", files)
                self.add(posixpath.join(folder, ".claude", "CLAUDE.md"), "project", files)
                self._rules(posixpath.join(folder, ".claude", "rules"), folder, files,
                            conditional)
            self.add(posixpath.join(folder, "CLAUDE.local.md"), "local", files)
        load = ClaudeLoad(cwd, files, conditional, self.diagnostics)
        self._auto_memory(load)
        if not self.is_claude_project(cwd, files):
            load.files = self._agents_fallback(cwd, files)
        return load

    def _auto_memory(self, load: ClaudeLoad) -> None:
        """MEMORY.md as Claude Code sends it (or writes it from the topic files, when there is
        none), its topic files and their checks."""
        place = auto_memory_folder(self.home, load.cwd)
        load.auto_memory = place
        self._moved_folder(place)
        self._rejected_settings(load.cwd)
        load.agent_memory = agent_memory_folders(self, self.home, load.cwd)
        for agent in load.agent_memory:
            self._check_memory_folder(agent.folder)
        if place.folder is None or place.index is None:
            return
        topics = scan_topics(self, place.folder)
        load.topics = [topic for topic, _ in topics]
        read = self._read(place.index)
        if read.content is None:
            if read.kind is ReadKind.MISSING and load.topics:
                written = synthesized_index([t.entry() for t in load.topics])
                if written:
                    load.files.append(ClaudeFile(place.index, "auto", written,
                                                 sent=cut_index(written).sent, written=True))
            return
        self.processed.add(place.index)
        cut = cut_index(sent_text(read.content))
        if cut.sent:
            load.files.append(ClaudeFile(place.index, "auto", read.content, sent=cut.sent))
        check_index(self, place.index, read.content, cut, topics)

    def _check_memory_folder(self, folder: str) -> None:
        """A subagent's memory folder: its MEMORY.md cut as the main index is, and its topic
        files checked in the same format."""
        index = posixpath.join(folder, "MEMORY.md")
        read = self._read(index)
        if read.content is not None and index not in self.processed:
            self.processed.add(index)
            check_index(self, index, read.content, cut_index(sent_text(read.content)),
                        scan_topics(self, folder))

    def _rejected_settings(self, cwd: str) -> None:
        """A warning on each settings file Claude Code ignores as a whole (a key of the wrong
        type), at that key."""
        for source in settings_sources(self.home, cwd):
            if source.rejected is None or source.path in self.rejected_reported:
                continue
            self.rejected_reported.add(source.path)
            read = self._read(source.path)
            if read.content is None:
                continue
            key = source.rejected.split(" ", 1)[0]
            at = read.content.find(f'"{key}"')
            start = max(at, 0)
            end = start + (len(key) + 2 if at >= 0 else 0)
            self._diag(source.path, read.content, start, end, "warning",
                       "claude-settings-ignored",
                       f"Claude Code ignores this whole settings file: {source.rejected}. "
                       "None of its settings apply (autoMemoryDirectory, autoMemoryEnabled, "
                       "permissions, …) until the value has the right type")

    def _moved_folder(self, place: AutoMemoryFolder) -> None:
        """A warning on a project's `autoMemoryDirectory` (information on the local
        settings'): where Claude Code will read and write memory because of it."""
        source = place.setting
        if source is None or place.key != "autoMemoryDirectory" or place.folder is None:
            return
        if source.scope not in ("project", "local"):
            return
        read = self._read(source.path)
        if read.content is None:
            return
        at = read.content.find('"autoMemoryDirectory"')
        start = max(at, 0)
        end = start + (len('"autoMemoryDirectory"') if at >= 0 else 0)
        if source.scope == "project":
            self._diag(source.path, read.content, start, end, "warning", "memory-folder-moved",
                       f"This project's settings move Claude Code's auto memory to "
                       f"{place.folder}: every session here loads MEMORY.md from there and "
                       "saves new memories there. A cloned repository's settings can point "
                       "it at any folder you can write; check that it is one you chose")
        else:
            self._diag(source.path, read.content, start, end, "info", "memory-folder-moved",
                       f"Claude Code keeps its auto memory for this project in {place.folder} "
                       "(your local settings say so)")

    def claude_file_above(self, cwd: str) -> str | None:
        """The nearest non-blank CLAUDE.md, .claude/CLAUDE.md or CLAUDE.local.md in `cwd` or
        above (what makes it a Claude Code project: `is_claude_project`)."""
        for folder in reversed(ancestors(cwd)):
            for name in CLAUDE_NAMES:
                path = posixpath.join(folder, name)
                read = self._read(path)
                if read.content is not None and not is_blank(read.content):
                    return path
        return None

    def is_claude_project(self, cwd: str, files: list[ClaudeFile]) -> bool:
        """A non-blank CLAUDE.md, .claude/CLAUDE.md or CLAUDE.local.md in `cwd` or above."""
        if any(f.kind in ("project", "local") and f.included_from is None
               and is_subpath(owner_folder(f.path), cwd)
               and any(f.path.endswith("/" + n) for n in CLAUDE_NAMES) for f in files):
            return True
        for folder in ancestors(cwd):
            for name in CLAUDE_NAMES:
                read = self._read(posixpath.join(folder, name))
                if read.content is not None and not is_blank(read.content):
                    return True
        return False

    def _agents_fallback(self, cwd: str, files: list[ClaudeFile]) -> list[ClaudeFile]:
        """AGENTS.md of `cwd` and its ancestors (root first), each placed with its folder's
        project files."""
        found: list[ClaudeFile] = []
        saved = self.processed
        self.processed = {f.path for f in files if f.kind in ("managed", "user")}
        for folder in ancestors(cwd):
            for name in AGENTS_NAMES:
                self.add(posixpath.join(folder, name), "project", found)
        self.processed = saved | self.processed
        added = dedupe_against(found, files)
        out = list(files)
        groups: dict[str, list[ClaudeFile]] = {}
        tops = {f.path: f for f in added}
        for f in added:
            groups.setdefault(owner_folder(chain_top(f, tops).path), []).append(f)
        for folder, group in groups.items():
            at = _insert_at(out, folder)
            out[at:at] = group
        return out

    def _rules(self, rules_dir: str, base: str, files: list[ClaudeFile],
               conditional: list[ClaudeFile], kind: str = "rule") -> None:
        """`*.md` under a rules folder, subfolders included where they come, in the order the
        directory lists them (readdir: Claude Code does not sort): a rule with `paths:`
        frontmatter applies only to matching files (relative to `base`)."""
        linked = linked_rule_files(rules_dir)
        for path in rule_files(rules_dir):
            if path in self.processed:
                continue
            if (path in linked and not is_subpath(self.cwd, path) and not self.approved
                    and kind != "userRule"):
                continue  # a link out of the working folder: as an include outside it
            read = self._read(path)
            if read.content is None:
                continue
            # A rule above many folders is read by each of their loads: its frontmatter is
            # parsed once per command run (files/tree.py; read only, never changed)
            meta, problem = tree.run_memo(("claude.frontmatter", read.content),
                                          functools.partial(read_frontmatter, read.content))
            if problem is not None:
                self.diagnostics.append(Diagnostic(
                    path=path, line=1, col=1, end_line=1, end_col=4, severity="warning",
                    code="frontmatter-unreadable",
                    message=f"The frontmatter {problem}: Memory Lens reads the rule as if it "
                            "had no paths: (it applies everywhere); Claude Code may differ"))
            globs = globs_of(meta)
            if globs is not None and (skipped := skipped_globs(globs)):
                self.diagnostics.append(budget_diagnostic(
                    path, 1, "paths: globs", skipped=skipped, total=len(globs),
                    more=stopped(globs)))
            if globs is not None:
                self.processed.add(path)
                if not is_blank(read.content):
                    conditional.append(ClaudeFile(path, kind, read.content, applies_to=globs,
                                                  rule_base=base))
                    # What the rule includes is no rule: it loads with the unconditional
                    # files (the rule itself waits for a matching read).
                    included: list[ClaudeFile] = []
                    self._includes(path, read.content, {path}, 0, included,
                                   kind in ("user", "userRule"))
                    for entry in included:
                        entry.owner_kind = kind
                    files += included
            else:
                self.add(path, kind, files)

    def rules_for(self, load: ClaudeLoad, target: str) -> list[ClaudeFile]:
        """Conditional rules whose `paths:` globs match `target` (relative to the rule's
        project folder)."""
        matched = []
        for rule in load.conditional_rules:
            base = rule.rule_base or dirname(dirname(dirname(rule.path)))
            if globs_match(rule.applies_to, base, target):
                matched.append(rule)
        return matched


CLAUDE_FILE_NAMES = ("CLAUDE.md", "CLAUDE.local.md")


def claude_project_folders(paths: list[str]) -> list[str]:
    """The folders whose Claude Code memory the found `CLAUDE.md` files belong to (a file in
    `.claude/` belongs to the folder holding `.claude`)."""
    folders = []
    for path in paths:
        folder = dirname(path)
        if posixpath.basename(folder) == ".claude":
            folder = dirname(folder)
        folders.append(folder)
    return list(dict.fromkeys(folders))


def check_claude_folders(home: str, folders: list[str],
                         reader: FileReader | None = None) -> WorkspaceCheck:
    """What Claude Code loads working in each folder, checked: a subfolder's CLAUDE.md is
    loaded (and so checked) as Claude Code loads it when it works there. The sources are every
    file it reads as memory here (includes and rules too); the watched files add every include
    tried, found or not."""
    loader = ClaudeLoader(home, reader=reader)
    sources: list[str] = []
    for folder in folders:
        load = loader.load(folder)
        sources += [f.path for f in load.files] + [r.path for r in load.conditional_rules]
        # Topic files and subagent indexes: read by the model when relevant, so checked for
        # hidden text like the rest.
        sources += [t.path for t in load.topics]
        sources += [a.index for a in load.agent_memory if os.path.isfile(a.index)]
    unique = {(d.path, d.line, d.col, d.code): d for d in loader.diagnostics}
    return WorkspaceCheck(diagnostics=list(unique.values()),
                          sources=list(dict.fromkeys(sources)),
                          watched=set(sources) | loader.include_targets | loader.tried)
