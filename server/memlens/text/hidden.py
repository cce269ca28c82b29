"""Text the agent reads and a reviewer cannot see (docs/reference.md "Hidden content"): invisible
and bidi-control characters, Unicode tag characters, runs of variation selectors, and HTML comments.
Pure text scanning (no file system, no agent).

The classes, each with its rule (docs/reference.md "Hidden content" says the same to users):

- `tag` — Unicode tag characters U+E0000–U+E007F. They render as nothing, and U+E0020–U+E007E
  spell ASCII ("ASCII smuggling"): the message shows the decoded text. Not hidden: an emoji
  tag sequence (U+1F3F4 then tag letters/digits ending in U+E007F: the flags of Scotland,
  Wales, England). Error.
- `bidi` — bidirectional embeddings, overrides and isolates (Unicode bidi classes LRE, RLE,
  LRO, RLO, PDF, LRI, RLI, FSI, PDI: U+202A–U+202E, U+2066–U+2069):
  they make the editor show the text in another order than the agent reads it ("Trojan
  Source"). Error. The marks U+200E, U+200F and U+061C (LRM, RLM, ALM) are `bidi` too but a
  warning: they only move neutral characters next to them, and right-to-left writers use them.
- `selectors` — two or more variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF) after one
  character: no variation sequence has two, and the run can carry bytes (one selector per byte,
  "emoji smuggling"); decoded to the text it spells when it does (then an error, else a
  warning).
- `invisible` — every other Default_Ignorable_Code_Point (Unicode's derived property; Python's
  `unicodedata` has no such property, so: category Cf, plus the non-Cf ignorables U+034F,
  U+115F, U+1160, U+17B4, U+17B5, U+180B–U+180F, U+3164, U+FFA0, the variation selectors, the
  unassigned U+2065, U+FFF0–U+FFF8, U+E0080–U+E0FFF), plus U+2800 BRAILLE PATTERN BLANK (it
  renders as a space-sized blank outside braille). A run of them is one warning with a count.
  Legitimate uses are not reported:
  - a byte-order mark at the very start of a file (other diagnostics handle it);
  - ZWJ (U+200D) between two emoji (👨‍👩‍👧, 🏳️‍🌈: a variation selector or skin-tone modifier may
    stand between the first emoji and the ZWJ);
  - ZWNJ / ZWJ (U+200C / U+200D) between letters or marks of a script that uses them for
    shaping: Arabic, Syriac, N'Ko, Mongolian, the Indic scripts (after a virama, too), Sinhala,
    Myanmar, Khmer (Persian "می‌خواهم", Hindi "क्‍ष");
  - ZWSP (U+200B) between letters of a script written without spaces (Thai, Lao, Khmer,
    Myanmar), where it marks word breaks;
  - one variation selector after a character it can vary: U+FE0E/U+FE0F after an emoji, a
    keycap base (# * 0–9), a symbol or punctuation (❤️, 1️⃣, ↔︎); U+FE00–U+FE0D after a symbol
    or a letter of a script with standardized variation sequences (CJK, Myanmar, …: not
    Latin, Greek or Cyrillic); U+E0100–U+E01EF after a CJK ideograph;
  - U+180B–U+180F between Mongolian letters, U+115F/U+1160 before/after Hangul jamo, U+034F
    (combining grapheme joiner) after a letter or mark and before a mark, U+2800 next to
    another braille pattern;
  - the prepended concatenation marks (U+0600–U+0605, U+06DD, U+070F, U+0890, U+0891, U+08E2,
    U+110BD, U+110CD: category Cf but drawn) and the Egyptian hieroglyph and shorthand format
    controls (U+13430–U+1345F, U+1BCA0–U+1BCA3), which shape visible text.

HTML comments (`<!-- … -->` outside code spans and blocks, found with Gemini CLI's code-region
rule `imports.find_code_regions`) are listed by `find_comments`; which agents receive each is
the agents' business (`MemoryAgent.sends_comment`).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Severity
from memlens.text.references import find_code_regions
from memlens.text.textpos import LineIndex

HiddenKind = Literal["tag", "bidi", "selectors", "invisible"]

HIDDEN_TEXT = "hidden-text"
HIDDEN_COMMENT = "hidden-comment"

# The explicit bidirectional formatting characters, by their Unicode bidi class (U+202A–U+202E,
# U+2066–U+2069).
_BIDI_CONTROL_CLASSES = frozenset(("LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"))
_BIDI_MARKS = frozenset((0x200E, 0x200F, 0x061C))
_ZWSP, _ZWNJ, _ZWJ, _BOM, _CGJ, _BRAILLE_BLANK = 0x200B, 0x200C, 0x200D, 0xFEFF, 0x034F, 0x2800
_BLACK_FLAG = 0x1F3F4
_CANCEL_TAG = 0xE007F
# Default_Ignorable_Code_Point outside category Cf (DerivedCoreProperties.txt).
_IGNORABLE_NOT_CF = (frozenset((0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0x2065))
                     | frozenset(range(0x180B, 0x1810)) | frozenset(range(0xFE00, 0xFE10))
                     | frozenset(range(0xFFF0, 0xFFF9)) | frozenset(range(0xE0000, 0xE1000)))
# Cf characters that are drawn or shape visible text: not hidden.
_VISIBLE_FORMAT = (frozenset((0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD))
                   | frozenset(range(0x0600, 0x0606)) | frozenset(range(0x13430, 0x13460))
                   | frozenset(range(0x1BCA0, 0x1BCA4)))
# Scripts whose shaping uses ZWNJ/ZWJ: Arabic (and supplements, presentation forms), Syriac,
# Thaana, N'Ko, Mongolian, the Indic scripts Devanagari … Sinhala, Myanmar, Khmer, Tibetan.
_JOINER_SCRIPTS = ((0x0600, 0x08FF), (0x0900, 0x0DFF), (0x0F00, 0x0FFF), (0x1000, 0x109F),
                   (0x1780, 0x18AF), (0xA8E0, 0xA8FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFE),
                   (0x07C0, 0x07FF), (0x11000, 0x1107F))
# Scripts written without spaces, where ZWSP marks word breaks: Thai, Lao, Khmer, Myanmar.
_NO_SPACE_SCRIPTS = ((0x0E00, 0x0EFF), (0x1780, 0x17FF), (0x1000, 0x109F))
_EMOJI_RANGES = ((0x1F000, 0x1FAFF), (0x2600, 0x27BF), (0x2300, 0x23FF), (0x2B00, 0x2BFF),
                 (0x2190, 0x21FF), (0x2900, 0x297F), (0x3030, 0x3030), (0x303D, 0x303D),
                 (0x3297, 0x3299), (0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C),
                 (0x2049, 0x2049), (0x2122, 0x2122), (0x2139, 0x2139), (0x24C2, 0x24C2),
                 (0x25AA, 0x25FE))
_SKIN_TONES = range(0x1F3FB, 0x1F400)


def _in(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _is_bidi_control(cp: int) -> bool:
    return unicodedata.bidirectional(chr(cp)) in _BIDI_CONTROL_CLASSES


def _is_selector(cp: int) -> bool:
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


def _is_emoji(cp: int) -> bool:
    return _in(cp, _EMOJI_RANGES)


def _category(cp: int) -> str:
    return unicodedata.category(chr(cp))


def is_default_ignorable(cp: int) -> bool:
    """Unicode's Default_Ignorable_Code_Point (category Cf is a superset of most of it)."""
    return cp in _IGNORABLE_NOT_CF or _category(cp) == "Cf"


