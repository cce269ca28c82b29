"""Turning what the engine saw into diagnostics (docs/reference.md "Diagnostics") on exact source
ranges.

Import diagnostics are derived from the events the import processor recorded while rendering,
so every message describes what Gemini CLI actually does with that token.
"""

from __future__ import annotations

import json
import os
import posixpath
from collections.abc import Iterable

from memlens.agents.gemini.discovery import LoadedFile, MemoryEngine, MemoryLoad, SearchReport
from memlens.agents.gemini.ignore import IgnoreFilter
from memlens.agents.gemini.imports import CHAIN_CAP, ImportEvent, Outcome
from memlens.agents.gemini.projects import PROJECT_MEMORY_INDEX
from memlens.agents.gemini.writing import MEMORY_SECTION_HEADER
from memlens.files.fsread import ReadKind, ReadResult
from memlens.files.nodecompat import is_subpath, resolve
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Severity
from memlens.text.textpos import LineIndex

_TRAILING_PUNCTUATION = ",.;:!?)]}'\"*_>"


class DiagnosticSink:
    """Collects diagnostics, one per (path, range, code), with positions from file text."""

    def __init__(self, engine: MemoryEngine):
        self.engine = engine
        self._items: dict[tuple[str, int, int, str], Diagnostic] = {}
        self._lines: dict[str, LineIndex | None] = {}

    def _index(self, path: str) -> LineIndex | None:
        if path not in self._lines:
            read = self.engine.reader.read(path)
            self._lines[path] = LineIndex(read.content) if read.content is not None else None
        return self._lines[path]

    def add_range(self, path: str, start: int, end: int, severity: Severity, code: str,
                  message: str, detail: str | None = None) -> None:
        index = self._index(path)
        if index is None:
            line, col, end_line, end_col = 1, 1, 1, 1
        else:
            line, col = index.position(start)
            end_line, end_col = index.position(end)
        key = (path, line, col, code)
        if key not in self._items:
            self._items[key] = Diagnostic(path=path, line=line, col=col, end_line=end_line,
                                          end_col=end_col, severity=severity, code=code,
                                          message=message, detail=detail)

    def add_file(self, path: str, severity: Severity, code: str, message: str) -> None:
        """A diagnostic about a whole file, shown on its first line."""
        index = self._index(path)
        end_col = index.line_end(1) if index is not None else 1
        key = (path, 1, 1, code)
        if key not in self._items:
            self._items[key] = Diagnostic(path=path, line=1, col=1, end_line=1, end_col=end_col,
                                          severity=severity, code=code, message=message)

    def add_folder(self, path: str, severity: Severity, code: str, message: str) -> None:
        """A diagnostic about a folder (no text: position 1:1)."""
        key = (path, 1, 1, code)
        if key not in self._items:
            self._items[key] = Diagnostic(path=path, line=1, col=1, end_line=1, end_col=1,
                                          severity=severity, code=code, message=message)

    def sorted(self) -> list[Diagnostic]:
        return sorted(self._items.values(), key=Diagnostic.sort_key)


def _chain_text(chain: Iterable[str]) -> str:
    names = [posixpath.basename(p) for p in chain]
    if len(names) >= CHAIN_CAP:
        names = ["…", *names[-(CHAIN_CAP - 1):]]
    return " → ".join(names)


def _prose_hint(event: ImportEvent) -> str | None:
    """Why a failed token looks like prose rather than an intended import, if it does."""
    path = event.token.path
    stripped = path.rstrip(_TRAILING_PUNCTUATION)
    if stripped != path and stripped:
        candidate = resolve(posixpath.dirname(event.file or event.target), stripped)
        if os.path.exists(candidate):
            return (f"`@{path}` includes trailing punctuation, so Gemini CLI tries to import "
                    f"'{path}' and fails; `@{stripped}` exists — remove the punctuation or put "
                    "a space before it")
    word = stripped or path
    if not word.startswith((".", "/")) and "/" not in word and "." not in word:
        return (f"`@{path}` looks like prose (a mention), but Gemini CLI treats every `@word` "
                "after whitespace as an import and embeds an ENOENT error in the prompt; "
                "wrap it in backticks to keep it literal")
    return None


