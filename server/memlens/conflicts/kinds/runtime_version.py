"""`runtime-version`: the version of a language or runtime the project uses (Node.js,
Python, Go, Java, Ruby, Rust).

Reads "use Node 20", "requires Python 3.12", "target Java 21", "Node.js version: 22". A range
("3.10+", "or later", "at least", ">="), two versions, or a hedge reads nothing; a version
and a more precise one (3 and 3.12) agree."""

from __future__ import annotations

import re

from memlens.conflicts.base import Found, hedged

_RUNTIME = r"(node(?:\.?js)?|python|go|golang|java|ruby|rust)"
_VERSION = r"v?(\d{1,2}(?:\.\d{1,3}){0,2})(?![\d.]*\s*(?:\+|x\b|or\s+(?:later|newer|higher|above)|"\
           r"and\s+(?:up|above|later|newer)))"
_SAYS = re.compile(
    r"\b(?:use|uses|using|require|requires|required|target|targets|runs\s+on|built\s+for|"
    r"pinned\s+to|on)\s+" + _RUNTIME + r"\s+" + _VERSION + r"(?![\w+]|\.\d)"
    r"|\b" + _RUNTIME + r"\s+version\s*(?::|is|=)\s*" + _VERSION + r"(?![\w+]|\.\d)"
    r"|\b" + _RUNTIME + r"\s+" + _VERSION + r"\s+is\s+required\b", re.IGNORECASE)
_NAMES = {"node": "Node.js", "nodejs": "Node.js", "node.js": "Node.js", "python": "Python",
          "go": "Go", "golang": "Go", "java": "Java", "ruby": "Ruby", "rust": "Rust"}
_RANGE = re.compile(r">=|<=|\bat\s+least\b|\bminimum\b|\bor\s+(?:later|newer|higher|above)\b|"
                    r"\band\s+(?:up|above|later|newer)\b|\+|\bLTS\b|\bsupport", re.IGNORECASE)


class RuntimeVersion:
    id = "runtime-version"
    title = "runtime version"
    phrasings: tuple[tuple[str, str, str], ...] = (
        ("Use Node 20.", "version (Node.js)", "20"),
        ("This project requires Python 3.12", "version (Python)", "3.12"),
        ("- Target Java 21", "version (Java)", "21"),
        ("Node.js version: 22", "version (Node.js)", "22"),
        ("Go 1.22 is required.", "version (Go)", "1.22"),
    )
    near_misses: tuple[str, ...] = (
        "Requires Python 3.10+.",
        "Use Node 18 or later.",
        "Supports Node 18 and 20.",
        "Requires at least Python 3.9.",
        "Use Python 3.11 or 3.12.",
        "Go to the settings page.",
        "Rewritten in Rust 2 years ago.",
    )

    def find(self, line: str) -> list[Found]:
        if not re.search(_RUNTIME + r"\s+v?\d|version", line, re.IGNORECASE):
            return []
        found = list(_SAYS.finditer(line))
        if len(found) != 1 or hedged(line) or _RANGE.search(line):
            return []
        m = found[0]
        groups = [g for g in m.groups() if g]
        runtime, version = groups[0], groups[1]
        if runtime.lower() in ("go", "golang") and not runtime[0].isupper():
            return []  # "go", the verb
        name = _NAMES[runtime.lower().replace(" ", "")]
        if len(re.findall(r"(?<![\w.])\d{1,2}(?:\.\d+)*(?!\w|\.\d)", line)) != 1:
            return []
        return [Found(f"version ({name})", version, m.start(), m.end())]

    def disagree(self, one: str, other: str) -> bool:
        a, b = one.split("."), other.split(".")
        n = min(len(a), len(b))
        return a[:n] != b[:n]

    def describe(self, value: str) -> str:
        return value
