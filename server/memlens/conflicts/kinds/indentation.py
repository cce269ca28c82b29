"""`indentation`: spaces (how many) or tabs, per language when the line names one.

Reads "indent with 2 spaces", "use 4-space indentation", "indentation: tabs", "use tabs,
not spaces". The line must speak of indenting (or set tabs against spaces); two widths, two
languages or a hedge read nothing."""

from __future__ import annotations

import re

from memlens.conflicts.base import Found, SimpleValues, hedged, scoped

_WIDTH = r"(\d|two|four|eight)[\s-]*(?:space|spaces|character|char)s?"
_SAYS = [
    re.compile(r"\bindent(?:ation|ing)?\s*(?:with|using|of|:|is|=)?\s*(?:be\s+)?" + _WIDTH
               + r"|\b" + _WIDTH + r"\s+(?:for\s+)?indent(?:ation|s)?\b", re.IGNORECASE),
    re.compile(r"\bindent(?:ation|ing)?\s*(?:with|using|:|is|=)?\s*(?:be\s+)?(tabs)\b"
               r"|\buse\s+(tabs)(?:\s+for\s+indentation|\s*,?\s*not\s+spaces)", re.IGNORECASE),
]
_NUMBERS = {"two": "2", "four": "4", "eight": "8"}


class Indentation(SimpleValues):
    id = "indentation"
    title = "indentation"
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Indent with 2 spaces.", "indentation", "2 spaces"),
        ("- Use 4-space indentation in Python.", "indentation (Python)", "4 spaces"),
        ("Indentation: tabs", "indentation", "tabs"),
        ("Use tabs, not spaces.", "indentation", "tabs"),
        ("TypeScript: indentation is two spaces", "indentation (TypeScript)", "2 spaces"),
    )
    near_misses: tuple[str, ...] = (
        "Use 2 spaces for TypeScript and 4 for Python.",
        "Indent with 2 or 4 spaces.",
        "Keep the existing indentation.",
        "YAML uses 2 spaces, Python 4 spaces indentation.",
        "Prefer tabs for indentation.",
    )

    def find(self, line: str) -> list[Found]:
        found = [(m, p) for p in _SAYS for m in p.finditer(line)]
        if len(found) != 1 or hedged(line) or len(re.findall(_WIDTH, line, re.I)) > 1:
            return []
        m, _ = found[0]
        word = next(g for g in m.groups() if g)
        value = "tabs" if word.lower() == "tabs" else \
            f"{_NUMBERS.get(word.lower(), word)} spaces"
        subject = scoped("indentation", line)
        return [] if subject is None else [Found(subject, value, m.start(), m.end())]
