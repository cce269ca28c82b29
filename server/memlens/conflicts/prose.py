"""The lines of a memory file that are instructions in prose, as the decision kinds read them.

Left out, so that an example is never read as a rule: YAML frontmatter, fenced code blocks,
HTML comments, block quotes, tables, headings, and text inside quotation marks (replaced by
spaces, so columns stay true). Inline code stays: a command is usually written in it."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A line longer than this is no instruction worth reading (and bounds the patterns' work).
MAX_LINE = 2000
_FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")
_QUOTED = re.compile(r"\"[^\"\n]{0,300}\"|“[^”\n]{0,300}”|(?<!\w)'[^'\n`]{0,300}'(?=[\s.,;:)!?]|$)")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True)
class ProseLine:
    number: int  # 1-based
    text: str  # the line, quotations blanked; same length as the line on disk


def prose_lines(text: str) -> list[ProseLine]:
    """The prose lines of `text` (see the module's docstring)."""
    text = _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    lines = text.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, min(len(lines), 200)):
            if lines[i].strip() == "---":
                start = i + 1
                break
    out: list[ProseLine] = []
    fence: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        stripped = line.strip()
        if (not stripped or len(line) > MAX_LINE or stripped.startswith((">", "|", "#"))
                or (line.startswith(("\t", "    ")) and not _listed(stripped))):
            continue
        out.append(ProseLine(i + 1, _QUOTED.sub(lambda m: " " * len(m.group(0)), line)))
    return out


def _listed(stripped: str) -> bool:
    """A nested list item (indented, but prose, not an indented code block)."""
    return bool(re.match(r"([-*+]|\d+[.)])\s", stripped))
