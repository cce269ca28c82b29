"""Every decision a file's prose states, kind by kind, with its line and columns."""

from __future__ import annotations

from memlens.conflicts.base import Decision
from memlens.conflicts.kinds import KINDS
from memlens.conflicts.prose import prose_lines

# A file with more prose lines than this is read up to here (bounded work on any input).
MAX_LINES = 20_000


def decisions(text: str) -> list[Decision]:
    """The decisions `text` states, in line order."""
    out: list[Decision] = []
    for line in prose_lines(text)[:MAX_LINES]:
        for kind in KINDS:
            for f in kind.find(line.text):
                out.append(Decision(kind=kind.id, subject=f.subject, value=f.value,
                                    line=line.number, col=f.start + 1, end_col=f.end + 1,
                                    quote=line.text.strip()))
    return out
