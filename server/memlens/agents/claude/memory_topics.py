"""Claude Code's auto-memory topic files — one fact per file in the memory folder, in the
format its `# Memory` system-prompt section asks for (2.1.330):

    ---
    name: <short-kebab-case-slug>
    description: <one-line summary>
    metadata:
      type: user | feedback | project | reference
    ---

— and the checks of the folder: the index cut, pointers to missing files, topic files no
pointer reaches, index lines longer than Claude Code asks for (~200 characters), and each
topic file against the current format (older Claude Code wrote `type:` at the top level)."""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import time
from dataclasses import dataclass, field

from memlens.agents.claude.includes import IncludeReader
from memlens.agents.claude.markdown import split_frontmatter, strip_comments
from memlens.agents.claude.memory_folder import topic_paths
from memlens.agents.claude.memory_index import IndexCut, TopicEntry
from memlens.agents.claude.memory_links import LINK, SLUG, MemoryLinks, dangling_diagnostics
from memlens.files.nodecompat import js_trim, js_trim_start
from memlens.text.frontmatter import line_closed_frontmatter

TOPIC_TYPES = ("user", "feedback", "project", "reference")
INDEX_LINE_ASK = 200
POINTER = re.compile(r"\]\(([^)\s]+\.md)\)")


@dataclass
class TopicFile:
    """One topic file of the memory folder, as far as its frontmatter says."""

    path: str
    relative: str
    name: str | None = None
    description: str | None = None
    type: str | None = None
    mtime: float = 0.0
    links: list[str] = field(default_factory=list)  # the `[[name]]` links of its body
    frontmatter: bool = False
    top_level_type: bool = False  # the older format
    content: str | None = None
    chars: int | None = None

    def entry(self) -> TopicEntry:
        return TopicEntry(self.relative, self.description or "", self.mtime)


def read_topic(reader: IncludeReader, folder: str, path: str) -> tuple[TopicFile, str | None]:
    topic = TopicFile(path, posixpath.relpath(path, folder))
    with contextlib.suppress(OSError):
        topic.mtime = os.stat(path).st_mtime
    read = reader._read(path)
    if read.content is None:
        return topic, None
    meta = line_closed_frontmatter(read.content)
    if meta is not None:
        topic.frontmatter = True
        name, description = meta.get("name"), meta.get("description")
        topic.name = name if isinstance(name, str) else None
        topic.description = description if isinstance(description, str) else None
        nested = meta.get("metadata")
        kind = nested.get("type") if isinstance(nested, dict) else None
        if kind is None and "type" in meta:
            kind, topic.top_level_type = meta.get("type"), True
        topic.type = kind if isinstance(kind, str) else None
    topic.links = [js_trim(m.group(1)) for m in LINK.finditer(read.content)]
    topic.content, topic.chars = read.content, len(read.content)
    return topic, read.content


def scan_topics(reader: IncludeReader, folder: str) -> list[tuple[TopicFile, str | None]]:
    return [read_topic(reader, folder, p) for p in topic_paths(folder)]


def _key_offset(text: str, key: str) -> tuple[int, int]:
    match = re.search(rf"(?m)^\s*{re.escape(key)}:", text)
    if match is None:
        return 0, 3
    start = match.start() + len(match.group(0)) - len(key) - 1
    return start, start + len(key)


def check_topic(reader: IncludeReader, topic: TopicFile, text: str) -> None:
    if not topic.frontmatter:
        reader._diag(topic.path, text, 0, 0, "warning", "memory-invalid-type",
                     "A memory topic file needs frontmatter: name (a kebab-case slug), "
                     "description and metadata.type (" + ", ".join(TOPIC_TYPES) + "); Claude "
                     "Code lists it without a description")
        return
    if not topic.name:
        reader._diag(topic.path, text, 0, 3, "warning", "memory-invalid-type",
                     "The topic file's frontmatter has no 'name' (a short kebab-case slug)")
    elif not SLUG.match(topic.name):
        start, end = _key_offset(text, "name")
        reader._diag(topic.path, text, start, end, "warning", "memory-invalid-type",
                     f"name {topic.name!r} is not a kebab-case slug: Claude Code links "
                     "memories by it ([[name]])")
    if not topic.description:
        reader._diag(topic.path, text, 0, 3, "warning", "memory-invalid-type",
                     "The topic file's frontmatter has no 'description' (Claude Code decides "
                     "relevance by it)")
    if topic.top_level_type:
        start, end = _key_offset(text, "type")
        reader._diag(topic.path, text, start, end, "warning", "memory-invalid-type",
                     "type is at the top level (an older format): Claude Code 2.1.330 asks "
                     "for it under metadata: (an indented `type:` below `metadata:`)")
    if topic.type not in TOPIC_TYPES:
        start, end = _key_offset(text, "type")
        said = "no metadata.type" if topic.type is None else f"type {topic.type!r}"
        reader._diag(topic.path, text, start, end, "warning", "memory-invalid-type",
                     f"{said}: Claude Code's memory types are {', '.join(TOPIC_TYPES)}")


