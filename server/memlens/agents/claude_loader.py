"""Claude Code's memory, as its documentation and the source analysis (seed 001) describe it.

Load order (later = higher priority): managed `/etc/claude-code/CLAUDE.md`, user
`~/.claude/CLAUDE.md`, then for each folder from the filesystem root down to the working
folder `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/*.md` (rules without `paths:`; rules
with `paths:` apply only to matching files), `CLAUDE.local.md`; last the auto-memory index
`~/.claude/projects/<sanitised git root>/memory/MEMORY.md`, of which only the first 200 lines
or 25,000 bytes (whichever comes first) reach the model. `@path` includes (`@./rel`, `@~/x`,
`@/abs`, `@rel`) are followed to depth 5 with cycle protection, text files only, not in code.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from dataclasses import dataclass, field

from ..frontmatter import line_closed_frontmatter
from ..fsread import FileReader, ReadKind, ReadResult
from ..imports import ImportToken, find_references, repository_root
from ..model import Severity
from ..nodecompat import dirname, is_subpath, resolve
from ..protocol.memory import Diagnostic
from ..textpos import LineIndex
from .base import AgentJitSession, JitFile, JitLoad, WorkspaceCheck

MAX_INCLUDE_DEPTH = 5
MAX_FILE_CHARS = 40_000
INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25_000
TOPIC_TYPES = ("user", "feedback", "project", "reference")
TEXT_EXTENSIONS = {
    ".md", ".txt", ".markdown", ".rst", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg",
    ".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".rb", ".php", ".c",
    ".h", ".cpp", ".hpp", ".cs", ".swift", ".sh", ".bash", ".zsh", ".sql", ".html", ".css",
    ".scss", ".xml", ".csv", ".env", ".mdx", "",
}
DESCRIPTIONS = {
    "managed": " (managed instructions for all users)",
    "user": " (user's private global instructions for all projects)",
    "project": " (project instructions, checked into the codebase)",
    "rule": " (project rule, checked into the codebase)",
    "userRule": " (user's private rule for all projects)",
    "local": " (user's private project instructions, not checked in)",
    "auto": " (user's auto-memory, persists across conversations)",
    "include": " (included)",
}


@dataclass
class ClaudeFile:
    path: str
    kind: str
    content: str
    included_from: str | None = None
    applies_to: list[str] = field(default_factory=list)  # a rule's `paths:` globs
    rule_base: str | None = None  # the folder those globs are relative to


@dataclass
class ClaudeLoad:
    cwd: str
    files: list[ClaudeFile]
    conditional_rules: list[ClaudeFile]
    diagnostics: list[Diagnostic]

    def render(self, rules: list[ClaudeFile] | None = None) -> str:
        """What Claude Code puts in context, plus the `paths:`-scoped `rules` that apply."""
        return "\n\n".join(f"{contents_line(f.path, f.kind)}\n\n{f.content}"
                           for f in [*self.files, *(rules or [])] if f.content.strip())


def contents_line(path: str, kind: str) -> str:
    """The line that opens a file's text in Claude Code's context."""
    return f"Contents of {path}{DESCRIPTIONS[kind]}:"


def sanitize_path(path: str) -> str:
    """Claude Code's project folder name: every non-alphanumeric character becomes '-'."""
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


def claude_home(home: str) -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or posixpath.join(home, ".claude")


def auto_memory_index(home: str, cwd: str) -> str:
    root = repository_root(cwd) or resolve(cwd)
    return posixpath.join(claude_home(home), "projects", sanitize_path(root), "memory",
                          "MEMORY.md")


def truncate_index(text: str) -> tuple[str, int | None, str | None]:
    """(what reaches the model, the 1-based line where the cut falls, the warning)."""
    lines = text.split("\n")
    cut_line: int | None = None
    kept = text
    if len(lines) > INDEX_MAX_LINES:
        kept = "\n".join(lines[:INDEX_MAX_LINES])
        cut_line = INDEX_MAX_LINES + 1
    data = kept.encode("utf-8")
    if len(data) > INDEX_MAX_BYTES:
        kept = data[:INDEX_MAX_BYTES].decode("utf-8", "ignore")
        cut_line = kept.count("\n") + 1
    if cut_line is None:
        return text, None, None
    total = len(lines)
    warning = (f"\n\n> WARNING: MEMORY.md is {total} lines and {len(text.encode('utf-8')):,} "
               f"bytes; only the first {INDEX_MAX_LINES} lines or {INDEX_MAX_BYTES:,} bytes are "
               "loaded. Keep the index to one short line per memory and move detail into "
               "topic files.")
    return kept + warning, cut_line, warning


