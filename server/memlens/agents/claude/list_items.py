"""Where a list item ends as Claude Code 2.1's lexer draws it (its `marked` list rule), made to
hold in markdown-it-py's CommonMark parser (markdown.py).

CommonMark continues an item on a less indented line only as a paragraph's lazy continuation.
Claude Code's lexer takes such a line into the item whenever no blank line came before it in
the item and the line before it does not open an indented code block, a heading, a fence or a
thematic break: after an HTML comment, a fence's line or a `#tag` too. It ends the item at any
less indented line that opens a heading (any `#`), a fence, a thematic break, an HTML tag or
comment or a list item, where CommonMark may let a paragraph go on. Here each item's lines are
read that way when the item opens: a line taken in lazily is made as indented as the item's
content (its own indent kept relative to it), and a line that ends the item ends every
paragraph, quote or list inside it (`ends_item`, a terminator rule).
"""

from __future__ import annotations

import re

from markdown_it.parser_block import ParserBlock
from markdown_it.rules_block import StateBlock

from memlens.files.nodecompat import JS_WHITESPACE, js_trim

_BREAK_BLOCK = r"#|```|~~~|(?:- *- *-[- ]*|_ *_ *_[_ ]*|[*] *[*] *[*][* ]*)$"
# A less indented line that ends the item (tested where its text starts).
_ENDS_ITEM = re.compile(_BREAK_BLOCK + r"|<!--|<[A-Z].*>|(?:\d{1,9}[).]|[-+*])(?![^\t ])",
                        re.IGNORECASE)
# A line after which no lazy line follows (tested where its text starts).
_NO_LAZY_AFTER = re.compile(_BREAK_BLOCK)
_INDENTED_CODE = re.compile(r"(?: {0,3}\t| {4})[\t ]*[^\t ]")
_LEADING_SPACES = re.compile(r" *")
_ENV_KEY = "memlens_claude_items"


def _spaces(text: str) -> int:
    match = _LEADING_SPACES.match(text)
    return match.end() if match else 0


def _lazy_may_follow(previous: str, most: int) -> bool:
    start = _spaces(previous)
    return not _INDENTED_CODE.match(previous) and (
        start > most or not _NO_LAZY_AFTER.match(previous, start))


def _lazy_may_follow_line(indent: int, text: str, width: int, most: int) -> bool:
    """Whether a less indented line may follow this one (its indent past the list's and its
    text from the first character that is neither space nor tab) in an item `width` wide."""
    if indent >= width:  # the text starts `indent - width` columns into the item
        inside = indent - width
        return inside < 4 and (inside > most or not _NO_LAZY_AFTER.match(text))
    if len(text) <= width - indent:  # nothing of it is left in the item
        return True
    return _lazy_may_follow(text.replace("\t", "    ")[width - indent:], most)


class _Items:
    """The parse's record: the lines items end at (line -> the outermost such item's content
    indent) and where each open item ends (an item inside it ends there at the latest)."""

    def __init__(self) -> None:
        self.ends_at: dict[int, int] = {}
        self.bounds: list[int] = []


def _items(state: StateBlock) -> _Items:
    found = state.env.get(_ENV_KEY)
    if not isinstance(found, _Items):
        found = state.env[_ENV_KEY] = _Items()
    return found


def _after_marker(state: StateBlock, line: int) -> str:
    """The item's first line after its marker, the spaces before its text included."""
    content = state.bMarks[line] + state.tShift[line]
    start = content
    while start > state.bMarks[line] and state.src[start - 1] in " \t":
        start -= 1
    return state.src[start:state.eMarks[line]]


def _read_item(state: StateBlock, first: int, end: int, record: _Items) -> dict[int, int]:
    """Take in the item opening at `first` the lines Claude Code's lexer takes; returns the
    lines made more indented (line -> their indent before)."""
    outer, indent = state.listIndent, state.blkIndent
    width = indent - outer  # the marker and the spaces after it
    most = min(3, width - 1)
    after = _after_marker(state, first)
    blank_seen = not js_trim(after)
    lazy_may_follow = _lazy_may_follow(after.replace("\t", "    "), most)
    raised: dict[int, int] = {}
    src, begins, shifts, ends, columns = (state.src, state.bMarks, state.tShift, state.eMarks,
                                          state.sCount)
    line = first + 1
    while line < end:
        # The line as the list around the item sees it: its indent past the list's, and its
        # text from the first character that is neither space nor tab.
        start = max(0, columns[line] - outer)
        text = src[begins[line] + shifts[line]:ends[line]]
        if start <= most and _ENDS_ITEM.match(text):
            break
        blank = not text or (text[0] in JS_WHITESPACE and not js_trim(text))
        if not blank and start < width:
            if blank_seen or not lazy_may_follow:
                break
            raised[line] = columns[line]
            columns[line] = indent + start
        blank_seen = blank_seen or blank
        lazy_may_follow = _lazy_may_follow_line(start, text, width, most)
        line += 1
    if line < end and not state.isEmpty(line):
        record.ends_at[line] = min(record.ends_at.get(line, indent), indent)
    record.bounds.append(line)
    return raised


class ItemBlocks(ParserBlock):
    """markdown-it's block parser, reading each list item's lines as Claude Code does."""

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:
        opened = state.tokens[-1] if state.tokens else None
        if (opened is None or opened.type != "list_item_open" or opened.map is None
                or opened.map[0] != startLine):
            super().tokenize(state, startLine, endLine)
            return
        record = _items(state)
        bound = min([endLine, *record.bounds[-1:]])
        raised = _read_item(state, startLine, bound, record)
        try:
            super().tokenize(state, startLine, endLine)
        finally:
            record.bounds.pop()
            for line, before in raised.items():
                if line >= state.line:  # the item ended before it after all
                    state.sCount[line] = before


def ends_item(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A terminator: the line ends the list item it is less indented than (and whatever is
    open inside it). Never matches as a block of its own."""
    indent = _items(state).ends_at.get(start)
    return silent and indent is not None and state.blkIndent >= indent


def use_item_blocks(block: ParserBlock) -> ParserBlock:
    """A block parser with `block`'s rules that reads list items as Claude Code does."""
    blocks = ItemBlocks()
    blocks.ruler = block.ruler
    blocks.ruler.before("table", "claude_item_end", ends_item,
                        {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return blocks
