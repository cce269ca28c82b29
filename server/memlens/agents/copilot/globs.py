"""Copilot CLI 1.0.102's `applyTo` globs, as its requests show it reads them (each rule kept as a
tree in tests/conformance/differential/regressions_copilot.yaml, run against the real CLI).

A glob is matched against the path relative to the repository root and against the path's name
alone, case-sensitively; `*` and `?` never match `/`. The glob is read into parts first:

* `**` is "any folders" only as a whole part of the path: at the start before a `/`
  (`**/x` also matches `x`), after a `/` at the end (`src/**` is everything below `src`), or
  between two `/`; elsewhere it is `*` (`a**`, `**.py`, `a/**b`). Inside braces an alternative
  counts as a start and `,` or `}` as an end: `{mod.py,pkg/**}` holds for `pkg/a/b.py`,
  `{**/y.txt,a}` for `y.txt` and `a/b/y.txt`. A glob that is only "any folders" (`**`, `**/`,
  `**/**`) matches every path.
* `{a,b}` is either (nested braces too; an empty alternative matches nothing: `y{,.md}` is
  `y` or `y.md`); a `}` with no `{` open, or a `{` never closed, and the glob does not parse.
* `\\` makes the next character itself (`q\\*.txt` is the file `q*.txt`); a `\\` at the end
  does not parse.
* `[...]` is a class (`!` or `^` first negates, `a-z` a range, a reversed one does not parse);
  an unclosed `[` does not parse.

A glob that does not parse matches nothing.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from memlens.files.globs import literal

MAX_BRACES = 50  # `{` nested deeper: the glob is read as not parsing (no recursion past it)
NEVER = r"\b\B"  # RE2 text no string matches: an alternative that needs a `/`, as a name

# The parts a glob is read into.
CHAR, ANY, STAR, FOLDERS_BEFORE, FOLDERS_AFTER, FOLDERS_BETWEEN, CLASS, EITHER = range(8)


@dataclass(frozen=True)
class Part:
    kind: int
    text: str = ""  # CHAR: the character; CLASS: what is between the brackets
    negate: bool = False  # CLASS
    alternatives: tuple[tuple[Part, ...], ...] = ()  # EITHER


def _class_end(glob: str, at: int) -> int:
    """The index of the `]` closing the class opened at `at`; -1: none."""
    return glob.find("]", at + 2 if glob[at + 1:at + 2] in ("!", "^") else at + 1)


def read_glob(glob: str) -> tuple[Part, ...]:
    """`glob` read into parts; ValueError: it does not parse."""
    branches: list[list[Part]] = [[]]
    opened: list[int] = []  # for each open `{`, the index in `branches` of its first branch
    at = 0
    while at < len(glob):
        char = glob[at]
        if char == "*":
            at = _star(glob, at, branches)
            continue
        if char == "?":
            branches[-1].append(Part(ANY))
        elif char == "[":
            end = _class_end(glob, at)
            if end < 0:
                raise ValueError("unclosed [")
            inner = glob[at + 1:end]
            negate = inner[:1] in ("!", "^")
            branches[-1].append(Part(CLASS, inner[1:] if negate else inner, negate))
            at = end
        elif char == "{":
            if len(opened) >= MAX_BRACES:
                raise ValueError("braces nested too deep")
            opened.append(len(branches))
            branches.append([])
        elif char == "}":
            if not opened:
                raise ValueError("} without {")
            first = opened.pop()
            alternatives = tuple(tuple(b) for b in branches[first:])
            del branches[first:]
            branches[-1].append(Part(EITHER, alternatives=alternatives))
        elif char == "," and opened:
            branches.append([])
        elif char == "\\":
            if at + 1 >= len(glob):
                raise ValueError("a \\ at the end")
            at += 1
            branches[-1].append(Part(CHAR, glob[at]))
        else:
            branches[-1].append(Part(CHAR, char))
        at += 1
    if opened:
        raise ValueError("unclosed {")
    return tuple(branches[0])


def _star(glob: str, at: int, branches: list[list[Part]]) -> int:
    """The `*` or `**` at `at` added to the open branch; the index after what it took."""
    current = branches[-1]
    if glob[at + 1:at + 2] != "*":
        current.append(Part(STAR))
        return at + 1
    after = at + 2
    following = glob[after:after + 1]
    inside = len(branches) > 1  # within braces: `,` and `}` end an alternative
    if not current:  # the start of the glob or of an alternative
        if following in ("", "/"):
            current.append(Part(FOLDERS_BEFORE))
            return after + len(following)
        current.append(Part(STAR))
        return after
    if glob[at - 1] != "/":
        current.append(Part(STAR))
        return after
    if following == "" or (inside and following in (",", "}")):
        kind, took = FOLDERS_AFTER, 0
    elif following == "/":
        kind, took = FOLDERS_BETWEEN, 1
    else:
        current.append(Part(STAR))
        return after
    last = current.pop()  # the `/` before (or the folders it already stands for)
    current.append(last if last.kind in (FOLDERS_BEFORE, FOLDERS_AFTER) else Part(kind))
    return after + took


def _render(parts: tuple[Part, ...], name: bool) -> str:
    """The parts as RE2 text: on the whole relative path, or (`name`) on a name (no `/`)."""
    out = []
    for part in parts:
        if part.kind == CHAR:
            out.append(NEVER if name and part.text == "/" else literal(part.text))
        elif part.kind == ANY:
            out.append(r"[^/]")
        elif part.kind == STAR:
            out.append(r"[^/]*")
        elif part.kind == FOLDERS_BEFORE:
            out.append("" if name else r"(?:.*/)?")
        elif part.kind == FOLDERS_AFTER:
            out.append(NEVER if name else r"/.*")
        elif part.kind == FOLDERS_BETWEEN:
            out.append(NEVER if name else r"/(?:.*/)?")
        elif part.kind == CLASS:
            out.append(_char_class(part.text, part.negate, name))
        else:
            out.append("(?:" + "|".join(_render(a, name) for a in part.alternatives) + ")")
    return "".join(out)


def _char_class(inner: str, negate: bool, name: bool = False) -> str:
    """`[inner]` as the class it always was: each character itself (a backslash too), `a-z` a
    range (a reversed one does not parse), a `-` first or last itself; `name`: never `/`."""
    if not inner:
        raise ValueError("empty []")
    items, at = [], 0
    while at < len(inner):
        if at + 2 < len(inner) and inner[at + 1] == "-":
            low, high = inner[at], inner[at + 2]
            if high < low:
                raise ValueError("reversed range")
            items.append(f"{literal(low)}-{literal(high)}")
            at += 3
        else:
            items.append(literal(inner[at]))
            at += 1
    if name and negate:
        items.append(literal("/"))
    elif name:
        items = [i for i in items if i != literal("/")]  # a name holds none
        if not items:
            return NEVER
    return "[" + ("^" if negate else "") + "".join(items) + "]"


@functools.lru_cache(maxsize=4096)
def glob_parts(glob: str) -> tuple[str, str] | None:
    """The regular expressions (RE2's syntax) of one `applyTo` glob, its leading `!` and `./`
    left out, both matched against the whole relative path: the glob on the path, and the glob
    on the path's name (`(?:.*/)?NAME`); None: it does not parse."""
    glob = glob.lstrip("!").removeprefix("./")
    try:
        parts = read_glob(glob)
        if parts == (Part(FOLDERS_BEFORE),):  # only "any folders": every path
            return "(?s).*", "(?s).*"
        body, name = _render(parts, name=False), _render(parts, name=True)
    except ValueError:
        return None
    return "(?s)" + body, "(?s)(?:.*/)?(?:" + name + ")"
