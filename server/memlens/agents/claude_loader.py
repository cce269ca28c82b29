"""Claude Code's memory, as its documentation and the source analysis (seed 001) describe it.

Load order (later = higher priority): managed `/etc/claude-code/CLAUDE.md`, user
`~/.claude/CLAUDE.md`, then for each folder from the filesystem root down to the working
folder `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/*.md` (rules without `paths:`; rules
with `paths:` apply only to matching files), `CLAUDE.local.md`; last the auto-memory index
`~/.claude/projects/<sanitised git root>/memory/MEMORY.md`, of which only the first 200 lines
or 25,000 bytes (whichever comes first) reach the model. `@path` includes (`@./rel`, `@~/x`,
`@/abs`, `@rel`) are followed four levels deep (a file is read once per load), text files only, not
in code; a project file's include must lie inside the working folder (outside it Claude Code
asks first, and nobody answers a non-interactive run), the user's may go anywhere. A file that
is empty once its frontmatter and HTML comments are gone is not sent, nor what it includes.
Without a non-empty CLAUDE.md in the working folder or above, AGENTS.md (and
`.claude/AGENTS.md`) of those folders load in their place (Claude Code's agents-md plugin,
default mode `claude-md-or-agents-md`).
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field

import pathspec

from ..frontmatter import line_closed_frontmatter
from ..fsread import FileReader, ReadKind, ReadResult
from ..imports import ImportToken, find_references, repository_root
from ..model import Severity
from ..nodecompat import dirname, is_subpath, resolve
from ..protocol.memory import Diagnostic
from ..textpos import LineIndex
from .base import AgentJitSession, JitFile, JitLoad, WorkspaceCheck

MAX_INCLUDE_DEPTH = 4  # levels of includes below a memory file
MAX_FILE_CHARS = 40_000
INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25_000
TOPIC_TYPES = ("user", "feedback", "project", "reference")
# What Claude Code 2.1.330 includes (compared lower-cased; no extension is fine too).
TEXT_EXTENSIONS = {
    ".md", ".txt", ".text", ".json", ".yaml", ".yml", ".toml", ".xml", ".csv", ".html", ".htm",
    ".css", ".scss", ".sass", ".less", ".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs", ".mts",
    ".cts", ".py", ".pyi", ".pyw", ".rb", ".erb", ".rake", ".go", ".rs", ".java", ".kt", ".kts",
    ".scala", ".c", ".cpp", ".cc", ".cxx", ".h", ".hpp", ".hxx", ".cs", ".swift", ".sh",
    ".bash", ".zsh", ".fish", ".ps1", ".bat", ".cmd", ".env", ".ini", ".cfg", ".conf",
    ".config", ".properties", ".sql", ".graphql", ".gql", ".proto", ".vue", ".svelte",
    ".astro", ".ejs", ".hbs", ".pug", ".jade", ".php", ".pl", ".pm", ".lua", ".r", ".dart",
    ".ex", ".exs", ".erl", ".hrl", ".clj", ".cljs", ".cljc", ".edn", ".hs", ".lhs", ".elm",
    ".ml", ".mli", ".f", ".f90", ".f95", ".for", ".cmake", ".make", ".makefile", ".gradle",
    ".sbt", ".rst", ".adoc", ".asciidoc", ".org", ".tex", ".latex", ".lock", ".log", ".diff",
    ".patch", "",
}
CLAUDE_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
AGENTS_NAMES = ("AGENTS.md", ".claude/AGENTS.md")
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


REMINDER_HEAD = ("Codebase and user instructions are shown below. Be sure to adhere to these "
                 "instructions. IMPORTANT: These instructions OVERRIDE any default behavior "
                 "and you MUST follow them exactly as written.")
# The label Claude Code gives each kind of file in its payload (an include takes the one of
# the memory file that brought it in).
PAYLOAD_LABELS = {
    "managed": " (organization-managed policy instructions)",
    "user": " (user's private global instructions for all projects)",
    "userRule": " (user's private global instructions for all projects)",
    "project": " (project instructions, checked into the codebase)",
    "rule": " (project instructions, checked into the codebase)",
    "local": " (user's private project instructions, not checked in)",
    "auto": " (user's auto-memory, persists across conversations)",
}


def payload(files: list[ClaudeFile]) -> str:
    """The start-up message Claude Code 2.1.330 sends: a `<system-reminder>` with a heading
    and one `Contents of PATH (LABEL):` block per file ('' when no file is left)."""
    by_path = {f.path: f for f in files}
    blocks = []
    for f in files:
        kind = _top(f, by_path).kind
        text = js_trim(sent_text(f.content))
        if not text:
            continue
        blocks.append(f"Contents of {f.path}{PAYLOAD_LABELS.get(kind, '')}:\n\n{text}")
    if not blocks:
        return ""
    return f"<system-reminder>\n{REMINDER_HEAD}\n\n" + "\n\n".join(blocks) + (
        "\n</system-reminder>")


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


_FRONTMATTER = re.compile(r"^\ufeff?---\r?\n[\s\S]*?\r?\n---(?:\r?\n|$)")
# JavaScript's String.prototype.trim: its whitespace and line terminators, U+FEFF included.
_JS_SPACE = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
             "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)
_BLOCK_COMMENT = re.compile(r"^[ \t]{0,3}<!--[\s\S]*?-->[ \t]*(?:\r?\n|$)", re.MULTILINE)


def sent_text(content: str) -> str:
    """The part of a memory file Claude Code keeps: without frontmatter and HTML comment
    blocks (inline comments stay)."""
    return _BLOCK_COMMENT.sub("", _FRONTMATTER.sub("", content, count=1))


def strips_comment(content: str, start: int, end: int) -> bool:
    """The HTML comment `content[start:end]` lies in a comment block Claude Code strips (one
    starting a line; an inline comment stays in what it sends)."""
    block = _BLOCK_COMMENT.match(content, content.rfind("\n", 0, start) + 1)
    return block is not None and end <= block.end()


def is_blank(content: str) -> bool:
    """Empty once trimmed: Claude Code sends no block for it (nor for what it includes)."""
    return not js_trim(sent_text(content))


def _split_globs(value: object) -> list[str]:
    """A rule's `paths:` as Claude Code splits them: lists flattened, strings split at commas
    outside braces, `{a,b}` expanded."""
    if isinstance(value, list):
        return [g for item in value for g in _split_globs(item)]
    if not isinstance(value, str):
        return []
    parts, current, depth = [], "", 0
    for char in value:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += (char == "{") - (char == "}")
        current += char
    parts.append(current.strip())
    out: list[str] = []
    for part in filter(None, parts):
        pending = [part]
        while pending:
            item = pending.pop()
            match = re.match(r"^([^{]*)\{([^}]+)\}(.*)$", item)
            if not match:
                out.append(item)
                continue
            pending += [match[1] + alt.strip() + match[3]
                        for alt in reversed(match[2].split(","))]
    return out


def rule_globs(content: str) -> list[str] | None:
    """A rule's `paths:` globs (a trailing `/**` dropped), or None when it applies everywhere
    (no `paths:`, or only `**`)."""
    meta = line_closed_frontmatter(content)
    if not meta or "paths" not in meta:
        return None
    globs = [g[:-3] if g.endswith("/**") else g for g in _split_globs(meta["paths"])]
    globs = [g for g in globs if g]
    if not globs or all(g == "**" for g in globs):
        return None
    return globs


def globs_match(globs: list[str], base: str, target: str) -> bool:
    """Claude Code matches `target`, relative to `base`, gitignore-style."""
    rel = posixpath.relpath(resolve(target), base)
    if rel == "." or rel.startswith("../") or rel == ".." or rel.startswith("/"):
        return False
    spec = pathspec.GitIgnoreSpec.from_lines(globs)
    return spec.match_file(rel)


def ancestors(cwd: str) -> list[str]:
    """`cwd` and the folders above it, top first, without the filesystem root (Claude Code's
    walk stops below it)."""
    chain: list[str] = []
    current = resolve(cwd)
    while dirname(current) != current:
        chain.insert(0, current)
        current = dirname(current)
    return chain


def rule_files(rules_dir: str) -> list[str]:
    """`*.md` files under `rules_dir` in readdir order, a subfolder's where it is listed."""
    return _walk_rules(rules_dir)[0]


