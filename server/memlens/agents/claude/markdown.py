"""How Claude Code 2.1 reads a memory file's text: its frontmatter, the HTML comments it
strips and the `@path` includes it follows.

Claude Code lexes the file with a `marked` lexer (``gfm: false``) and works on its tokens:
comment-only HTML blocks at the top level are cut out (with the blank lines marked's HTML block
swallows after them), and includes are read from text tokens only (never code blocks or code
spans; an HTML comment's text only outside the comment). Here the same grammar comes from
markdown-it-py's CommonMark parser (tables and strikethrough off, HTML on), with the marked
rules CommonMark lacks ported: a comment block ends after the line breaks that follow it, only
HTML in a line's first column interrupts a paragraph, an escape ends a text token, and a list
item ends where marked ends it (list_items.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, html_block
from markdown_it.token import Token

from memlens.agents.claude.list_items import use_item_blocks
from memlens.files.nodecompat import JS_WHITESPACE, js_trim

JS_SPACE = JS_WHITESPACE  # JavaScript's `\s` too (ECMAScript WhiteSpace and LineTerminator)
_S = f"[{re.escape(JS_SPACE)}]"
_FRONTMATTER = re.compile(rf"---{_S}*\n([\s\S]*?)---{_S}*\n?")
_COMMENT = re.compile(r"<!--[\s\S]*?-->")
_INCLUDE = re.compile(rf"(?:^|{_S})@((?:[^{re.escape(JS_SPACE)}\\]|\\ )+)")
_BARE_BAD_START = re.compile(r"[#%^&*()]+")
_BARE_START = re.compile(r"[a-zA-Z0-9._-]")


def split_frontmatter(text: str) -> tuple[str, str | None]:
    """(the body, the frontmatter's text or None). A leading byte-order mark is dropped with
    the frontmatter (a file without one keeps it); the block is `---` to the next `---`
    anywhere, and the whitespace and line break after it go with it."""
    body = text[1:] if text.startswith("\ufeff") else text
    if body.find("---", 3) < 0:
        return text, None
    match = _FRONTMATTER.match(body)
    if match is None:
        return text, None
    return body[match.end():], match[1]


def _html_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """CommonMark's HTML block, except that (as in marked) an indented one does not interrupt
    a paragraph: marked's paragraph ends only at HTML starting its line's first column."""
    if silent and state.sCount[start] - state.blkIndent > 0:
        return False
    return html_block(state, start, end, silent)


def _html_ends_quote(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Claude Code 2.1.332: an HTML block indented by one to three spaces ends a block
    quote's lazy continuation (2.1.330 continues the quote; a paragraph goes on in both).
    Only ever asked as a terminator: in the main chain it never matches."""
    indent = state.sCount[start] - state.blkIndent
    return silent and 0 < indent < 4 and html_block(state, start, end, True)


# Which Claude Code release's grammar to follow (`follow_claude_version`): the newest verified
# unless the installed or pinned one is older.
_QUOTE_ENDS_AT_INDENTED_HTML = (2, 1, 332)
_grammar = {"quote_ends_at_indented_html": True}


def follow_claude_version(version: str | None) -> None:
    """Parse as this Claude Code release does (None: the newest verified)."""
    numbers = tuple(int(n) for n in re.findall(r"\d+", version or "")[:3])
    _grammar["quote_ends_at_indented_html"] = (
        len(numbers) < 3 or numbers >= _QUOTE_ENDS_AT_INDENTED_HTML)


@lru_cache(maxsize=2)
def _parser(quote_ends_at_indented_html: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark")
    md.block = use_item_blocks(md.block)
    md.block.ruler.at("html_block", _html_block,
                      {"alt": ["paragraph", "reference", "blockquote"]})
    if quote_ends_at_indented_html:
        md.block.ruler.before("html_block", "html_ends_quote", _html_ends_quote,
                              {"alt": ["blockquote"]})
    # Escapes stay tokens of their own (marked's `escape` tokens end a text token).
    return md.disable("text_join")


def _tokens(text: str) -> list[Token]:
    return _parser(_grammar["quote_ends_at_indented_html"]).parse(text)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    return starts


def _is_comment(raw: str) -> bool:
    trimmed = raw.lstrip(JS_SPACE)
    return trimmed.startswith("<!--") and "-->" in raw


def _blocks(norm: str) -> list[tuple[int, int]]:
    """The spans of `norm` (LF line breaks) Claude Code cuts: its top-level comment blocks."""
    starts = _line_starts(norm)
    spans = []
    for token in _tokens(norm):
        if token.level != 0 or token.type != "html_block" or token.map is None:
            continue
        start = starts[token.map[0]]
        end = starts[token.map[1]] if token.map[1] < len(starts) else len(norm)
        if not _is_comment(norm[start:end]):
            continue
        # marked's comment block: through the line holding the first `-->`, then every "\n".
        close = norm.find("-->", norm.find("<!--", start) + 4)
        line_end = norm.find("\n", close)
        end = len(norm) if line_end < 0 else line_end
        while end < len(norm) and norm[end] == "\n":
            end += 1
        spans.append((start, end))
    return spans


def comment_spans(text: str) -> list[tuple[int, int]]:
    """Where the comment blocks Claude Code cuts lie in `text` itself (CRLF kept)."""
    if "<!--" not in text:
        return []
    norm = text.replace("\r\n", "\n").replace("\r", "\n")
    spans = _blocks(norm)
    if len(norm) == len(text):
        return spans
    where = [i for i, char in enumerate(text)
             if not (char == "\n" and i > 0 and text[i - 1] == "\r")]
    where.append(len(text))
    return [(where[start], where[end]) for start, end in spans]


def strip_comments(text: str) -> str:
    """The text without its top-level comment blocks: each block (a line starting with
    `<!--`, through the line that closes it, and every line break right after) is cut; what
    else the block holds beside its comments stays. Once anything is cut, line breaks are LF
    throughout (Claude Code rebuilds the text from its lexer's copy)."""
    if "<!--" not in text:
        return text
    norm = text.replace("\r\n", "\n").replace("\r", "\n")
    out, done = [], 0
    for start, end in _blocks(norm):
        kept = _COMMENT.sub("", norm[start:end])
        out.append(norm[done:start] + (kept if js_trim(kept) else ""))
        done = end
    if done == 0:
        return text
    return "".join(out) + norm[done:]


@dataclass(frozen=True)
class Include:
    raw: str  # as written after the `@`
    path: str  # the path it names: fragment cut, `\ ` unescaped


def _scan(text: str, out: dict[str, Include]) -> None:
    for match in _INCLUDE.finditer(text):
        raw = match[1]
        path = raw.split("#", 1)[0].replace("\\ ", " ")
        if not path:
            continue
        if (path.startswith(("./", "~/")) or (path.startswith("/") and path != "/")
                or (not path.startswith("@") and not _BARE_BAD_START.match(path)
                    and _BARE_START.match(path))):
            out.setdefault(path, Include(raw, path))


def _html(raw: str, out: dict[str, Include]) -> None:
    if _is_comment(raw):
        rest = _COMMENT.sub("", raw)
        if js_trim(rest):
            _scan(rest, out)


def _inline(children: list[Token], out: dict[str, Include]) -> None:
    text = ""
    for child in children:
        if child.type == "text":
            text += child.content
            continue
        if child.type == "text_special" and (child.info != "escape"
                                             or child.content.startswith("\\")):
            # An entity as written, or a backslash before what it cannot escape (`\ `).
            text += child.markup or child.content
            continue
        if text:
            _scan(text, out)
            text = ""
        if child.type in ("softbreak", "hardbreak", "text_special"):
            text = ""
        elif child.type == "html_inline":
            _html(child.content, out)
        elif child.children:
            _inline(child.children, out)
    if text:
        _scan(text, out)


def includes(text: str) -> list[Include]:
    """The includes Claude Code reads in `text` (a body without frontmatter), in order, once
    each: `@` at the start or after whitespace, then up to whitespace (`\\ ` is a space); a
    `#fragment` is cut; `./`, `~/`, `/x` or a name starting with an ASCII letter, digit, `.`,
    `_` or `-`. Not in code blocks or code spans; in a comment block only what lies outside
    its comments; in a list item the paragraph's whole text counts as well."""
    if "@" not in text:
        return []
    out: dict[str, Include] = {}
    tokens = _tokens(text.replace("\r\n", "\n").replace("\r", "\n"))
    containers: list[str] = []
    for index, token in enumerate(tokens):
        if token.type in ("list_item_open", "blockquote_open"):
            containers.append(token.type)
        elif token.type in ("list_item_close", "blockquote_close"):
            containers.pop()
        elif token.type == "html_block":
            _html(token.content, out)
        elif token.type == "inline":
            before = tokens[index - 1] if index else None
            if (before is not None and before.type == "paragraph_open" and containers
                    and containers[-1] == "list_item_open"):
                # marked lexes a list item's paragraph as a `text` token (paragraphs are for
                # the top level and block quotes): its raw text counts as well.
                _scan(token.content, out)
            _inline(token.children or [], out)
    return list(out.values())
