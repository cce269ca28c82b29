"""`[[name]]` links between Claude Code's auto memories, as its `# Memory` system-prompt section
(2.1.330) asks the model to write them: "In the body, link to related memories with `[[name]]`,
where `name` is the other memory's `name:` slug. Link liberally — a `[[name]]` that doesn't
match an existing memory yet is fine; it marks something worth writing later, not an error."

Claude Code itself resolves nothing (the model reads the links); this module answers what the
editor needs: which memory a link names (the topic file whose frontmatter `name:` is the link's
text, trimmed, exactly), where a memory is linked from, what renaming a memory changes, the
names a `[[` can be completed with, and which links name no memory yet (shown as
information, not as a problem). The folder is the auto-memory folder `memory_folder.py` finds
(every topic file in it, any depth: `memory_folder.topic_paths`)."""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from memlens.agents.claude.memory_folder import topic_paths
from memlens.files.nodecompat import is_subpath, js_trim
from memlens.protocol.memory import Diagnostic
from memlens.text.frontmatter import line_closed_frontmatter
from memlens.text.textpos import LineIndex

DANGLING = "memory-link-dangling"
# A memory's `name:` as Claude Code asks for it (a kebab-case slug), and a link to one.
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
LINK = re.compile(r"\[\[([^\[\]\n]+)\]\]")
# The `name:` line of a topic file's frontmatter: group 1 the value as written (unquoted).
_NAME_LINE = re.compile(r"^name:[ \t]*(['\"]?)([^\r\n]*?)\1[ \t]*\r?$", re.MULTILINE)
_FRONTMATTER_END = re.compile(r"^---\r?\n[\s\S]*?\r?\n---(?:\r?\n|$)")


@dataclass(frozen=True)
class Span:
    """A name as written in a file: `[start, end)` offsets of the name's characters."""

    path: str
    start: int
    end: int
    name: str


@dataclass
class Memory:
    """A topic file as links see it: its `name:` (where it is written) and its description."""

    path: str
    relative: str
    name: str | None
    description: str | None
    name_span: Span | None  # where the `name:` value is written (None: no usable one)
    links: list[Span] = field(default_factory=list)


def link_spans(path: str, text: str) -> list[Span]:
    """Every `[[name]]` in `text`: the span of the name inside the brackets, trimmed."""
    spans = []
    for match in LINK.finditer(text):
        raw = match.group(1)
        name = js_trim(raw)
        if not name:
            continue
        start = match.start(1) + raw.index(name)
        spans.append(Span(path, start, start + len(name), name))
    return spans


def _name_span(path: str, text: str, name: str | None) -> Span | None:
    head = _FRONTMATTER_END.match(text)
    if head is None or name is None:
        return None
    for match in _NAME_LINE.finditer(text, 0, head.end()):
        if js_trim(match.group(2)) == name:
            start = match.start(2) + match.group(2).index(name)
            return Span(path, start, start + len(name), name)
    return None


@functools.lru_cache(maxsize=4096)
def read_memory(folder: str, path: str, text: str) -> Memory:
    """A topic file's name, description and links (cached by its text: every link request
    reads the whole folder; the result is never changed)."""
    meta = line_closed_frontmatter(text)
    name = meta.get("name") if meta is not None else None
    description = meta.get("description") if meta is not None else None
    name = js_trim(name) if isinstance(name, str) and js_trim(name) else None
    return Memory(path, posixpath.relpath(path, folder), name,
                  description if isinstance(description, str) else None,
                  _name_span(path, text, name), link_spans(path, text))


def holds(folder: str, path: str) -> bool:
    """`path` is a topic file of `folder` (the index `MEMORY.md` is none)."""
    return (path.endswith(".md") and is_subpath(folder, path) and path != folder
            and path != posixpath.join(folder, "MEMORY.md"))


class MemoryLinks:
    """The topic files of one auto-memory folder (path -> text) and the links between them."""

    def __init__(self, folder: str, texts: dict[str, str]):
        self.folder = folder
        self.texts = texts
        self.memories = [read_memory(folder, path, text) for path, text in texts.items()]

    @classmethod
    def scan(cls, folder: str, read: Callable[[str], str | None],
             extra: list[str] | None = None) -> MemoryLinks:
        """Every topic file of `folder`, each read with `read` (the editor's buffer over the
        disk; None: unreadable), and the `extra` files inside it (a buffer not saved yet)."""
        paths = topic_paths(folder) if posixpath.isdir(folder) else []
        paths += [p for p in extra or [] if p not in paths and holds(folder, p)]
        texts = {}
        for path in paths:
            text = read(path)
            if text is not None:
                texts[path] = text
        return cls(folder, texts)

    def named(self, name: str) -> list[Memory]:
        return [m for m in self.memories if m.name == name]

    def memory(self, path: str) -> Memory | None:
        return next((m for m in self.memories if m.path == path), None)

    def name_at(self, path: str, offset: int) -> Span | None:
        """The link or the `name:` value at `offset` in `path` (both ends included)."""
        memory = self.memory(path)
        if memory is None:
            return None
        for span in [*memory.links, *([memory.name_span] if memory.name_span else [])]:
            if span.start <= offset <= span.end:
                return span
        return None

    def link_at(self, path: str, offset: int) -> Span | None:
        memory = self.memory(path)
        return next((s for s in memory.links if s.start <= offset <= s.end), None) if memory \
            else None

    def references(self, name: str, *, declaration: bool = True) -> list[Span]:
        """Every `[[name]]` naming `name`, and (with `declaration`) the `name:` values."""
        spans = [s for m in self.memories for s in m.links if s.name == name]
        if declaration:
            spans += [m.name_span for m in self.named(name) if m.name_span is not None]
        return sorted(spans, key=lambda s: (s.path, s.start))

    def rename(self, name: str, new: str) -> dict[str, list[Span]]:
        """The spans to rewrite to rename the memory `name` to `new`, by file (its `name:`
        and every link to it): a refusal as ValueError when `new` is no kebab-case slug or
        another memory has that name already."""
        new = js_trim(new)
        if not SLUG.match(new):
            raise ValueError(f"{new!r} is not a kebab-case slug (lowercase letters and digits "
                             "joined by single hyphens): Claude Code links memories by it")
        if new != name and self.named(new):
            raise ValueError(f"A memory is named {new!r} already: "
                             f"{self.named(new)[0].relative}")
        out: dict[str, list[Span]] = {}
        for span in self.references(name):
            out.setdefault(span.path, []).append(span)
        return out

    def dangling(self) -> list[Span]:
        names = {m.name for m in self.memories if m.name}
        return [s for m in self.memories for s in m.links if s.name not in names]


def dangling_message(name: str) -> str:
    return (f"[[{name}]] names no memory yet: Claude Code treats it as \"something worth "
            "writing later, not an error\" (no topic file has name: " + name + ")")


def dangling_diagnostics(links: MemoryLinks) -> list[Diagnostic]:
    """Each link naming no memory, as information."""
    out = []
    indexes: dict[str, LineIndex] = {}
    for span in links.dangling():
        index = indexes.setdefault(span.path, LineIndex(links.texts[span.path]))
        line, col = index.position(span.start)
        end_line, end_col = index.position(span.end)
        out.append(Diagnostic(path=span.path, line=line, col=col, end_line=end_line,
                              end_col=end_col, severity="info", code=DANGLING,
                              message=dangling_message(span.name)))
    return out
