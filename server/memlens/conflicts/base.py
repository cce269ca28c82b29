"""What a decision kind is, and the words every kind reads the same way."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Found:
    """What a kind reads on one line."""

    subject: str  # what is decided: "JavaScript package manager", "push"
    value: str  # the answer: "pnpm"; "!npm" (never npm); "never"
    start: int  # 0-based columns of the words that say it
    end: int


@dataclass(frozen=True)
class Decision:
    """A decision on one line of one file."""

    kind: str  # the kind's id: "package-manager"
    subject: str
    value: str
    line: int  # 1-based
    col: int  # 1-based
    end_col: int
    quote: str  # the line, trimmed (quotations blanked)


class DecisionKind(Protocol):
    """One kind of decision, a rule in the style of a linter's: the phrasings it reads
    (`phrasings`: a line and the subject and value it gives) and the near misses it must read
    nothing from (`near_misses`) are its documentation and its tests."""

    id: str
    title: str
    phrasings: tuple[tuple[str, str, str], ...]
    near_misses: tuple[str, ...]

    def find(self, line: str) -> list[Found]:
        """The decisions the prose line `line` states (none when unsure)."""
        ...

    def disagree(self, one: str, other: str) -> bool:
        """Two values of the same subject cannot both be followed."""
        ...

    def describe(self, value: str) -> str:
        """A value as a message says it: "pnpm", "not npm", "never"."""
        ...


# A line that hedges, states a condition, contrasts or gives an example is no decision a kind
# reads: "unless asked", "for example", "unlike npm, we use pnpm".
HEDGES = re.compile(
    r"\b(?:unless|except|without|until|if|whenever|e\.g|i\.e|for example|for instance|"
    r"such as|like|unlike|instead|rather than|otherwise|may|might|can|could|optional(?:ly)?|"
    r"consider|prefer(?:ably)?|sometimes|usually|typically|only|ask|asked|approval|"
    r"permission|explicitly|allowed|example|vs\.?|versus|or)\b", re.IGNORECASE)
# Negations written before a verb.
NEGATION = (r"(?:never|do\s+not|don['’]t|must\s+not|mustn['’]t|should\s+not|shouldn['’]t|"
            r"cannot|can['’]t|avoid|no\s+need\s+to)")
LANGUAGES = {
    "python": "Python", "typescript": "TypeScript", "javascript": "JavaScript", "go": "Go",
    "golang": "Go", "rust": "Rust", "java": "Java", "kotlin": "Kotlin", "ruby": "Ruby",
    "yaml": "YAML", "json": "JSON", "markdown": "Markdown", "css": "CSS", "html": "HTML",
    "c#": "C#", "c\\+\\+": "C++", "swift": "Swift", "php": "PHP", "shell": "shell",
    "bash": "shell", "sql": "SQL", "ts": "TypeScript", "js": "JavaScript", "py": "Python",
    "tsx": "TypeScript", "jsx": "JavaScript", "frontend": "frontend", "backend": "backend",
}
_LANGUAGE = re.compile(r"(?<![\w.#+-])(" + "|".join(LANGUAGES) + r")(?![\w#+])", re.IGNORECASE)


def hedged(line: str) -> bool:
    return HEDGES.search(line) is not None


def languages(line: str) -> set[str]:
    """The languages (or parts: frontend, backend) a line names, each by its display name."""
    found = set()
    for m in _LANGUAGE.finditer(line):
        word = m.group(1).lower()
        key = "c\\+\\+" if word == "c++" else word
        if word == "go" and not m.group(1)[0].isupper():
            continue  # "go" the verb
        found.add(LANGUAGES[key])
    return found


def scoped(subject: str, line: str) -> str | None:
    """`subject` for the one language `line` names ("indentation (Python)"), `subject` when it
    names none, None when it names several (no single answer to read)."""
    named = languages(line)
    if len(named) > 1:
        return None
    return f"{subject} ({next(iter(named))})" if named else subject


class SimpleValues:
    """A kind whose values disagree when they differ, and read as they are."""

    def disagree(self, one: str, other: str) -> bool:
        return one != other

    def describe(self, value: str) -> str:
        return value
