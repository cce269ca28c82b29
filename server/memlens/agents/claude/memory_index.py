"""Claude Code's auto memory: where `MEMORY.md` lives (`~/.claude/projects/<slug>/memory/`),
how much of it is sent (200 lines or 25,000 bytes) and the checks of the index and its topic
files."""

from __future__ import annotations

import os
import posixpath
import re

from memlens.agents.claude.includes import IncludeReader
from memlens.files.nodecompat import dirname, resolve
from memlens.files.roots import repository_root
from memlens.text.frontmatter import line_closed_frontmatter

INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25_000
TOPIC_TYPES = ("user", "feedback", "project", "reference")


def sanitize_path(path: str) -> str:
    """Claude Code's project folder name: every non-alphanumeric character becomes '-'."""
    return re.sub(r"[^a-zA-Z0-9]", "-", path)


def claude_home(home: str) -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or posixpath.join(home, ".claude")


def auto_memory_index(home: str, cwd: str) -> str:
    root = repository_root(cwd) or resolve(cwd)
    return posixpath.join(claude_home(home), "projects", sanitize_path(root), "memory",
                          "MEMORY.md")


def truncate_index(text: str) -> tuple[str, int | None, str | None]:
    """(what reaches the model, the 1-based line where the cut falls, the warning)."""
    lines = text.split("\n")
    cut_line: int | None = None
    kept = text
    if len(lines) > INDEX_MAX_LINES:
        kept = "\n".join(lines[:INDEX_MAX_LINES])
        cut_line = INDEX_MAX_LINES + 1
    data = kept.encode("utf-8")
    if len(data) > INDEX_MAX_BYTES:
        kept = data[:INDEX_MAX_BYTES].decode("utf-8", "ignore")
        cut_line = kept.count("\n") + 1
    if cut_line is None:
        return text, None, None
    total = len(lines)
    warning = (f"\n\n> WARNING: MEMORY.md is {total} lines and {len(text.encode('utf-8')):,} "
               f"bytes; only the first {INDEX_MAX_LINES} lines or {INDEX_MAX_BYTES:,} bytes are "
               "loaded. Keep the index to one short line per memory and move detail into "
               "topic files.")
    return kept + warning, cut_line, warning


def check_index(loader: IncludeReader, path: str, text: str, cut_line: int | None,
                kept: str) -> None:
    """The index as Claude Code sends it, checked: where the cut falls, links to missing topic
    files, and each topic file's frontmatter."""
    if cut_line is not None:
        # The cut falls where the kept text ends: a line start after 200 lines, or inside
        # a line at the byte budget (a split character is dropped whole).
        offset = len(kept) + (1 if len(kept) < len(text) and text[len(kept)] == "\n"
                              and kept.count("\n") + 1 < cut_line else 0)
        lost_bytes = len(text.encode("utf-8")) - len(kept.encode("utf-8"))
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        lost_lines = lines - cut_line + 1
        loader._diag(path, text, offset, offset, "warning", "memory-index-truncated",
                   f"Claude Code loads only the first {INDEX_MAX_LINES} lines or "
                   f"{INDEX_MAX_BYTES:,} bytes of MEMORY.md: everything from here on is "
                   f"cut — {lost_bytes:,} bytes in {lost_lines:,} line(s) not sent (and a "
                   "warning is appended)")
    folder = dirname(path)
    for match in re.finditer(r"\]\(([^)\s]+\.md)\)", text):
        target = resolve(folder, match.group(1))
        if not os.path.isfile(target):
            loader._diag(path, text, match.start(1), match.end(1), "warning",
                       "memory-link-not-found",
                       f"The index links to {match.group(1)}, which does not exist")
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    for name in names:
        if not name.endswith(".md") or name == "MEMORY.md":
            continue
        topic = posixpath.join(folder, name)
        read = loader._read(topic)
        if read.content is None:
            continue
        meta = line_closed_frontmatter(read.content)
        if meta is None:
            loader._diag(topic, read.content, 0, 0, "warning", "memory-invalid-type",
                       "A memory topic file needs frontmatter with name, description and "
                       f"type ({', '.join(TOPIC_TYPES)})")
            continue
        kind = meta.get("type")
        if kind not in TOPIC_TYPES:
            where = read.content.find("type:")
            start = where if where >= 0 else 0
            loader._diag(topic, read.content, start, start + (5 if where >= 0 else 3),
                       "warning", "memory-invalid-type",
                       f"type {kind!r} is not one of {', '.join(TOPIC_TYPES)}")
        for key in ("name", "description"):
            if not meta.get(key):
                loader._diag(topic, read.content, 0, 3, "warning", "memory-invalid-type",
                           f"The topic file's frontmatter has no {key!r}")