def _is_ignorable(cp: int) -> bool:
    return cp in _IGNORABLE_NOT_CF or (_category(cp) == "Cf" and cp not in _VISIBLE_FORMAT)


def _is_virama(cp: int | None) -> bool:
    name = unicodedata.name(chr(cp), "") if cp is not None else ""
    return any(word in name for word in ("VIRAMA", "AL-LAKUNA", "COENG", "ASAT"))


def _drawn_letter(cp: int | None) -> bool:
    """A letter or mark that is not itself ignorable (a variation selector is a mark)."""
    return cp is not None and _category(cp)[0] in "LM" and not _is_ignorable(cp)


def _shaping_letter(cp: int | None) -> bool:
    return _drawn_letter(cp) and _in(cp or 0, _JOINER_SCRIPTS)


@dataclass(frozen=True)
class HiddenRun:
    """A run of hidden characters of one kind: `text[start:end]`."""

    start: int
    end: int
    kind: HiddenKind
    chars: str
    decoded: str | None = None  # what tag characters or selectors spell, when they do

    @property
    def count(self) -> int:
        return self.end - self.start

    @property
    def severity(self) -> Severity:
        if self.kind == "tag":
            return "error"
        if self.kind == "bidi":
            return "error" if any(_is_bidi_control(ord(c)) for c in self.chars) else "warning"
        if self.kind == "selectors":
            return "error" if self.decoded else "warning"
        return "warning"

    @property
    def message(self) -> str:
        n = self.count
        names = describe_chars(self.chars)
        if self.kind == "tag":
            spelled = (f' that spell{"s" if n == 1 else ""} "{self.decoded}"' if self.decoded
                       else "")
            return (f"{n} invisible Unicode tag character{_s(n)}{spelled} (ASCII smuggling): "
                    f"the agent reads {'them' if n > 1 else 'it'}, the editor and rendered "
                    "Markdown show nothing")
        if self.kind == "bidi":
            if self.severity == "error":
                return (f"{n} bidirectional control character{_s(n)} ({names}) (Trojan "
                        "Source): the editor shows this text in another order than the agent "
                        "reads it")
            return (f"{n} invisible bidirectional mark{_s(n)} ({names}): it changes how the "
                    "text around it is ordered on screen, not what the agent reads")
        if self.kind == "selectors":
            spelled = (f' that spell "{self.decoded}"' if self.decoded
                       else "; no variation sequence has more than one")
            return (f"{n} variation selectors after one character{spelled} (emoji "
                    "smuggling): the agent reads them, the editor shows one character")
        return (f"{n} invisible character{_s(n)} ({names}): the agent reads "
                f"{'them' if n > 1 else 'it'}, the editor and rendered Markdown show nothing")


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def char_name(cp: int) -> str:
    name = unicodedata.name(chr(cp), "")
    if not name and 0xE0100 <= cp <= 0xE01EF:
        name = f"VARIATION SELECTOR-{cp - 0xE0100 + 17}"
    return f"U+{cp:04X} {name}".rstrip()


