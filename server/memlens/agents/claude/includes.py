"""`@path` includes as Claude Code finds and follows them: found by markdown.py as its lexer
finds them, text files only, four levels deep, each file once per load, a project file's
includes inside the working folder unless the user approved external includes in
`~/.claude.json` (`IncludeReader`, the read state every load shares)."""

from __future__ import annotations

import functools
import os
import posixpath

from memlens.agents.claude.markdown import includes as markdown_includes
from memlens.agents.claude.markdown import split_frontmatter
from memlens.agents.claude.messages import MAX_FILE_CHARS, ClaudeFile, is_blank
from memlens.files import tree
from memlens.files.fsread import FileReader, ReadResult
from memlens.files.nodecompat import dirname, is_subpath, resolve
from memlens.files.roots import repository_root
from memlens.files.structured import json_file_or_none
from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Severity
from memlens.text.references import ImportToken, find_code_regions, find_references
from memlens.text.textpos import LineIndex

MAX_INCLUDE_DEPTH = 4  # levels of includes below a memory file
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


# Claude Code's include path runs to any whitespace (Python's `\s`, every character
# `str.isspace` accepts: all of them lie below U+3001) and starts with `.`, `/`, `~` or a letter
# or digit of any script.
_PATH_ENDS = frozenset(c for c in map(chr, range(0x3001)) if c.isspace())


def _include_may_start(char: str) -> bool:
    return char in "./~" or char.isalnum()


def find_includes(text: str) -> list[ImportToken]:
    """Every `@path` written in `text`, each where it is written; the ones Claude Code follows
    (what its lexer finds: markdown.includes, the same reading the loader uses) have
    `in_code` False and the path it reads (`#fragment` cut, `\\ ` unescaped), spanning the
    written path without its fragment (a rename keeps the fragment); the others (in code, in
    a comment, in the frontmatter, not a path Claude Code takes) have `in_code` True."""
    body = split_frontmatter(text)[0]
    offset = len(text) - len(body)
    wanted: dict[str, str] = {}  # the written path without its fragment -> the path read
    for ref in markdown_includes(body):
        wanted.setdefault(ref.raw.split("#", 1)[0], ref.path)
    tokens: list[ImportToken] = []
    placed: set[str] = set()
    for token in find_references(text, path_ends=_PATH_ENDS, may_start=_include_may_start):
        written = text[token.start + 1:token.end].split("#", 1)[0]
        if token.start >= offset and written in wanted and written not in placed:
            placed.add(written)
            tokens.append(ImportToken(token.start, token.start + 1 + len(written),
                                      wanted[written], False))
        else:
            tokens.append(ImportToken(token.start, token.end, token.path, True))
    # What the generic scanner cuts short (an escaped space: `@docs/my\\ notes.md`).
    for written, path in wanted.items():
        if written in placed:
            continue
        start = text.find("@" + written, offset)
        if start >= 0:
            tokens = [t for t in tokens if not (start <= t.start < start + 1 + len(written))]
            tokens.append(ImportToken(start, start + 1 + len(written), path, False))
    return sorted(tokens, key=lambda t: t.start)


# Why an include written between backticks is read all the same (markdown.py `includes`).
IN_CODE_SPAN = (" (backticks do not keep it out: in a list item Claude Code reads the text "
                "as written; a code block would)")


def _written_at(text: str, raw: str) -> ImportToken:
    """Where the include `@raw` is written: its first occurrence where Claude Code takes an
    include (at the start or after whitespace, up to whitespace), else its first occurrence;
    `in_code` says it lies between backticks."""
    needle = "@" + raw
    start = text.find(needle)
    first = start
    while start > 0 and not (text[start - 1] in _PATH_ENDS and (
            start + len(needle) == len(text) or text[start + len(needle)] in _PATH_ENDS
            or text[start + len(needle)] == "#")):
        start = text.find(needle, start + 1)
    start = first if start < 0 else start
    start = max(start, 0)
    in_code = "`" in text and any(lo <= start < hi for lo, hi in find_code_regions(text))
    return ImportToken(start, start + len(needle), raw, in_code)


def external_includes_approved(home: str, cwd: str) -> bool:
    """Whether the user approved includes outside the project for the project `cwd` lies in:
    Claude Code keeps the answer in `~/.claude.json`, under `projects[<project folder>]` (the
    repository's root, else the working folder) as `hasClaudeMdExternalIncludesApproved`."""
    # Claude Code keeps its history there too: the file grows to megabytes
    config = json_file_or_none(posixpath.join(home, ".claude.json"), max_bytes=64 << 20)
    projects = config.get("projects") if isinstance(config, dict) else None
    if not isinstance(projects, dict):
        return False
    entry = projects.get(repository_root(cwd) or cwd)
    return isinstance(entry, dict) and entry.get("hasClaudeMdExternalIncludesApproved") is True


class IncludeReader:
    """The read state of one Claude Code load: each file read once, the include targets tried,
    the diagnostics found; follows a memory file's includes."""

    def __init__(self, home: str, *, reader: FileReader | None = None):
        self.home = resolve(home)
        self.reader = reader or FileReader()
        self.diagnostics: list[Diagnostic] = []
        self.include_targets: set[str] = set()  # every include tried, found or not
        # Every memory file a load tried, found, blank or missing: a blank AGENTS.md that
        # gains text, or one that appears, changes what Claude Code reads (the language
        # server's index redoes its check when a watched file changes).
        self.tried: set[str] = set()
        self.cwd = "/"
        self.processed: set[str] = set()  # what this load has read (each file once)
        self.approved = False  # the user let this project include files outside it

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
        # A file above many folders is included by each of their loads: its includes are
        # read once per command run (files/tree.py; read only, never changed)
        body = split_frontmatter(text)[0]
        refs = tree.run_memo(("claude.includes", body), functools.partial(markdown_includes, body))
        if not refs:
            return
        external = external or self.approved
        # Positions for diagnostics: where each include is written in the file.
        located = [_written_at(text, ref.raw) for ref in refs]
        if depth >= MAX_INCLUDE_DEPTH:
            for token in located:
                self._diag(path, text, token.start, token.end, "warning", "import-too-deep",
                           f"`@{token.path}` is not included: Claude Code follows "
                           f"includes {MAX_INCLUDE_DEPTH} levels deep")
            return
        # Relative to the folder of the file itself (a symlink's target), as Claude Code reads.
        base = dirname(os.path.realpath(path))
        for ref, token in zip(refs, located, strict=True):
            raw = ref.raw
            if ref.path.startswith("~/"):
                target = resolve(self.home, ref.path[2:])
            else:
                target = resolve(base, ref.path)
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
                           "silently skips it" + (IN_CODE_SPAN if token.in_code else ""))
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
