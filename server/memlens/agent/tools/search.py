"""Search tools: glob finds files by pattern, search_file_content finds lines by regular
expression. Search runs on RE2, a linear-time engine, within a time and a match budget."""

from __future__ import annotations

import fnmatch
import posixpath
import re
import threading
import time
from typing import Any, ClassVar

from pydantic import Field

from memlens.agent.tools.base import (
    STRING,
    NonBlank,
    PlannedCall,
    ToolArgs,
    ToolOutcome,
    ToolRefused,
)
from memlens.agent.tools.files import WorkspaceTool

MAX_RESULTS = 200
SEARCH_SECONDS = 10.0  # a search's time budget
SEARCH_FILE_BYTES = 2_000_000  # bytes of one file a search reads
MAX_PATTERN_CHARS = 10_000


class GlobArgs(ToolArgs):
    pattern: NonBlank
    path: str | None = None


class Glob(WorkspaceTool):
    name = "glob"
    description = "Finds files whose path matches a glob pattern (e.g. **/*.py)."
    properties: ClassVar[dict[str, Any]] = {
        "pattern": STRING, "path": {**STRING, "description": "Folder to search in."}}
    arguments = GlobArgs

    def plan(self, args: dict[str, Any], params: ToolArgs) -> PlannedCall:
        assert isinstance(params, GlobArgs)
        self.workspace.allow_listing(params.path)
        return super().plan(args, params)

    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, GlobArgs)
        pattern = params.pattern
        base = self.workspace.directory(params.path or self.workspace.roots[0])
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines([pattern if "/" in pattern
                                                  else f"**/{pattern}"])
        matches = [p for p in self.workspace.walk(base, stop)
                   if spec.match_file(posixpath.relpath(p, base))]
        shown = matches[:MAX_RESULTS]
        output = (f"Found {len(matches)} file(s) matching \"{pattern}\" within {base}:\n"
                  + "\n".join(shown))
        return ToolOutcome(True, output, f"{len(matches)} match(es)")


class SearchArgs(ToolArgs):
    pattern: str = Field(min_length=1, max_length=MAX_PATTERN_CHARS)
    path: str | None = None
    include: str | None = None


class SearchFileContent(WorkspaceTool):
    name = "search_file_content"
    description = ("Searches files for a regular expression; returns matching lines with their "
                   "file and line number.")
    properties: ClassVar[dict[str, Any]] = {
        "pattern": STRING, "path": {**STRING, "description": "Folder to search in."},
        "include": {**STRING, "description": "Glob that files must match."}}
    arguments = SearchArgs

    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, SearchArgs)
        pattern = params.pattern
        regex = compile_search(pattern)
        base = self.workspace.directory(params.path or self.workspace.roots[0])
        include = params.include
        deadline = time.monotonic() + SEARCH_SECONDS
        hits: list[str] = []
        notes: list[str] = []
        stopped = (f"[search stopped after {SEARCH_SECONDS:g} s: results are incomplete; "
                   "narrow the path or the include glob]")
        files = self.workspace.walk(base, stop, deadline)
        if time.monotonic() > deadline:
            notes.append(stopped)
            files = []
        for path in files:
            if stop.is_set():
                notes.append("[search cancelled: results are incomplete]")
                break
            if time.monotonic() > deadline:
                notes.append(stopped)
                break
            if include and not fnmatch.fnmatch(posixpath.basename(path), include) \
                    and not fnmatch.fnmatch(posixpath.relpath(path, base), include):
                continue
            data = self.workspace.policy.read_found(path, SEARCH_FILE_BYTES)
            if data is None or b"\x00" in data[:8192]:
                continue
            lines = data.decode("utf-8", "replace").splitlines()
            if not regex.may_match(lines):
                continue
            for number, line in enumerate(lines, 1):
                if number % 10_000 == 0 and (stop.is_set() or time.monotonic() > deadline):
                    break
                if regex.search(line):
                    hits.append(f"{path}:{number}: {line[:500]}")
                    if len(hits) >= MAX_RESULTS:
                        break
            if len(hits) >= MAX_RESULTS:
                notes.append(f"[results truncated at {MAX_RESULTS} matches; narrow the "
                             "pattern, the path or the include glob]")
                break
        output = (f"Found {len(hits)} match(es) for pattern \"{pattern}\" in {base}:\n"
                  + "\n".join([*hits, *notes]))
        return ToolOutcome(True, output, f"{len(hits)} match(es)")


class SearchPattern:
    """A compiled search pattern on RE2 (linear time: no pattern can run away), with a whole
    file test first: most files have no match, and one RE2 call over the file is much cheaper
    than one per line."""

    def __init__(self, compiled: Any, whole: Any | None):
        self._compiled = compiled
        self._whole = whole  # the pattern in multi-line mode (None: test every line)

    def search(self, line: str) -> bool:
        return self._compiled.search(line) is not None

    def may_match(self, lines: list[str]) -> bool:
        """False only when no line can match (the lines joined by newlines, ^ and $ at each
        line's ends; a match across lines is a false positive the per-line test drops)."""
        return self._whole is None or self._whole.search("\n".join(lines)) is not None


def _whole_text_pattern(re2: Any, pattern: str, options: Any) -> Any | None:
    """The pattern in multi-line mode, for the whole-file test; None when it could miss a
    line's match: \\A and \\z, or a flag turned off inside the pattern, say something else of
    one text than of each line."""
    if "\\A" in pattern or "\\z" in pattern or re.search(r"\(\?[a-zA-Z]*-", pattern):
        return None
    try:
        return re2.compile(f"(?m:{pattern})", options)
    except re2.error:
        return None


def compile_search(pattern: str) -> SearchPattern:
    """RE2 for the model's pattern; ToolRefused for an invalid or unsupported one."""
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20
    try:
        compiled = re2.compile(pattern, options)
        return SearchPattern(compiled, _whole_text_pattern(re2, pattern, options))
    except UnicodeError:
        raise ToolRefused("Invalid regular expression: it is not valid Unicode text.") from None
    except re2.error as err:
        detail = err.args[0] if err.args else err
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as err:
        raise ToolRefused(f"Invalid regular expression: {err}") from None
    raise ToolRefused(f"Regular expression {pattern!r} is not supported: {detail}. Search uses "
                      "RE2 (linear time), which has no backreferences or lookaround; rewrite "
                      "the pattern without them.")