def skipped_rule_files(rules_dir: str) -> list[str]:
    """The other files under `rules_dir`, which Claude Code does not read as rules (hidden
    files such as `.gitkeep` and names ending `.md` in another case are left out: the first
    are no rules, the second unverified)."""
    return [p for p in _walk_rules(rules_dir)[1]
            if not posixpath.basename(p).startswith(".") and not p.lower().endswith(".md")]


def _walk_rules(rules_dir: str) -> tuple[list[str], list[str]]:
    """(the `*.md` files, every other file) under `rules_dir`, in readdir order."""
    found: list[str] = []
    others: list[str] = []
    visited: set[str] = set()

    def walk(folder: str) -> None:
        real = os.path.realpath(folder)
        if real in visited:
            return
        visited.add(real)
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            path = posixpath.join(folder, entry.name)
            try:
                is_dir, is_file = entry.is_dir(), entry.is_file()
            except OSError:
                continue
            if is_dir:
                walk(path)
            elif is_file and entry.name.endswith(".md"):
                found.append(path)
            elif is_file:
                others.append(path)

    walk(rules_dir)
    return found, others


def _owner_folder(path: str) -> str:
    """The folder a memory file belongs to: the one holding its `.claude`, else its own."""
    at = path.rfind("/.claude/")
    at = at if at != -1 else path.rfind("/")
    return "/" if at <= 0 else path[:at]