def describe_chars(chars: str, limit: int = 3) -> str:
    """'U+200B ZERO WIDTH SPACE ×3, U+200C ZERO WIDTH NON-JOINER': each distinct code point
    with its count, the first `limit` of them."""
    counts: dict[int, int] = {}
    for c in chars:
        counts[ord(c)] = counts.get(ord(c), 0) + 1
    parts = [char_name(cp) + (f" ×{k}" if k > 1 else "") for cp, k in counts.items()]
    more = len(parts) - limit
    return ", ".join(parts[:limit]) + (f" and {more} more" if more > 0 else "")


def decode_tags(chars: str) -> str:
    """The ASCII that tag characters U+E0020–U+E007E spell (others are left out)."""
    return "".join(chr(ord(c) - 0xE0000) for c in chars if 0xE0020 <= ord(c) <= 0xE007E)


def decode_selectors(chars: str) -> str | None:
    """The text a run of variation selectors spells with one selector per byte (U+FE00–U+FE0F
    bytes 0–15, U+E0100–U+E01EF bytes 16–255), when that is printable UTF-8; else None."""
    data = bytes((ord(c) - 0xFE00) if ord(c) <= 0xFE0F else (ord(c) - 0xE0100 + 16)
                 for c in chars)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.strip() and all(c.isprintable() or c in "\n\t" for c in text) else None


