"""Claude Code's auto-memory index, `MEMORY.md`, as Claude Code 2.1.330/2.1.332 send it: its
frontmatter and top-level HTML comment blocks removed, trimmed, cut at 200 lines or 25,000
characters (JavaScript's UTF-16 units, which Claude Code's warning calls bytes) at the last line
end before the limit, a warning appended naming the cut, then sanitised (sanitize.py). When
the folder has topic files but no `MEMORY.md`, Claude Code writes one from them at start-up
and sends that (`synthesized_index`). The checks of the index live in memory_topics.py."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlens.agents.claude.sanitize import sanitize_memory, strip_invisible
from memlens.files.nodecompat import from_js_units, js_to_fixed, js_trim, js_units

INDEX_MAX_LINES = 200
INDEX_MAX_CHARS = 25_000
# What a written index line may hold (Claude Code's own index lines stop at 150 characters).
SYNTHESIZED_LINE_MAX = 150


def format_size(n: int) -> str:
    """Claude Code's size words: `912 bytes`, `24.4KB`, `1.5MB`."""
    kib = n / 1024
    if kib < 1:
        return f"{n} bytes"
    for unit, value in (("KB", kib), ("MB", kib / 1024), ("GB", kib / 1024 / 1024)):
        if value < 1024 or unit == "GB":
            return js_to_fixed(value, 1).removesuffix(".0") + unit
    raise AssertionError("unreachable")


def shorten(text: str, limit: int) -> str:
    """Claude Code's quote of a line: cut to `limit` - 1 units at a word end when that keeps
    more than half, with an ellipsis."""
    if len(text) <= limit:
        return text
    head = text[:limit - 1]
    if head and 0xD800 <= ord(head[-1]) <= 0xDBFF:
        head = head[:-1]
    last_space = re.search(r"\s\S*$", head)
    words = head[:last_space.start()].rstrip() if last_space else ""
    return (words if len(words) > limit / 2 else head.rstrip()) + "\u2026"


@dataclass
class IndexCut:
    """The index as sent and where it was cut (in the text after frontmatter and comments)."""

    sent: str  # what reaches the model: kept part, the warning, sanitised
    kept: str  # the kept part of the processed text
    cut: bool
    first_cut_line: int | None = None  # 1-based, in the processed text
    first_cut_text: str = ""  # that line, trimmed (Claude Code quotes it)
    lost_lines: int = 0
    warning: str | None = None


def cut_index(processed: str) -> IndexCut:
    """`processed`: the index without frontmatter and top-level comment blocks."""
    units = js_units(js_trim(processed))
    line_count = units.count("\n") + 1
    size = len(units)
    over_lines, over_size = line_count > INDEX_MAX_LINES, size > INDEX_MAX_CHARS
    if not over_lines and not over_size:
        text = from_js_units(units)
        return IndexCut(sanitize_memory(text), text, False)
    kept = "\n".join(units.split("\n")[:INDEX_MAX_LINES]) if over_lines else units
    if len(kept) > INDEX_MAX_CHARS:
        end = kept.rfind("\n", 0, INDEX_MAX_CHARS + 1)
        kept = kept[:end if end > 0 else INDEX_MAX_CHARS]
    kept_lines = kept.count("\n") + 1 if units[len(kept):len(kept) + 1] == "\n" else 0
    start = len(kept) + 1
    end = units.find("\n", start)
    first = units[start:end if end >= 0 else None]
    first = js_trim(first)
    if kept_lines == 0:
        what = f"everything after the first {len(kept)} characters of line 1 was cut off"
        lost = line_count - 1
    else:
        quote = f' ("{from_js_units(shorten(first, 80))}")' if first else ""
        lost = line_count - kept_lines
        what = (f"{lost} of {line_count} lines were cut off, starting at line "
                f"{kept_lines + 1}{quote}")
    if over_size and not over_lines:
        why = (f"{format_size(size)} (limit: {format_size(INDEX_MAX_CHARS)}) \u2014 index "
               "entries are too long")
    elif over_lines and not over_size:
        why = f"{line_count} lines (limit: {INDEX_MAX_LINES})"
    else:
        why = f"{line_count} lines and {format_size(size)}"
    warning = (f"MEMORY.md is {why}. Only part of it was loaded: {what}. Keep index entries "
               "to one line under ~200 chars; move detail into topic files.")
    kept_text = from_js_units(kept)
    return IndexCut(sanitize_memory(f"{kept_text}\n\n> WARNING: {warning}"), kept_text, True,
                    kept_lines + 1 if kept_lines else 1, from_js_units(first), lost, warning)


@dataclass
class TopicEntry:
    """A topic file as the synthesised index lists it."""

    relative: str  # path in the memory folder, `/`-separated
    description: str
    mtime: float


_UNLISTABLE = re.compile(r"[\[\]()\n\r\u2028\u2029]")


def index_line(entry: TopicEntry) -> str | None:
    """The pointer line Claude Code writes for a topic file (None: a name it will not list)."""
    name = entry.relative
    if _UNLISTABLE.search(name) or strip_invisible(name.replace("\t", "")) != name:
        return None
    stem = name.rsplit("/", 1)[-1].removesuffix(".md")
    head = f"- [{stem}]({name})"
    description = " ".join(strip_invisible(entry.description).split())
    room = SYNTHESIZED_LINE_MAX - len(js_units(head)) - 3
    if not description or room <= 1:
        return head
    return f"{head} \u2014 " + strip_invisible(from_js_units(shorten(js_units(description),
                                                                     room)))


def synthesized_index(entries: list[TopicEntry]) -> str:
    """The MEMORY.md Claude Code writes when there is none: newest topic file first."""
    lines = [line for e in sorted(entries, key=lambda e: -e.mtime)
             if (line := index_line(e)) is not None]
    return "".join(f"{line}\n" for line in lines)
