"""`line-length`: the longest line allowed, per language when the line names one.

Reads "max line length: 100", "maximum line length of 120 characters", "keep lines under 80
characters", "lines must not exceed 100 characters", "100-character line limit". Two
numbers, two languages or a hedge read nothing."""

from __future__ import annotations

import re

from memlens.conflicts.base import Found, SimpleValues, hedged, scoped

_N = r"(\d{2,3})"
_SAYS = re.compile(
    r"\b(?:max(?:imum)?\.?\s+)?line[\s-]+length\s*(?:limit)?\s*(?:of|is|:|=)\s*(?:be\s+)?" + _N
    + r"|\b(?:max(?:imum)?\.?|at\s+most|limit)\s+" + _N + r"\s*(?:characters|chars|columns|cols)"
    r"\s+(?:per|a)\s+line"
    r"|\blines?\s+(?:should|must)?\s*(?:be\s+|stay\s+)?(?:under|below|at\s+most|no\s+longer\s+"
    r"than|not\s+exceed|shorter\s+than|within)\s+" + _N + r"\s*(?:characters|chars|columns|cols)"
    r"|\bkeep\s+lines\s+(?:under|below|within|to|at\s+most)\s+" + _N
    + r"\s*(?:characters|chars|columns|cols)?"
    r"|\b" + _N + r"[\s-]*(?:character|char|column|col)s?\s+line[\s-]+(?:length|limit|width)",
    re.IGNORECASE)


class LineLength(SimpleValues):
    id = "line-length"
    title = "line length"
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Max line length: 100", "line length", "100"),
        ("Use a maximum line length of 120 characters.", "line length", "120"),
        ("- Keep lines under 80 characters", "line length", "80"),
        ("Python: lines must not exceed 88 characters", "line length (Python)", "88"),
        ("100-character line limit.", "line length", "100"),
    )
    near_misses: tuple[str, ...] = (
        "Line length is 100 for Python and 120 for TypeScript.",
        "Keep functions under 50 lines.",
        "Line length may be 100 or 120.",
        "Lines 10-20 of the config set the line length.",
    )

    def find(self, line: str) -> list[Found]:
        found = list(_SAYS.finditer(line))
        if len(found) != 1 or hedged(line) or len(re.findall(r"\b\d{2,3}\b", line)) != 1:
            return []
        m = found[0]
        subject = scoped("line length", line)
        value = next(g for g in m.groups() if g)
        return [] if subject is None else [Found(subject, value, m.start(), m.end())]