def _failure_message(event: ImportEvent, read: ReadResult | None
                     ) -> tuple[str, Severity, str, str | None]:
    """(code, severity, short message, detail): the message names the import as written; the
    detail has the resolved path and the comment Gemini CLI embeds in its place."""
    kind = read.kind if read is not None else ReadKind.ERROR
    node_text = f"Gemini CLI embeds: <!-- Import failed: {event.token.path} - {event.error} -->"
    if kind is ReadKind.MISSING:
        hint = _prose_hint(event)
        if hint is not None:
            return "import-in-prose", "warning", hint, None
        return ("import-not-found", "error", f"Import not found: {event.token.path}",
                f"{event.target} does not exist. {node_text}")
    short, reason = {
        ReadKind.DIRECTORY: ("is a directory", "is a directory"),
        ReadKind.SPECIAL: ("is not a regular file",
                           "is not a regular file (FIFO, socket or device); Gemini CLI may "
                           "block reading it, Memory Lens never opens it"),
        ReadKind.DENIED: ("is not readable", "is not readable (permission denied)"),
    }.get(kind, ("cannot be read", "cannot be read"))
    return ("import-unreadable", "error", f"Import {short}: {event.token.path}",
            f"{event.target} {reason}. {node_text}")


def add_import_diagnostics(sink: DiagnosticSink, files: Iterable[LoadedFile]) -> None:
    for loaded in files:
        seen_targets: dict[str, tuple[str, ...]] = {}
        for event in loaded.events:
            if event.file is None:
                continue
            _add_event(sink, event, seen_targets)


def _add_event(sink: DiagnosticSink, event: ImportEvent,
               seen_targets: dict[str, tuple[str, ...]]) -> None:
    token = event.token
    path = event.file
    assert path is not None
    start, end = token.start, token.end
    raw = f"@{token.path}"
    outcome = event.outcome
    in_reimport = len(set(event.chain)) < len(event.chain)
    if outcome is Outcome.URL:
        sink.add_range(path, start, end, "error", "import-url",
                       f"`{raw}` is a URL; Gemini CLI never fetches imports and embeds "
                       "'Import failed … Path traversal attempt' instead")
    elif outcome is Outcome.OUTSIDE_ROOT:
        markers = ", ".join(sink.engine.settings.memory_boundary_markers) or "none configured"
        sink.add_range(path, start, end, "error", "import-outside-root",
                       f"Import outside the project root: {token.path}",
                       f"`{raw}` resolves to {event.target}, outside the import root; Gemini CLI "
                       "refuses it ('Path traversal attempt'). Imports may only reach files under "
                       f"the nearest folder with a boundary marker ({markers}), or the file's "
                       "own folder when there is none")
    elif outcome is Outcome.SYMLINK_ESCAPE:
        sink.add_range(path, start, end, "error", "import-outside-root",
                       f"Import leaves the project root through a symlink: {token.path}",
                       f"`{raw}` reaches {os.path.realpath(event.target)} through a symbolic "
                       "link that leaves the import root; Memory Lens (like Gemini CLI after "
                       "v0.43.0) refuses it ('Path traversal attempt')")
    elif outcome is Outcome.FAILED:
        code, severity, message, detail = _failure_message(event, event.read)
        sink.add_range(path, start, end, severity, code, message, detail)
    elif outcome is Outcome.ALREADY_PROCESSED:
        if not in_reimport:
            sink.add_range(path, start, end, "warning", "import-cycle",
                           f"`{raw}` closes an import cycle ({_chain_text(event.chain)} → "
                           f"{posixpath.basename(event.target)}); Gemini CLI stops here with "
                           "'File already processed'")
    elif outcome is Outcome.DUPLICATE:
        sink.add_range(path, start, end, "info", "import-diamond",
                       f"{event.target} is already included through another import; the flat "
                       "format includes each file once, so this import adds nothing")
    elif outcome is Outcome.TOO_DEEP:
        sink.add_range(path, start, end, "warning", "import-too-deep",
                       f"`{raw}` stays literal text: when loaded via "
                       f"{_chain_text(event.chain)} it is at import depth {event.depth}, and "
                       "Gemini CLI expands at most 5 nested levels")
    elif outcome is Outcome.IMPORTED:
        if event.target in event.chain:
            sink.add_range(path, start, end, "warning", "import-cycle",
                           f"`{raw}` closes an import cycle ({_chain_text(event.chain)} → "
                           f"{posixpath.basename(event.target)}); Gemini CLI includes "
                           f"{posixpath.basename(event.target)} once more before it stops")
        elif event.target in seen_targets and not in_reimport:
            first = seen_targets[event.target]
            sink.add_range(path, start, end, "info", "import-diamond",
                           f"{event.target} is also imported via {_chain_text(first)}; "
                           "Gemini CLI includes its content twice")
        else:
            seen_targets.setdefault(event.target, event.chain)
        read = event.read
        if read is not None and read.size > sink.engine.settings.large_file_bytes:
            sink.add_range(path, start, end, "warning", "file-too-large",
                           f"Import is {read.size:,} bytes: {token.path}",
                           f"{event.target} is {read.size:,} bytes: Gemini CLI puts all of it "
                           "in every prompt")
        if read is not None and (read.binary or read.invalid_utf8):
            what = "binary data" if read.binary else "invalid UTF-8"
            sink.add_range(path, start, end, "error", "import-unreadable",
                           f"Import contains {what}: {token.path}",
                           f"{event.target} contains {what}; Gemini CLI includes it with each "
                           "bad byte sequence replaced by U+FFFD")