def _top(entry: ClaudeFile, by_path: dict[str, ClaudeFile]) -> ClaudeFile:
    """The memory file whose includes brought `entry` in (itself when it is one)."""
    seen = {entry.path}
    while entry.included_from is not None and entry.included_from in by_path:
        parent = by_path[entry.included_from]
        if parent.path in seen:
            break
        seen.add(parent.path)
        entry = parent
    return entry


_PROJECT_KINDS = ("project", "rule", "local")


def _is_project(entry: ClaudeFile, by_path: dict[str, ClaudeFile]) -> bool:
    return _top(entry, by_path).kind in _PROJECT_KINDS


def _insert_at(files: list[ClaudeFile], folder: str) -> int:
    """Where the agents-md plugin puts a folder's AGENTS.md: before the first project file of
    a folder below it, else after the last project file, else before the auto memory."""
    by_path = {f.path: f for f in files}
    for i, f in enumerate(files):
        if _is_project(f, by_path) and _owner_folder(_top(f, by_path).path).startswith(
                folder.rstrip("/") + "/"):
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


class ClaudeLoader:
    def __init__(self, home: str, *, reader: FileReader | None = None):
        self.home = resolve(home)
        self.reader = reader or FileReader()
        self.diagnostics: list[Diagnostic] = []
        self.include_targets: set[str] = set()  # every include tried, found or not
        self.cwd = "/"
        self.processed: set[str] = set()  # what this load has read (each file once)

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
                  out: list[ClaudeFile], external: bool) -> None:
        tokens = [t for t in find_includes(sent_text(text)) if not t.in_code]
        if not tokens:
            return
        # Positions for diagnostics: the same includes found in the file as written.
        located = [t for t in find_includes(text) if not t.in_code]
        if depth >= MAX_INCLUDE_DEPTH:
            for token in located:
                self._diag(path, text, token.start, token.end, "warning", "import-too-deep",
                           f"`@{token.path}` is not included: Claude Code follows "
                           f"includes {MAX_INCLUDE_DEPTH} levels deep")
            return
        wanted = {t.path for t in tokens}
        for token in located:
            if token.path not in wanted:
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
            if target in self.processed:
                continue  # already read in this load: sent once
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
            if not external and not is_subpath(self.cwd, target):
                # Said where the file is worked on; from a folder below, a file above keeps
                # its includes out (that is its folder's business, not a problem of it).
                if is_subpath(self.cwd, path):
                    self._diag(path, text, token.start, token.end, "warning",
                               "import-outside-root",
                               f"`@{raw}` includes {target}, outside the working folder "
                               f"{self.cwd}: Claude Code asks before loading it, and does "
                               "not load it when nobody can answer (a non-interactive run)")
                continue
            if external:
                root = repository_root(dirname(path)) or dirname(path)
                if not (is_subpath(root, target) or is_subpath(self.home, target)):
                    self._diag(path, text, token.start, token.end, "info",
                               "import-outside-root",
                               f"`@{raw}` includes {target}, outside the repository and your "
                               "home folder; Claude Code reads it")
            self.processed.add(target)
            if is_blank(read.content):
                continue
            self._too_large(target, read.content, read.size)
            out.append(ClaudeFile(target, "include", read.content, included_from=path))
            self._includes(target, read.content, seen | {target}, depth + 1, out, external)

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
        """Read a memory file (and what it includes) into `out`; None when it cannot be read,
        was read already in this load, or is blank."""
        if path in self.processed:
            return None
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
        for folder in ancestors(cwd):
            if folder == self.home or folder == claude_home(self.home):
                continue
            self.add(posixpath.join(folder, "CLAUDE.md"), "project", files)
            self.add(posixpath.join(folder, ".claude", "CLAUDE.md"), "project", files)
            self._rules(posixpath.join(folder, ".claude", "rules"), folder, files, conditional)
            self.add(posixpath.join(folder, "CLAUDE.local.md"), "local", files)
        index = auto_memory_index(self.home, cwd)
        read = self._read(index)
        if read.content is not None:
            kept, cut_line, warning = truncate_index(read.content)
            files.append(ClaudeFile(index, "auto", kept))
            self._check_index(index, read.content, cut_line,
                              kept.removesuffix(warning) if warning else kept)
        if not self.is_claude_project(cwd, files):
            files = self._agents_fallback(cwd, files)
        return ClaudeLoad(cwd, files, conditional, self.diagnostics)

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
               and is_subpath(_owner_folder(f.path), cwd)
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
            groups.setdefault(_owner_folder(_top(f, tops).path), []).append(f)
        for folder, group in groups.items():
            at = _insert_at(out, folder)
            out[at:at] = group
        return out

    def _rules(self, rules_dir: str, base: str, files: list[ClaudeFile],
               conditional: list[ClaudeFile], kind: str = "rule") -> None:
        """`*.md` under a rules folder, subfolders included where they come, in the order the
        directory lists them (readdir: Claude Code does not sort): a rule with `paths:`
        frontmatter applies only to matching files (relative to `base`)."""
        for path in rule_files(rules_dir):
            if path in self.processed:
                continue
            read = self._read(path)
            if read.content is None:
                continue
            globs = rule_globs(read.content)
            if globs is not None:
                self.processed.add(path)
                if not is_blank(read.content):
                    conditional.append(ClaudeFile(path, kind, read.content, applies_to=globs,
                                                  rule_base=base))
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

    def _check_index(self, path: str, text: str, cut_line: int | None, kept: str) -> None:
        if cut_line is not None:
            # The cut falls where the kept text ends: a line start after 200 lines, or inside
            # a line at the byte budget (a split character is dropped whole).
            offset = len(kept) + (1 if len(kept) < len(text) and text[len(kept)] == "\n"
                                  and kept.count("\n") + 1 < cut_line else 0)
            lost_bytes = len(text.encode("utf-8")) - len(kept.encode("utf-8"))
            lines = text.count("\n") + (0 if text.endswith("\n") else 1)
            lost_lines = lines - cut_line + 1
            self._diag(path, text, offset, offset, "warning", "memory-index-truncated",
                       f"Claude Code loads only the first {INDEX_MAX_LINES} lines or "
                       f"{INDEX_MAX_BYTES:,} bytes of MEMORY.md: everything from here on is "
                       f"cut — {lost_bytes:,} bytes in {lost_lines:,} line(s) not sent (and a "
                       "warning is appended)")
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