# Claude Code's include path runs to any whitespace (Python's `\s`, every character
# `str.isspace` accepts: all of them lie below U+3001) and starts with `.`, `/`, `~` or a letter
# or digit of any script.
_PATH_ENDS = frozenset(c for c in map(chr, range(0x3001)) if c.isspace())


def _include_may_start(char: str) -> bool:
    return char in "./~" or char.isalnum()


def find_includes(text: str) -> list[ImportToken]:
    """`@path` includes as Claude Code writes them: `@./rel`, `@~/x`, `@/abs`, `@rel`."""
    return find_references(text, path_ends=_PATH_ENDS, may_start=_include_may_start)


class ClaudeLoader:
    def __init__(self, home: str, *, reader: FileReader | None = None):
        self.home = resolve(home)
        self.reader = reader or FileReader()
        self.diagnostics: list[Diagnostic] = []
        self.include_targets: set[str] = set()  # every include tried, found or not

    def _diag(self, path: str, text: str, start: int, end: int, severity: Severity, code: str,
              message: str) -> None:
        index = LineIndex(text)
        line, col = index.position(start)
        end_line, end_col = index.position(end)
        self.diagnostics.append(Diagnostic(path=path, line=line, col=col, end_line=end_line,
                                           end_col=end_col, severity=severity, code=code,
                                           message=message))

    def _read(self, path: str) -> ReadResult:
        return self.reader.read(path)

    def _includes(self, path: str, text: str, seen: set[str], depth: int,
                  out: list[ClaudeFile]) -> None:
        if depth >= MAX_INCLUDE_DEPTH:
            for token in find_includes(text):
                if not token.in_code:
                    self._diag(path, text, token.start, token.end, "warning", "import-too-deep",
                               f"`@{token.path}` is not included: Claude Code follows "
                               f"includes {MAX_INCLUDE_DEPTH} levels deep")
            return
        for token in find_includes(text):
            if token.in_code:
                continue
            raw = token.path
            if raw.startswith("~/"):
                target = resolve(self.home, raw[2:])
            else:
                target = resolve(dirname(path), raw)
            self.include_targets.add(target)
            if target in seen:
                self._diag(path, text, token.start, token.end, "warning", "import-cycle",
                           f"`@{raw}` closes an include cycle; Claude Code skips it")
                continue
            if posixpath.splitext(target)[1].lower() not in TEXT_EXTENSIONS:
                self._diag(path, text, token.start, token.end, "warning", "import-unreadable",
                           f"`@{raw}` is not a text file; Claude Code includes text files only")
                continue
            read = self._read(target)
            if read.content is None:
                code = "import-not-found" if read.kind.value == "missing" else (
                    "import-unreadable")
                self._diag(path, text, token.start, token.end, "warning", code,
                           f"`@{raw}` ({target}) cannot be included: {read.error}; Claude Code "
                           "silently skips it")
                continue
            if read.binary:
                self._diag(path, text, token.start, token.end, "warning", "import-unreadable",
                           f"`@{raw}` is binary; Claude Code includes text files only")
                continue
            root = repository_root(dirname(path)) or dirname(path)
            if not (is_subpath(root, target) or is_subpath(self.home, target)):
                self._diag(path, text, token.start, token.end, "info", "import-outside-root",
                           f"`@{raw}` includes {target}, outside the repository and your home "
                           "folder; Claude Code reads it")
            self._too_large(target, read.content, read.size)
            out.append(ClaudeFile(target, "include", read.content, included_from=path))
            self._includes(target, read.content, seen | {target}, depth + 1, out)

    def _too_large(self, path: str, content: str, size: int) -> None:
        if len(content) > MAX_FILE_CHARS:
            amount = (f"{len(content):,} characters" if size <= len(content)
                      else f"{size:,} bytes")  # the reader stopped early on a huge file
            self._diag(path, content, 0, min(len(content), content.find("\n") % 200 or 1),
                       "warning", "file-too-large",
                       f"{amount}: Claude Code warns above "
                       f"{MAX_FILE_CHARS:,} characters per memory file (it costs context in "
                       "every session)")

    def add(self, path: str, kind: str, out: list[ClaudeFile]) -> ClaudeFile | None:
        """Read a memory file (and what it includes) into `out`; None when it cannot be read."""
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
        content = read.content
        self._too_large(path, content, read.size)
        entry = ClaudeFile(path, kind, content)
        out.append(entry)
        self._includes(path, content, {path}, 0, out)
        return entry

    def load(self, cwd: str) -> ClaudeLoad:
        cwd = resolve(cwd)
        files: list[ClaudeFile] = []
        conditional: list[ClaudeFile] = []
        self.add("/etc/claude-code/CLAUDE.md", "managed", files)
        self.add(posixpath.join(claude_home(self.home), "CLAUDE.md"), "user", files)
        # User rules apply to every project (their `paths:` are relative to the project);
        # they load before the project's, which take precedence.
        self._rules(posixpath.join(claude_home(self.home), "rules"),
                    repository_root(cwd) or cwd, files, conditional, "userRule")
        chain: list[str] = []
        current = cwd
        while True:
            chain.insert(0, current)
            parent = dirname(current)
            if parent == current:
                break
            current = parent
        for folder in chain:
            if folder == self.home or folder == claude_home(self.home):
                continue
            self.add(posixpath.join(folder, "CLAUDE.md"), "project", files)
            self.add(posixpath.join(folder, ".claude", "CLAUDE.md"), "project", files)
            self._rules(posixpath.join(folder, ".claude", "rules"), folder, files, conditional)
            self.add(posixpath.join(folder, "CLAUDE.local.md"), "local", files)
        index = auto_memory_index(self.home, cwd)
        read = self._read(index)
        if read.content is not None:
            kept, cut_line, _ = truncate_index(read.content)
            files.append(ClaudeFile(index, "auto", kept))
            self._check_index(index, read.content, cut_line)
        return ClaudeLoad(cwd, files, conditional, self.diagnostics)

    def _rules(self, rules_dir: str, base: str, files: list[ClaudeFile],
               conditional: list[ClaudeFile], kind: str = "rule") -> None:
        """`*.md` under a rules folder, subfolders included, in name order: a rule with
        `paths:` frontmatter applies only to matching files (relative to `base`)."""
        found: list[str] = []
        for top, dirs, names in os.walk(rules_dir):
            dirs.sort()
            found += [posixpath.join(top, n) for n in sorted(names) if n.endswith(".md")]
        for path in found:
            read = self._read(path)
            if read.content is None:
                continue
            meta = line_closed_frontmatter(read.content)
            globs = meta.get("paths") if meta else None
            if isinstance(globs, str):
                globs = [globs]
            if isinstance(globs, list) and globs:
                conditional.append(ClaudeFile(path, kind, read.content,
                                              applies_to=[str(g) for g in globs],
                                              rule_base=base))
            else:
                self.add(path, kind, files)

    def rules_for(self, load: ClaudeLoad, target: str) -> list[ClaudeFile]:
        """Conditional rules whose `paths:` globs match `target` (relative to the rule's
        project folder)."""
        matched = []
        for rule in load.conditional_rules:
            base = rule.rule_base or dirname(dirname(dirname(rule.path)))
            rel = posixpath.relpath(resolve(target), base)
            if any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(rel, g.replace("**/", ""))
                   for g in rule.applies_to):
                matched.append(rule)
        return matched

    def _check_index(self, path: str, text: str, cut_line: int | None) -> None:
        if cut_line is not None:
            starts = [0] + [m.end() for m in re.finditer("\n", text)]
            offset = starts[min(cut_line - 1, len(starts) - 1)]
            self._diag(path, text, offset, offset, "warning", "memory-index-truncated",
                       f"Claude Code loads only the first {INDEX_MAX_LINES} lines or "
                       f"{INDEX_MAX_BYTES:,} bytes of MEMORY.md: everything from here on is "
                       "cut (and a warning is appended)")
        folder = dirname(path)
        for match in re.finditer(r"\]\(([^)\s]+\.md)\)", text):
            target = resolve(folder, match.group(1))
            if not os.path.isfile(target):
                self._diag(path, text, match.start(1), match.end(1), "warning",
                           "memory-link-not-found",
                           f"The index links to {match.group(1)}, which does not exist")
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            names = []
        for name in names:
            if not name.endswith(".md") or name == "MEMORY.md":
                continue
            topic = posixpath.join(folder, name)
            read = self._read(topic)
            if read.content is None:
                continue
            meta = line_closed_frontmatter(read.content)
            if meta is None:
                self._diag(topic, read.content, 0, 0, "warning", "memory-invalid-type",
                           "A memory topic file needs frontmatter with name, description and "
                           f"type ({', '.join(TOPIC_TYPES)})")
                continue
            kind = meta.get("type")
            if kind not in TOPIC_TYPES:
                where = read.content.find("type:")
                start = where if where >= 0 else 0
                self._diag(topic, read.content, start, start + (5 if where >= 0 else 3),
                           "warning", "memory-invalid-type",
                           f"type {kind!r} is not one of {', '.join(TOPIC_TYPES)}")
            for key in ("name", "description"):
                if not meta.get(key):
                    self._diag(topic, read.content, 0, 3, "warning", "memory-invalid-type",
                               f"The topic file's frontmatter has no {key!r}")


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
    unique = {(d.path, d.line, d.col, d.code): d for d in loader.diagnostics}
    return WorkspaceCheck(diagnostics=list(unique.values()),
                          sources=list(dict.fromkeys(sources)),
                          watched=set(sources) | loader.include_targets)


