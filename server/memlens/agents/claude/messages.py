"""What Claude Code sends of its memory files: the file records of a load, the start-up
`<system-reminder>` with one labelled block per file, and the part of a file it keeps
(frontmatter and HTML comment blocks removed, trimmed as JavaScript trims)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memlens.protocol.memory import Diagnostic


@dataclass
class ClaudeFile:
    path: str
    kind: str
    content: str
    included_from: str | None = None
    applies_to: list[str] = field(default_factory=list)  # a rule's `paths:` globs
    rule_base: str | None = None  # the folder those globs are relative to


@dataclass
class ClaudeLoad:
    cwd: str
    files: list[ClaudeFile]
    conditional_rules: list[ClaudeFile]
    diagnostics: list[Diagnostic]


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
        kind = chain_top(f, by_path).kind
        text = js_trim(sent_text(f.content))
        if not text:
            continue
        blocks.append(f"Contents of {f.path}{PAYLOAD_LABELS.get(kind, '')}:\n\n{text}")
    if not blocks:
        return ""
    return f"<system-reminder>\n{REMINDER_HEAD}\n\n" + "\n\n".join(blocks) + (
        "\n</system-reminder>")


_FRONTMATTER = re.compile(r"^\ufeff?---\r?\n[\s\S]*?\r?\n---(?:\r?\n|$)")
# JavaScript's String.prototype.trim: its whitespace and line terminators, U+FEFF included.
_JS_SPACE = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
             "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)
_BLOCK_COMMENT = re.compile(r"^[ \t]{0,3}<!--[\s\S]*?-->[ \t]*(?:\r?\n|$)", re.MULTILINE)


def sent_text(content: str) -> str:
    """The part of a memory file Claude Code keeps: without frontmatter and HTML comment
    blocks (inline comments stay)."""
    return _BLOCK_COMMENT.sub("", _FRONTMATTER.sub("", content, count=1))


def strips_comment(content: str, start: int, end: int) -> bool:
    """The HTML comment `content[start:end]` lies in a comment block Claude Code strips (one
    starting a line; an inline comment stays in what it sends)."""
    block = _BLOCK_COMMENT.match(content, content.rfind("\n", 0, start) + 1)
    return block is not None and end <= block.end()


def is_blank(content: str) -> bool:
    """Empty once trimmed: Claude Code sends no block for it (nor for what it includes)."""
    return not js_trim(sent_text(content))
MAX_FILE_CHARS = 40_000
