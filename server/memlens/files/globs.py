"""Glob matching in linear time, shared by every agent (docs/security.md, "Globs in linear
time").

Each agent keeps its own glob dialect — Copilot CLI, VS Code's chat, Cursor, Claude Code and
Antigravity read `*`, `**`, `{a,b}` and `[...]` differently — and writes it as a regular
expression; this module runs all of them with RE2, whose matching time is linear in the path
however the pattern is written (Python's `re` backtracks: `*a*a…*b` against a 60-character
name does not end). Gitignore-style globs (Cursor, Claude Code, Antigravity) go through
pathspec with its RE2 backend named, not its default, which falls back to Python's `re`;
Gemini CLI's ignore lines, whose order its own rules apply, are read by pathspec one by one
(`gitignore_regexes`) and compiled here.

What is matched is bounded by sizes, never by how globs are arranged:

* a file's globs past `MAX_GLOBS`, and a glob longer than `MAX_GLOB_CHARS`, are not matched
  (`skipped_globs` counts them; a check reports `glob-budget-exceeded`);
* each distinct regular expression is compiled once and kept (`compiled`, a cache larger than
  the globs one check can hold, so a loop over a file's globs never recompiles them);
* one check runs at most `MATCH_BUDGET` glob × path matches (`MatchBudget`; a long glob against
  a long path counts more, `match_cost`); past it the check stops judging globs against the
  workspace and says which file it left unjudged.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from memlens.protocol.memory import Diagnostic

MAX_GLOBS = 100  # globs of one file that are matched (a real file has a handful)
MAX_GLOB_CHARS = 256  # a longer glob is not matched (RE2's time is glob × path at worst)
MAX_EXPANDED = 10_000  # globs `{a,b}` expands one file's globs to, at most (then it stops)
_EXPANSION_STEPS = 20 * MAX_EXPANDED  # `{a,b}` groups expanded for one file, at most
MATCH_BUDGET = 1_000_000  # glob × path matches one check runs (`match_cost` each)
# RE2 is linear, but in the glob's size times the path's when its DFA gives up: a match counts
# one more for each COST_CHARS of its glob's characters times its path's (a 256-character glob
# of stars against a 4,096-character path took ~1 ms, some 256 ordinary matches).
COST_CHARS = 4_096
BUDGET_EXCEEDED = "glob-budget-exceeded"
_MAX_MEM = 1 << 20  # RE2's memory for one compiled glob (a 256-character one needs ~20 KB)
_SURROGATE = re.compile("[\ud800-\udfff]")
# Counts every match run since start (tests read it: the work is bounded by counting).
operations = 0


def literal(char: str) -> str:
    """RE2 text matching `char` itself (ASCII letters and digits as they are, anything else
    by its code point, so no character can mean syntax)."""
    if char.isascii() and (char.isalnum() or char == "_"):
        return char
    return f"\\x{{{ord(char):x}}}"


def _options(ignore_case: bool) -> Any:
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.never_capture = True
    options.log_errors = False
    options.max_mem = _MAX_MEM
    return options


@functools.lru_cache(maxsize=4096)
def compiled(regex: str, ignore_case: bool = False) -> Any | None:
    """`regex` compiled by RE2 (None: RE2 does not accept it, it is too large, or it holds a
    lone surrogate, which YAML's `"\\ud800"` can write and UTF-8 cannot)."""
    import re2

    try:
        return re2.compile(regex, _options(ignore_case))
    except (re2.error, UnicodeError):
        return None


def matchable(path: str) -> bytes:
    """`path` as RE2 reads it: UTF-8, a byte that was not UTF-8 on disk (a lone surrogate
    here) read as U+FFFD, so such a name matches `*` and `?` and never fails an encoding."""
    if not path.isascii():
        path = _SURROGATE.sub("\ufffd", path)
    return path.encode("utf-8")


def full_match(regex: str, path: str, *, ignore_case: bool = False) -> bool:
    """`regex` (an agent's glob, translated) matches the whole of `path`."""
    global operations
    pattern = compiled(regex, ignore_case)
    if pattern is None:
        return False
    operations += 1
    return pattern.fullmatch(matchable(path)) is not None


def search(pattern: Any, path: str) -> bool:
    """`pattern` (from `compiled`, kept by the caller) matches somewhere in `path`."""
    global operations
    operations += 1
    return pattern.search(matchable(path)) is not None


class GlobList(list[str]):
    """The globs a file's text expands to; `stopped`: `{a,b}` expansion stopped before the end
    (`MAX_EXPANDED` globs, or `_EXPANSION_STEPS` steps), so there are more than these."""

    stopped = False


def expand_braces(part: str, group: re.Pattern[str], out: GlobList) -> None:
    """Append to `out` `part` with its `{a,b}` alternatives expanded, depth first in order;
    `group` is the agent's reading of one group (prefix, alternatives, rest). `{a,b}` twenty
    times over is a million globs: past `MAX_EXPANDED` in `out` (or `_EXPANSION_STEPS` groups
    expanded, as when many one-alternative groups follow them) it stops; a part too long to
    be matched is kept whole (it is skipped as too long)."""
    pending = [part]
    steps = 0
    while pending:
        if len(out) >= MAX_EXPANDED or steps >= _EXPANSION_STEPS:
            out.stopped = True
            return
        item = pending.pop()
        match = group.match(item) if len(item) <= MAX_GLOB_CHARS else None
        if not match:
            out.append(item)
            continue
        steps += 1
        pending += [match[1] + alt.strip() + match[3] for alt in reversed(match[2].split(","))]


def skipped_globs(globs: Sequence[str]) -> int:
    """How many of a file's `globs` are not matched (past `MAX_GLOBS`, or too long; at least
    one more when their expansion stopped)."""
    count = max(0, len(globs) - MAX_GLOBS) + sum(len(g) > MAX_GLOB_CHARS
                                                 for g in globs[:MAX_GLOBS])
    return max(count, 1) if stopped(globs) else count


def stopped(globs: Sequence[str]) -> bool:
    """`globs` are a `GlobList` whose `{a,b}` expansion stopped before the end."""
    return isinstance(globs, GlobList) and globs.stopped


def bounded(globs: Sequence[str]) -> list[str]:
    """The globs of a file that are matched, in order."""
    return [g for g in globs[:MAX_GLOBS] if len(g) <= MAX_GLOB_CHARS]


# ------------------------------------------------------------- gitignore-style globs


def _spec_errors() -> tuple[type[Exception], ...]:
    import re2

    # what pathspec raises for a line it or RE2 cannot read (a bad range, `[[:alpha:]]`, `!`,
    # a lone surrogate, a set too large); an RE2 that cannot be imported is not among them
    return ValueError, re.error, re2.error


@functools.lru_cache(maxsize=1024)
def gitignore_spec(lines: tuple[str, ...]) -> Any:
    """pathspec's gitignore matcher for `lines` (those `bounded` keeps) on RE2; a line pathspec
    or RE2 cannot read is left out (it matches nothing) instead of failing the answer."""
    errors = _spec_errors()
    lines = tuple(bounded(lines))
    try:
        return _spec(lines)
    except errors:
        pass
    kept = []
    for line in lines:
        try:
            _spec((line,))
        except errors:
            continue
        kept.append(line)
    try:
        return _spec(tuple(kept))
    except errors:  # each fits RE2 alone, not together: nothing is matched
        return _spec(())


def gitignore_regexes(line: str) -> list[tuple[str, bool]]:
    """pathspec's reading of one gitignore-style line, for a caller that applies the rules
    itself: (regular expression, whether it ignores) for each rule the line stands for; none
    for a blank, a comment, or a line pathspec cannot read. Run them with `compiled`."""
    import pathspec

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # "simple": only the patterns are wanted; no RE2 set is built for one line
            patterns = pathspec.GitIgnoreSpec.from_lines([line], backend="simple").patterns
    except _spec_errors():
        return []
    out = []
    for item in patterns:
        regex = getattr(item, "regex", None)
        if item.include is not None and regex is not None:
            out.append((str(regex.pattern), bool(item.include)))
    return out


def _spec(lines: tuple[str, ...]) -> Any:
    import pathspec

    with warnings.catch_warnings():
        # pathspec compiles each line with Python's `re` too (never run here: RE2 matches),
        # which warns about `[[` on stderr
        warnings.simplefilter("ignore")
        return pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")


def gitignore_matcher(lines: Iterable[str]) -> Callable[[str], bool]:
    """Whether a path (relative, `/`-separated) is matched by the gitignore-style `lines`:
    built once for a loop over many paths."""
    spec = gitignore_spec(tuple(lines))

    def match(path: str) -> bool:
        global operations
        operations += 1
        return bool(spec.match_file(matchable(path).decode("utf-8")))

    return match


# ------------------------------------------------------------------- the budget


def match_cost(globs: Sequence[str], path: str) -> int:
    """What matching `path` against each of `globs` costs the budget: one a glob, or more
    when the globs' characters times the path's pass `COST_CHARS` each."""
    return max(len(globs), sum(map(len, globs)) * len(path) // COST_CHARS)


class MatchBudget:
    """The glob × path matches one check may still run."""

    def __init__(self, limit: int | None = None) -> None:
        self.left = MATCH_BUDGET if limit is None else limit

    def take(self, count: int) -> bool:
        """Spend `count` matches; False when fewer are left, and from then on (the check
        stops matching globs at the first refusal, so what it skipped is all after it)."""
        if count > self.left:
            self.left = 0
            return False
        self.left -= count
        return True


def budget_diagnostic(path: str, line: int, label: str, *, skipped: int = 0, total: int = 0,
                      files: int = 0, more: bool = False) -> Diagnostic:
    """`glob-budget-exceeded`: `skipped` of a file's `total` globs are not matched at all
    (`more`: `{a,b}` expansion stopped, there are more), or (with `files`) its globs were not
    judged against the workspace's `files` files."""
    if files:
        message = (f"Memory Lens stopped matching globs in this check (its budget of "
                   f"{MATCH_BUDGET:,} glob × file matches is spent): the {total:,} "
                   f"{label} of this file were not matched against all {files:,} files of "
                   "the workspace, so whether they match one is not reported")
    else:
        plus = " or more" if more else ""
        message = (f"Memory Lens does not match {skipped:,}{plus} of the {total:,}{plus} "
                   f"{label} of this file (it matches at most {MAX_GLOBS:,} per file, each at "
                   f"most {MAX_GLOB_CHARS:,} characters): what they would match is not shown, "
                   "here or on read")
    return Diagnostic(path=path, line=line, col=1, end_line=line, end_col=1,
                      severity="warning", code=BUDGET_EXCEEDED, message=message)