NESTED_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")


@dataclass
class ClaudeJitFile:
    file: ClaudeFile
    reason: str


class ClaudeJitSession(AgentJitSession):
    """What Claude Code adds while it works on files below its working folder: a subfolder's
    CLAUDE.md (with its includes) when it reads a file there, and a `.claude/rules` file whose
    `paths:` globs match that file; each at most once per session."""

    def __init__(self, home: str, root: str, reader: FileReader | None = None):
        self.root = resolve(root)
        self.loader = ClaudeLoader(home, reader=reader)
        self.startup = self.loader.load(self.root)
        self.loaded = {f.path for f in self.startup.files}

    def load_for(self, path: str) -> JitLoad:
        """`touch` in the shape every agent's JIT session has (Claude Code appends no text
        to the tool's output: the files join its context)."""
        added = [JitFile(e.file.path, e.file.content, e.reason) for e in self.touch(path)]
        return JitLoad(resolve(path), added, "")

    def touch(self, path: str) -> list[ClaudeJitFile]:
        path = resolve(path)
        if not is_subpath(self.root, path) or path == self.root:
            return []
        added: list[ClaudeJitFile] = []
        folders: list[str] = []
        current = dirname(path)
        while current != self.root and is_subpath(self.root, current):
            folders.insert(0, current)
            current = dirname(current)
        for folder in folders:
            for name in NESTED_NAMES:
                found: list[ClaudeFile] = []
                candidate = posixpath.join(folder, name)
                if candidate in self.loaded:
                    continue
                self.loader.add(candidate, "project" if name != "CLAUDE.local.md" else "local",
                                 found)
                for entry in found:
                    if entry.path not in self.loaded:
                        self.loaded.add(entry.path)
                        reason = ("included" if entry.kind == "include"
                                  else f"{posixpath.relpath(folder, self.root)}/ is read")
                        added.append(ClaudeJitFile(entry, reason))
        for rule in self.loader.rules_for(self.startup, path):
            if rule.path not in self.loaded:
                self.loaded.add(rule.path)
                added.append(ClaudeJitFile(rule, "paths: " + ", ".join(rule.applies_to)))
        return added
