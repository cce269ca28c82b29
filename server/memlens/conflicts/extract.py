"""Every decision a file's prose states, kind by kind, with its line and columns."""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict

from memlens.conflicts.base import Decision
from memlens.conflicts.kinds import KINDS
from memlens.conflicts.prose import prose_lines

# A file with more prose lines than this is read up to here (bounded work on any input).
MAX_LINES = 5_000
# ... and its first characters only (a memory file this long is too large for any agent).
MAX_CHARS = 400_000
# A line without one of these words states no decision any kind reads: the kinds are not
# asked (most lines of a memory file). Matched against the case-folded line: a pattern without
# IGNORECASE is several times faster, and folding maps what IGNORECASE would match ("ſ", "K")
# to the plain letters.
_WORTH_READING = re.compile(
    r"use|install|package|test|build|lint|format|indent|tab|line|version|require|target|"
    r"runs\s+on|never|n['’]t|not|avoid|always|push|commit|generat|depend|sure|free|may")
# Files whose decisions are kept, by their text: the editor asks every agent's reading of a
# folder again after each change, and most files did not change.
_KEPT_TEXTS = 4096


_kept: OrderedDict[bytes, tuple[Decision, ...]] = OrderedDict()
_kept_lock = threading.Lock()  # the language server reads decisions on worker threads


def decisions(text: str) -> list[Decision]:
    """The decisions `text` states, in line order (a list of its own for each caller)."""
    text = text[:MAX_CHARS]
    # Kept by a digest of the text, not the text: what is kept stays small however large the
    # files (each decision is one line's).
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _kept_lock:
        known = _kept.get(digest)
        if known is not None:
            _kept.move_to_end(digest)
            return list(known)
    found = _read_decisions(text)
    with _kept_lock:
        _kept[digest] = found
        while len(_kept) > _KEPT_TEXTS:
            _kept.popitem(last=False)
    return list(found)


def _read_decisions(text: str) -> tuple[Decision, ...]:
    out: list[Decision] = []
    for line in prose_lines(text)[:MAX_LINES]:
        if _WORTH_READING.search(line.text.casefold()) is None:
            continue
        for kind in KINDS:
            for f in kind.find(line.text):
                out.append(Decision(kind=kind.id, subject=f.subject, value=f.value,
                                    line=line.number, col=f.start + 1, end_col=f.end + 1,
                                    quote=line.text.strip()))
    return tuple(out)