def _legit(text: str, i: int) -> bool:
    """`text[i]` (an ignorable character) is used as intended where it stands."""
    cp = ord(text[i])
    prev = ord(text[i - 1]) if i > 0 else None
    nxt = ord(text[i + 1]) if i + 1 < len(text) else None
    if cp == _BOM:
        return i == 0
    if cp == _ZWJ:
        # The emoji before the ZWJ, past its presentation selector or skin-tone modifier.
        j = i - 1
        while j >= 0 and (ord(text[j]) in (0xFE0F, 0xFE0E) or ord(text[j]) in _SKIN_TONES):
            j -= 1
        if j >= 0 and _is_emoji(ord(text[j])) and nxt is not None and _is_emoji(nxt):
            return True
    if cp in (_ZWNJ, _ZWJ):
        # Between letters of a shaping script, or after a virama (a Malayalam chillu ends a
        # word with virama + ZWJ).
        return _shaping_letter(prev) and (_drawn_letter(nxt) or _is_virama(prev))
    if cp == _ZWSP:
        return (_drawn_letter(prev) and _drawn_letter(nxt) and _in(prev or 0, _NO_SPACE_SCRIPTS)
                and _in(nxt or 0, _NO_SPACE_SCRIPTS))
    if _is_selector(cp):
        if (prev is None or _is_ignorable(prev) or prev == _BRAILLE_BLANK
                or (nxt is not None and _is_selector(nxt))):
            return False
        if cp >= 0xE0100:
            return unicodedata.name(chr(prev), "").startswith("CJK")
        if cp >= 0xFE0E:  # text / emoji presentation: emoji, keycap bases, symbols
            return _is_emoji(prev) or chr(prev) in "#*0123456789" or _category(prev)[0] in "SP"
        # Standardized variation sequences: math and other symbols, CJK compatibility
        # ideographs, Myanmar, Phags-pa, Manichaean, hieroglyphs (no Latin, Greek, Cyrillic).
        return _category(prev)[0] == "S" or (_category(prev)[0] in "LM" and prev >= 0x1000)
    if 0x180B <= cp <= 0x180F:
        return _drawn_letter(prev) and 0x1820 <= (prev or 0) <= 0x18AF
    if cp in (0x115F, 0x1160):
        return any(_drawn_letter(c) and 0x1100 <= (c or 0) <= 0x11FF for c in (prev, nxt))
    if cp == _CGJ:
        return _drawn_letter(prev) and _drawn_letter(nxt) and _category(nxt or 0)[0] == "M"
    if cp == _BRAILLE_BLANK:
        return any(c is not None and 0x2801 <= c <= 0x28FF for c in (prev, nxt))
    return False


def _kind(cp: int) -> HiddenKind:
    if 0xE0000 <= cp <= 0xE007F:
        return "tag"
    if _is_bidi_control(cp) or cp in _BIDI_MARKS:
        return "bidi"
    return "invisible"


def _flag_sequence_end(text: str, i: int) -> int:
    """Past an emoji tag sequence starting at `text[i]` (U+1F3F4, tags, U+E007F), else i."""
    if ord(text[i]) != _BLACK_FLAG:
        return i
    j = i + 1
    while j < len(text) and (0xE0030 <= ord(text[j]) <= 0xE0039
                             or 0xE0061 <= ord(text[j]) <= 0xE007A):
        j += 1
    if j > i + 1 and j < len(text) and ord(text[j]) == _CANCEL_TAG:
        return j + 1
    return i


# A quick pre-check: the text holds no candidate at all (most memory files).
_CANDIDATES = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U000e0000-\U000e0fff"
    "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U00013430-\U0001345f]")


def find_hidden(text: str) -> list[HiddenRun]:
    """Every run of hidden characters in `text`, in order (one run: adjacent characters of one
    kind)."""
    if not _CANDIDATES.search(text):
        return []
    runs: list[HiddenRun] = []
    i, n = 0, len(text)
    pending: tuple[int, HiddenKind] | None = None  # (start, kind) of the run being built

    def close(end: int) -> None:
        nonlocal pending
        if pending is not None:
            start, kind = pending
            chars = text[start:end]
            decoded = (decode_tags(chars) or None) if kind == "tag" else None
            runs.append(HiddenRun(start, end, kind, chars, decoded))
            pending = None

    while i < n:
        cp = ord(text[i])
        flag_end = _flag_sequence_end(text, i)
        if flag_end > i:
            close(i)
            i = flag_end
            continue
        if _is_selector(cp) and i > 0 and not _is_selector(ord(text[i - 1])):
            # Two or more selectors after one character: a run of their own.
            j = i
            while j < n and _is_selector(ord(text[j])):
                j += 1
            if j - i >= 2:
                close(i)
                chars = text[i:j]
                runs.append(HiddenRun(i, j, "selectors", chars, decode_selectors(chars)))
                i = j
                continue
        hidden = (cp == _BRAILLE_BLANK or _is_ignorable(cp)) and not _legit(text, i)
        if hidden:
            kind = _kind(cp)
            if pending is not None and pending[1] != kind:
                close(i)
            if pending is None:
                pending = (i, kind)
        else:
            close(i)
        i += 1
    close(n)
    return runs