NESTED_NAMES = CLAUDE_NAMES


@dataclass
class ClaudeJitFile:
    file: ClaudeFile
    reason: str
    hook: bool = False  # sent by the agents-md plugin's hook, not as a memory reminder


def on_read_payloads(entries: list[ClaudeJitFile]) -> list[str]:
    """What Claude Code 2.1.330 adds after the Read, message by message: one
    `<system-reminder>` per memory file beside the tool result (joined by a line break), then
    the agents-md plugin's nested AGENTS.md as a system message."""
    reminders = [f"<system-reminder>\nContents of {e.file.path}:\n\n"
                 f"{sent_text(e.file.content)}\n</system-reminder>"
                 for e in entries if not e.hook]
    hooked = [f"Contents of {e.file.path}:\n\n{sent_text(e.file.content)}"
              for e in entries if e.hook]
    parts = ["\n".join(reminders)] if reminders else []
    if hooked:
        parts.append("tool.call hook additional context: " + "\n".join(hooked))
    return parts


def on_read_text(entries: list[ClaudeJitFile]) -> str:
    """The messages added after the Read, a line apart."""
    return "\n".join(on_read_payloads(entries))


class ClaudeJitSession(AgentJitSession):
    """What Claude Code adds after its Read tool reads a file, as 2.1.330 does it: the user's
    `paths:` rules that match; for each folder between the working folder (excluded) and the
    file, top first, its CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md (with their includes),
    its `.claude/rules` and those of its rules whose `paths:` match; then the matching `paths:`
    rules of the working folder and the folders above it. Without CLAUDE.md at start (the
    agents-md plugin's fallback), the AGENTS.md files of the folders between follow. Nothing
    already in context is sent again."""

    def __init__(self, home: str, root: str, reader: FileReader | None = None):
        self.root = resolve(root)
        self.home = resolve(home)
        self.reader = reader
        self.loader = ClaudeLoader(home, reader=reader)
        self.startup = self.loader.load(self.root)
        self.in_context = list(self.startup.files)
        self.loaded = {f.path for f in self.startup.files}
        self.agents_mode = not self.loader.is_claude_project(self.root, self.startup.files)

    def load_for(self, path: str) -> JitLoad:
        """`touch` in the shape every agent's JIT session has (Claude Code appends no text
        to the tool's output: the files join its context)."""
        entries = self.touch(path)
        added = [JitFile(e.file.path, e.file.content, e.reason) for e in entries]
        return JitLoad(resolve(path), added, on_read_text(entries),
                       on_read_payloads(entries))

    def _conditional(self, rules_dir: str, base: str, target: str, kind: str
                     ) -> list[ClaudeFile]:
        """`rules_dir`'s `paths:` rules that match `target` (relative to `base`)."""
        found: list[ClaudeFile] = []
        self.loader._rules(rules_dir, base, [], found, kind)
        return [r for r in found if globs_match(r.applies_to, base, target)]

    def touch(self, path: str) -> list[ClaudeJitFile]:
        path = resolve(path)
        if not is_subpath(self.root, path):
            return []  # only a file in the working folder brings memory in
        loader = self.loader
        loader.begin(self.root)
        found: list[tuple[ClaudeFile, str]] = []
        user_rules = posixpath.join(claude_home(self.home), "rules")
        for rule in self._conditional(user_rules, self.root, path, "userRule"):
            found.append((rule, "paths: " + ", ".join(rule.applies_to)))
        nested: list[str] = []
        current = dirname(path)
        while current != self.root and dirname(current) != current:
            if is_subpath(self.root, current):
                nested.insert(0, current)
            current = dirname(current)
        for folder in nested:
            here = f"{posixpath.relpath(folder, self.root)}/ is read"
            files: list[ClaudeFile] = []
            for name in NESTED_NAMES:
                loader.add(posixpath.join(folder, name),
                           "local" if name == "CLAUDE.local.md" else "project", files)
            rules_dir = posixpath.join(folder, ".claude", "rules")
            # The unconditional rules and the `paths:` ones are two walks from the same
            # start (what one reads does not hide a file from the other).
            before = set(loader.processed)
            loader._rules(rules_dir, folder, files, [])
            found += [(f, "included" if f.kind == "include" else here) for f in files]
            after, loader.processed = loader.processed, before
            for rule in self._conditional(rules_dir, folder, path, "rule"):
                found.append((rule, "paths: " + ", ".join(rule.applies_to)))
            loader.processed |= after
        for folder in ancestors(self.root):
            rules_dir = posixpath.join(folder, ".claude", "rules")
            for rule in self._conditional(rules_dir, folder, path, "rule"):
                found.append((rule, "paths: " + ", ".join(rule.applies_to)))
        added: list[ClaudeJitFile] = []
        for entry, reason in found:
            if entry.path in self.loaded or entry.path == path:
                continue
            self.loaded.add(entry.path)
            added.append(ClaudeJitFile(entry, reason))
        self.loaded.add(path)
        if self.agents_mode:
            added += self._nested_agents(path)
        return added

    def _nested_agents(self, path: str) -> list[ClaudeJitFile]:
        """The agents-md plugin: AGENTS.md of the folders strictly between the working folder
        and the read file, where no CLAUDE.md is."""
        if not path.startswith(self.root.rstrip("/") + "/"):
            return []
        folders: list[str] = []
        current = dirname(path)
        while current.startswith(self.root.rstrip("/") + "/"):
            folders.insert(0, current)
            current = dirname(current)
        loader = ClaudeLoader(self.home, reader=self.reader)
        loader.begin(self.root)
        keep = {f.path for f in self.in_context if f.kind in ("managed", "user")}
        agents: list[ClaudeFile] = []
        claude: list[ClaudeFile] = []
        for folder in folders:
            loader.processed = set(keep)
            mine: list[ClaudeFile] = []
            for name in CLAUDE_NAMES:
                loader.add(posixpath.join(folder, name), "project", mine)
            claude += mine
            loader.processed = set(keep)
            theirs: list[ClaudeFile] = []
            for name in AGENTS_NAMES:
                loader.add(posixpath.join(folder, name), "project", theirs)
            if not mine:
                agents += theirs
        out: list[ClaudeJitFile] = []
        for entry in dedupe_against(agents, [*self.in_context, *claude]):
            if entry.path in self.loaded or entry.path == path:
                continue
            self.loaded.add(entry.path)
            out.append(ClaudeJitFile(entry, "AGENTS.md (no CLAUDE.md here)", hook=True))
        return out
