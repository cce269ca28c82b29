"""What Claude Code sends of its memory files: the record of a file in a load, the start-up
`<system-reminder>` with one labelled block per file, and the part of a file it keeps
(frontmatter and top-level HTML comment blocks removed as markdown.py finds them, trimmed as
JavaScript trims)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memlens.agents.claude.markdown import comment_spans, split_frontmatter, strip_comments
from memlens.files.nodecompat import js_trim


@dataclass
class ClaudeFile:
    path: str
    kind: str
    content: str
    included_from: str | None = None
    applies_to: list[str] = field(default_factory=list)  # a rule's `paths:` globs
    rule_base: str | None = None  # the folder those globs are relative to
    # An include sent without the file that includes it (a `paths:` rule's includes load at
    # start, the rule on read): the kind whose label it takes.
    owner_kind: str | None = None
    # The text Claude Code sends for it, when that is not the file cut and trimmed as usual
    # (the auto-memory index: cut at its limits, a warning added, sanitised).
    sent: str | None = None
    # Not on disk yet: Claude Code writes it at start-up (an index made from the topic files).
    written: bool = False


REMINDER_HEAD = ("Codebase and user instructions are shown below. Be sure to adhere to these "
                 "instructions. IMPORTANT: These instructions OVERRIDE any default behavior "
                 "and you MUST follow them exactly as written.")
# The label Claude Code gives each kind of file in its payload (an include takes the one of
# the memory file that brought it in).
PAYLOAD_LABELS = {
    "managed": " (organization-managed policy instructions)",
    "user": " (user's private global instructions for all projects)",
    "userRule": " (user's private global instructions for all projects)",
    "project": " (project instructions, checked into the codebase)",
    "rule": " (project instructions, checked into the codebase)",
    "local": " (user's private project instructions, not checked in)",
    "auto": " (user's auto-memory, persists across conversations)",
}


def owner_folder(path: str) -> str:
    """The folder a memory file belongs to: the one holding its `.claude`, else its own."""
    at = path.rfind("/.claude/")
    at = at if at != -1 else path.rfind("/")
    return "/" if at <= 0 else path[:at]


def chain_top(entry: ClaudeFile, by_path: dict[str, ClaudeFile]) -> ClaudeFile:
    """The memory file whose includes brought `entry` in (itself when it is one)."""
    seen = {entry.path}
    while entry.included_from is not None and entry.included_from in by_path:
        parent = by_path[entry.included_from]
        if parent.path in seen:
            break
        seen.add(parent.path)
        entry = parent
    return entry


def payload(files: list[ClaudeFile]) -> str:
    """The start-up message Claude Code 2.1.330 sends: a `<system-reminder>` with a heading
    and one `Contents of PATH (LABEL):` block per file ('' when no file is left)."""
    by_path = {f.path: f for f in files}
    blocks = []
    for f in files:
        top = chain_top(f, by_path)
        kind = top.owner_kind or top.kind
        text = f.sent if f.sent is not None else js_trim(sent_text(f.content))
        if not text:
            continue
        blocks.append(f"Contents of {f.path}{PAYLOAD_LABELS.get(kind, '')}:\n\n{text}")
    if not blocks:
        return ""
    return f"<system-reminder>\n{REMINDER_HEAD}\n\n" + "\n\n".join(blocks) + (
        "\n</system-reminder>")


def sent_text(content: str) -> str:
    """The part of a memory file Claude Code keeps: without frontmatter and top-level HTML
    comment blocks (inline comments and comments in code stay)."""
    return strip_comments(split_frontmatter(content)[0])


def strips_comment(content: str, start: int, end: int) -> bool:
    """The HTML comment `content[start:end]` is cut from what Claude Code sends (it lies in a
    top-level comment block; an inline comment or one in code stays)."""
    body = split_frontmatter(content)[0]
    offset = len(content) - len(body)
    return any(s + offset <= start and end <= e + offset for s, e in comment_spans(body))


def is_blank(content: str) -> bool:
    """Empty once trimmed: Claude Code sends no block for it (nor for what it includes)."""
    return not js_trim(sent_text(content))
MAX_FILE_CHARS = 40_000