def strip_hidden(text: str, runs: list[HiddenRun] | None = None) -> str:
    """`text` without the characters of `runs` (default: every hidden run)."""
    out, last = [], 0
    for run in find_hidden(text) if runs is None else runs:
        out.append(text[last:run.start])
        last = run.end
    out.append(text[last:])
    return "".join(out)


def escape_run(run: HiddenRun) -> str:
    """How a preview shows a run: `⟦U+200B⟧`, `⟦U+200B×12⟧`, `⟦U+202E⟧⟦U+2066⟧`, and for tag
    characters `⟦tags: "the decoded ASCII"⟧`."""
    if run.decoded is not None:
        what = "tags" if run.kind == "tag" else "selectors"
        return f'⟦{what}: "{run.decoded}"⟧'
    out: list[str] = []
    k = 0
    chars = run.chars
    while k < len(chars):
        j = k
        while j < len(chars) and chars[j] == chars[k]:
            j += 1
        count = j - k
        out.append(f"⟦U+{ord(chars[k]):04X}{f'×{count}' if count > 1 else ''}⟧")
        k = j
    return "".join(out)


def escape_hidden(text: str) -> str:
    """`text` with every hidden run shown as visible escapes (previews only: the CLI's `show`
    stays byte-exact)."""
    runs = find_hidden(text)
    if not runs:
        return text
    out, last = [], 0
    for run in runs:
        out += [text[last:run.start], escape_run(run)]
        last = run.end
    out.append(text[last:])
    return "".join(out)


_COMMENT = re.compile(r"<!--([\s\S]*?)-->")


@dataclass(frozen=True)
class Comment:
    start: int
    end: int
    body: str


def find_comments(text: str) -> list[Comment]:
    """Every HTML comment with something in it (`<!-- … -->`), outside code spans and blocks."""
    if "<!--" not in text:
        return []
    regions = find_code_regions(text)
    found = []
    for m in _COMMENT.finditer(text):
        if not m.group(1).strip():
            continue
        if any(lo <= m.start() < hi for lo, hi in regions):
            continue
        found.append(Comment(m.start(), m.end(), m.group(1)))
    return found


def comment_message(receivers: list[str], strippers: list[str]) -> str:
    """'Gemini CLI and Codex receive this HTML comment; Claude Code strips it; rendered
    Markdown hides it'."""
    verb = "receives" if len(receivers) == 1 else "receive"
    text = f"{_join(receivers)} {verb} this HTML comment"
    if strippers:
        text += f"; {_join(strippers)} {'strips' if len(strippers) == 1 else 'strip'} it"
    text += "; rendered Markdown hides it from a reviewer"
    return text[:1].upper() + text[1:]


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class CommentReader(Protocol):
    """What `file_diagnostics` asks of an agent that reads a file (`MemoryAgent` is one)."""

    receiver: str  # how a message names it: "Claude Code"

    def sends_comment(self, text: str, start: int, end: int) -> bool:
        """Whether the HTML comment at `text[start:end]` reaches the model."""
        ...


# A comment that is only a tool's marker says nothing to a model a reviewer would miss: a
# generated block's bounds (`<!-- BEGIN:nextjs-agent-rules -->`, `<!-- END … -->` as one
# word), a formatter's or linter's switch, a table-of-contents slot. Not worth a finding.
_MARKER = re.compile(
    r"\s*(?:(?:BEGIN|END|START|STOP)(?:[:_-][\w.:/-]{1,60})?"
    r"|prettier-ignore(?:-start|-end)?|markdownlint-(?:disable|enable|capture|restore)"
    r"(?:-next-line|-line|-file)?(?: MD\d{3})*|toc|/toc)\s*", re.IGNORECASE)


