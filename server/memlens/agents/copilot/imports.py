"""Where Copilot CLI 1.0.102 finds `@path` imports in an AGENTS.md or CLAUDE.md (each point seen
in its requests: tests/conformance/differential/regressions_copilot.yaml, P21-P23):

* an `@` starts a token unless the character before it is an ASCII letter or digit or one of
  `._%+-` (an e-mail address): `(@a.md)`, `"@a.md"`, `x @a.md` are tokens, `me@a.md` is not;
* after a second `@` (`@@a.md`) only a path without `/` is one (`@@./a.md`, `@@sub/a.md`
  stay as written);
* the path runs to white space or one of `` ` ' " < > ``; then `.,;:!?)]}` at its end are
  dropped (`@a.md).` names `a.md`; `@a.md)x` names `a.md)x`);
* nothing inside a fence: a line starting (after any indentation) with ```` ``` ```` or `~~~`
  opens one, and only a line starting with the same three characters closes it (its length
  and what follows do not matter); a line indented four spaces is no code block;
* nothing inside a code span on the line: a run of backticks opens one that the next run of
  the same length on the same line closes; with none, the rest of the line is code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

# Unicode's White_Space characters (Rust's `char::is_whitespace`; Python's str.isspace() also
# takes U+001C..U+001F).
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_NOT_BEFORE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
_ENDS_PATH = frozenset(WHITE_SPACE + "`'\"<>")
TRAILING = ".,;:!?)]}"
FENCES = ("```", "~~~")
_BACKTICKS = re.compile(r"`+")
_LINE = re.compile(r"[^\n]*\n?")  # lines end at LF only


@dataclass(frozen=True)
class Token:
    at: int  # the `@`'s offset in the text
    end: int  # where the path as read ends (after it: what stays as written)
    path: str


def _code_from(line: str) -> list[tuple[int, int]]:
    """The spans of `line` that are code (offsets in the line)."""
    spans, runs = [], list(_BACKTICKS.finditer(line))
    index = 0
    while index < len(runs):
        opener = runs[index]
        closer = next((j for j in range(index + 1, len(runs))
                       if len(runs[j].group()) == len(opener.group())), None)
        if closer is None:
            spans.append((opener.start(), len(line)))
            break
        spans.append((opener.start(), runs[closer].end()))
        index = closer + 1
    return spans


def tokens(text: str) -> Iterator[Token]:
    """The `@path` tokens of `text` Copilot CLI would try to import, in order."""
    offset, fence = 0, ""
    for found in _LINE.finditer(text):
        line = found.group()
        if not line:
            break
        start = offset
        offset += len(line)
        marker = line.lstrip(WHITE_SPACE)[:3]
        if marker in FENCES:
            if not fence:
                fence = marker
            elif fence == marker:
                fence = ""
            continue
        if fence or "@" not in line:
            continue
        code = _code_from(line)
        at = line.find("@")
        while at >= 0:
            if (at == 0 or line[at - 1] not in _NOT_BEFORE) and not any(
                    a <= at < b for a, b in code):
                end = at + 1
                while end < len(line) and line[end] not in _ENDS_PATH:
                    end += 1
                path = line[at + 1:end].rstrip(TRAILING)
                if path and not (at and line[at - 1] == "@" and "/" in path):
                    yield Token(start + at, start + at + 1 + len(path), path)
            at = line.find("@", at + 1)