def add_file_diagnostics(sink: DiagnosticSink, files: Iterable[LoadedFile],
                         large_file_bytes: int) -> None:
    for loaded in files:
        read = loaded.read
        if read.kind is ReadKind.SPECIAL:
            sink.add_file(loaded.path, "error", "file-unreadable",
                          "Not a regular file (a FIFO, socket or device): Gemini CLI may block "
                          "reading it forever; Memory Lens never opens it")
            continue
        if read.kind is ReadKind.DENIED:
            sink.add_file(loaded.path, "error", "file-unreadable",
                          f"Not readable: {read.error}; Gemini CLI skips it")
            continue
        if read.kind is not ReadKind.OK:
            continue
        if read.size > large_file_bytes:
            sink.add_file(loaded.path, "warning", "file-too-large",
                          f"{read.size:,} bytes: Gemini CLI puts all of it in every prompt")
        if read.binary or read.invalid_utf8:
            what = "binary data" if read.binary else "invalid UTF-8"
            sink.add_file(loaded.path, "error", "file-unreadable",
                          f"Contains {what}; Gemini CLI reads it with each bad byte sequence "
                          "replaced by U+FFFD")
        add_duplicate_memories(sink, loaded)
        if read.has_bom and read.content is not None and read.content[1:2] == "@":
            sink.add_file(loaded.path, "warning", "import-in-prose",
                          "The file starts with a byte-order mark, so Gemini CLI does not "
                          "recognise the `@import` at its very start")


def add_link_diagnostics(sink: DiagnosticSink, files: Iterable[LoadedFile],
                         workspace: list[str]) -> None:
    """A workspace memory file that is a symbolic link to a file outside the workspace."""
    real_roots = [os.path.realpath(w) for w in workspace]
    for loaded in files:
        if loaded.tier not in ("project", "jit") or not os.path.islink(loaded.path):
            continue
        real = os.path.realpath(loaded.path)
        if not any(is_subpath(r, real) for r in real_roots):
            sink.add_file(loaded.path, "warning", "read-above-root",
                          f"A symbolic link to {real}, outside the workspace: Gemini CLI reads "
                          "it (and resolves its imports from this folder)")


def add_unreadable_folders(sink: DiagnosticSink, folders: Iterable[tuple[str, str]]) -> None:
    for folder, reason in folders:
        sink.add_folder(folder, "warning", "folder-unreadable",
                        f"Gemini CLI skips this unreadable folder ({reason}); memory files "
                        "inside it are never loaded")


def add_duplicate_memories(sink: DiagnosticSink, loaded: LoadedFile) -> None:
    """The same fact saved twice under `## Gemini Added Memories` (or in a private MEMORY.md)."""
    text = loaded.read.content
    if not text:
        return
    start = text.find(MEMORY_SECTION_HEADER)
    if start != -1:
        end = text.find("\n## ", start + len(MEMORY_SECTION_HEADER))
        region = (start, len(text) if end == -1 else end)
    elif posixpath.basename(loaded.path) == PROJECT_MEMORY_INDEX:
        region = (0, len(text))
    else:
        return
    seen: dict[str, int] = {}
    offset = region[0]
    for line in text[region[0]:region[1]].split("\n"):
        stripped = line.rstrip("\r")
        if stripped.startswith("- "):
            fact = " ".join(stripped[2:].split()).casefold()
            line_no = text.count("\n", 0, offset) + 1
            if fact and fact in seen:
                sink.add_range(loaded.path, offset, offset + len(stripped), "warning",
                               "memory-duplicate-entry",
                               f"This fact is already saved on line {seen[fact]}; the agent "
                               "reads it twice")
            else:
                seen.setdefault(fact, line_no)
        offset += len(line) + 1