def is_marker_comment(body: str) -> bool:
    """Whether a comment's text (between `<!--` and `-->`) is only a tool's marker."""
    return _MARKER.fullmatch(body) is not None


def file_diagnostics(path: str, text: str, readers: Sequence[CommentReader]) -> list[Diagnostic]:
    """`hidden-text` on each hidden run of `path`'s text, and `hidden-comment` on each HTML
    comment some agent of `readers` (those that read the file) receives."""
    runs = find_hidden(text)
    comments = find_comments(text)
    if not runs and not comments:
        return []
    index = LineIndex(text)
    out: list[Diagnostic] = []

    def add(start: int, end: int, severity: Severity, code: str, message: str,
            detail: str | None = None) -> None:
        line, col = index.position(start)
        end_line, end_col = index.position(end)
        out.append(Diagnostic(path=path, line=line, col=col, end_line=end_line,
                              end_col=end_col, severity=severity, code=code, message=message,
                              detail=detail))

    for run in runs:
        add(run.start, run.end, run.severity, HIDDEN_TEXT, run.message)
    names = list(dict.fromkeys(a.receiver for a in readers))
    for comment in comments:
        if is_marker_comment(comment.body):
            continue
        receivers = list(dict.fromkeys(a.receiver for a in readers
                                       if a.sends_comment(text, comment.start, comment.end)))
        if not receivers:
            continue
        strippers = [n for n in names if n not in receivers]
        add(comment.start, comment.end, "info", HIDDEN_COMMENT,
            comment_message(receivers, strippers))
    return out


OUTSIDE_FLAG = "⚠ from outside the repository: {path}"
# The lines that open a file's text in a rendered context: Gemini CLI's `--- Context from: P
# ---` and flat imports' `--- File: P ---`, Claude Code's `Contents of P (label):`, the
# AGENTS.md convention's `--- P ---`.
_OPENER = re.compile(r"^(?:--- (?:Context from|File): (/.+) ---|Contents of (/.+?)(?: \([^)]*\))?:"
                     r"|--- (/.+) ---)\r?$")
_IMPORT_MARK = re.compile(r"<!-- (Imported from|End of import from): (.+?) -->")


def visible_preview(text: str, repository: str | None, memory_names: Container[str],
                    base_file: str | None = None) -> tuple[str, list[int]]:
    """A rendered context as an editor preview shows it: every hidden run as a visible escape
    (`escape_hidden`), and a line `⚠ from outside the repository: PATH` before the text of
    each file outside `repository` — every import, and every file section but the memory
    files found by name (`memory_names`: the user's own global GEMINI.md, CLAUDE.md…).
    `base_file`: the file whose imports the text starts with (an import hover). Returns the
    text and, for each line of `text`, its line number in the result."""
    from memlens.files.nodecompat import dirname, is_subpath, resolve

    def outside(path: str) -> bool:
        return repository is not None and not is_subpath(repository, path)

    out: list[str] = []
    line_map: list[int] = []
    current = base_file
    stack: list[str] = []
    for line in text.split("\n"):
        opener = _OPENER.match(line)
        if opener is not None:
            current = next(g for g in opener.groups() if g)
            stack = []
            if outside(current) and posixpath.basename(current) not in memory_names:
                out.append(OUTSIDE_FLAG.format(path=current))
        for mark in _IMPORT_MARK.finditer(line):
            if mark.group(1) == "End of import from":
                if stack:
                    stack.pop()
                continue
            holder = stack[-1] if stack else current
            target = resolve(dirname(holder), mark.group(2)) if holder else mark.group(2)
            stack.append(target)
            if outside(target):
                out.append(OUTSIDE_FLAG.format(path=target))
        line_map.append(len(out))
        out.append(escape_hidden(line))
    return "\n".join(out), line_map
