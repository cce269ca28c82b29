"""Every decision a file's prose states, kind by kind, with its line and columns."""

from __future__ import annotations

import re

from memlens.conflicts.base import Decision
from memlens.conflicts.kinds import KINDS
from memlens.conflicts.prose import prose_lines

# A file with more prose lines than this is read up to here (bounded work on any input).
MAX_LINES = 5_000
# ... and its first characters only (a memory file this long is too large for any agent).
MAX_CHARS = 400_000
# A line without one of these words states no decision any kind reads: the kinds are not
# asked (most lines of a memory file).
_WORTH_READING = re.compile(
    r"use|install|package|test|build|lint|format|indent|tab|line|version|require|target|"
    r"runs\s+on|never|n['’]t|not|avoid|always|push|commit|generat|depend|sure|free|may",
    re.IGNORECASE)


def decisions(text: str) -> list[Decision]:
    """The decisions `text` states, in line order."""
    out: list[Decision] = []
    for line in prose_lines(text[:MAX_CHARS])[:MAX_LINES]:
        if _WORTH_READING.search(line.text) is None:
            continue
        for kind in KINDS:
            for f in kind.find(line.text):
                out.append(Decision(kind=kind.id, subject=f.subject, value=f.value,
                                    line=line.number, col=f.start + 1, end_col=f.end + 1,
                                    quote=line.text.strip()))
    return out