def add_settings_diagnostics(sink: DiagnosticSink, settings: MemorySettings) -> None:
    """What settings.json files said that was dropped, on the offending value."""
    for problem in settings.problems:
        if problem.source is None:
            continue
        start = end = 0
        if problem.code != "settings-unreadable":  # that one is on the file as a whole
            text = sink.engine.reader.read(problem.source).content or ""
            literal = json.dumps(problem.value, ensure_ascii=False)
            found = text.find(literal)
            start, end = (found, found + len(literal)) if found >= 0 else (0, 0)
        sink.add_range(problem.source, start, end, problem.severity, problem.code,
                       problem.message)


def add_discovery_diagnostics(sink: DiagnosticSink, load: MemoryLoad,
                              engine: MemoryEngine) -> None:
    add_settings_diagnostics(sink, engine.settings)
    for above in load.above_root:
        if above.project_root:
            reason = (f"it lies in the parent of the repository root {above.project_root}, "
                      "which Gemini CLI's classic upward search also reads")
        else:
            markers = ", ".join(engine.settings.memory_boundary_markers)
            found = f"no boundary marker ({markers}) was found" if markers else (
                "no boundary markers are configured")
            reason = (f"{found} above {above.start_dir}, so Gemini CLI's classic upward "
                      f"search reads every folder up to {posixpath.dirname(engine.home)}")
        sink.add_file(above.path, "warning", "read-above-root",
                      f"Loaded although it is outside the workspace: {reason}")
    add_link_diagnostics(sink, load.files, load.workspace_dirs or [load.cwd])
    for report in load.searches:
        add_unreadable_folders(sink, report.unreadable)
    ignore = IgnoreFilter(load.cwd, respect_git_ignore=engine.settings.respect_git_ignore,
                          respect_gemini_ignore=engine.settings.respect_gemini_ignore)
    for report in load.searches:
        if not report.exhausted:
            continue
        missed: list[str] = []
        for pending in report.pending:
            unreached, _ = engine.downward_search(pending, report.filename, ignore, None,
                                                  skip_dirs=engine.classic_skip_dirs(load.cwd))
            missed += unreached
        for path in missed:
            sink.add_file(path, "warning", "search-budget-exhausted",
                          f"Not loaded: Gemini CLI's downward search from {report.root} stops "
                          f"after {report.max_dirs} folders (context.discoveryMaxDirs; "
                          "node_modules and hidden folders count too) before reaching this file")
    truncated = [f for f in load.files if f.truncated]
    if truncated:
        sink.add_file(truncated[0].path, "warning", "context-truncated",
                      f"The merged context exceeds memlens.maxContextChars "
                      f"({engine.settings.max_context_chars:,}); the preview stops there")


def add_index_stops(sink: DiagnosticSink, stops: Iterable[SearchReport]) -> None:
    """The workspace walk stopped at memlens.maxIndexedFolders before the end of a root."""
    for report in stops:
        sink.add_folder(report.root, "warning", "index-budget-exhausted",
                        index_stop_message(report))


def index_stop_message(report: SearchReport) -> str:
    return (f"Memory Lens stopped walking {report.root} after reading {report.max_dirs:,} "
            "folders (memlens.maxIndexedFolders): memory files in the folders it did not "
            "reach get no diagnostics and no just-in-time preview. Open a smaller folder, "
            "list big generated folders in .geminiignore, or raise "
            "memlens.maxIndexedFolders")


def diagnose(load: MemoryLoad, engine: MemoryEngine, extra_files: Iterable[LoadedFile] = (),
             unreadable_folders: Iterable[tuple[str, str]] = (),
             index_stops: Iterable[SearchReport] = ()) -> list[Diagnostic]:
    sink = DiagnosticSink(engine)
    extra = list(extra_files)
    files = [*load.files, *extra]
    add_import_diagnostics(sink, files)
    add_file_diagnostics(sink, files, engine.settings.large_file_bytes)
    add_discovery_diagnostics(sink, load, engine)
    add_link_diagnostics(sink, extra, load.workspace_dirs or [load.cwd])
    add_unreadable_folders(sink, unreadable_folders)
    add_index_stops(sink, index_stops)
    return sink.sorted()