def _cut_offset(raw: str, cut: IndexCut) -> int:
    """Where the cut falls in the file as written. The kept text is the file without its
    frontmatter and comment blocks, trimmed: when no comment block was cut the two line up
    from the body's first non-blank character; else the cut line is found by its text."""
    body = split_frontmatter(raw)[0]
    start = len(raw) - len(body) if raw.endswith(body) else 0
    start += len(body) - len(js_trim_start(body))
    if strip_comments(body) == body:
        if not cut.first_cut_line or cut.first_cut_line == 1:
            return min(len(raw), start + len(cut.kept))
        at = start
        for _ in range(cut.first_cut_line - 1):
            at = raw.find("\n", at) + 1
            if at == 0:
                return len(raw)
        return at
    at = raw.find(cut.first_cut_text, start) if cut.first_cut_text else -1
    return raw.rfind("\n", 0, at) + 1 if at >= 0 else len(raw)


def check_index(reader: IncludeReader, path: str, raw: str, cut: IndexCut,
                topics: list[tuple[TopicFile, str | None]]) -> None:
    """The index as Claude Code sends it, checked, and each topic file beside it."""
    if cut.cut:
        offset = _cut_offset(raw, cut)
        reader._diag(path, raw, offset, offset, "warning", "memory-index-truncated",
                     f"Claude Code loads only the first 200 lines or 25,000 characters of "
                     f"MEMORY.md: from here on is cut and a warning appended instead "
                     f"({cut.warning})")
    folder = posixpath.dirname(path)
    pointed: set[str] = set()
    for match in POINTER.finditer(raw):
        target = posixpath.normpath(posixpath.join(folder, match.group(1)))
        pointed.add(target)
        if not os.path.isfile(target):
            reader._diag(path, raw, match.start(1), match.end(1), "warning",
                         "memory-link-not-found",
                         f"The index links to {match.group(1)}, which does not exist")
    offset = 0
    for line in raw.split("\n"):
        if len(line) > INDEX_LINE_ASK:
            reader._diag(path, raw, offset + INDEX_LINE_ASK, offset + len(line), "info",
                         "memory-index-line-long",
                         f"This index line is {len(line):,} characters: Claude Code asks for "
                         "one line under ~200 per memory, detail in the topic file")
        offset += len(line) + 1
    for topic, text in topics:
        if text is None:
            continue
        check_topic(reader, topic, text)
        if topic.path not in pointed:
            reader._diag(topic.path, text, 0, 0, "warning", "memory-not-indexed",
                         "No pointer in MEMORY.md reaches this memory: Claude Code sees only "
                         "the index at start-up, so it will not know this file exists "
                         f"(add `- [Title]({topic.relative}) — hook` to MEMORY.md)")
    # `[[name]]` links naming no memory yet (information: Claude Code asks for them).
    texts = {topic.path: text for topic, text in topics if text is not None}
    reader.diagnostics += dangling_diagnostics(MemoryLinks(folder, texts))


def saved_ago(mtime: float, now: float | None = None) -> str:
    """`saved today`, `saved yesterday`, `saved 3 days ago`, `saved 2 months ago`."""
    days = int(((time.time() if now is None else now) - mtime) // 86_400)
    if days <= 0:
        return "saved today"
    if days == 1:
        return "saved yesterday"
    if days < 60:
        return f"saved {days} days ago"
    if days < 730:
        return f"saved {days // 30} months ago"
    return f"saved {days // 365} years ago"


def topic_note(topic: TopicFile) -> str:
    """The Memory view's line for a topic file."""
    parts = [topic.type or "no type", *([topic.description] if topic.description else []),
             saved_ago(topic.mtime), "read when relevant"]
    return " · ".join(parts)
