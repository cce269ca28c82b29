"""How Claude Code reads the text of a SKILL.md for its skills listing (verified on 2.1.330 and
2.1.332: tests/conformance/skills/cases.yaml, `claude-skills-escapes`, `-broken-yaml`, `-bom`,
`-budget-wide`, `-budget-narrow`; docs/reference.md "Skills").

* The frontmatter: one byte-order mark is dropped first; the block opens with ``---`` and ends
  at the next ``---`` anywhere after it (not only on a line of its own: ``a---b`` closes it
  after ``a``), the whitespace after it included. A file with no ``---`` past its first three
  characters has none.
* Its YAML (YAML 1.2's core schema: `skill_yaml.py`): read as it is, else read again with
  each ``key: value`` line whose value holds a character YAML gives a meaning
  (``{ } [ ] * & # ! | > % @ ``` or ``: ``) quoted, unless the value is quoted already or a
  list that loads; tabs that indent a line become two spaces each. Control characters in a
  value load as they are.
* Its text: terminal escape sequences are removed (CSI, OSC and DCS sequences, two-character
  escapes, a lone ESC); then each run of hidden characters (controls, format characters,
  private use, unassigned, fillers and variation selectors outside an emoji) becomes one
  space. Trimming is JavaScript's (a byte-order mark is whitespace to it, U+001C..U+001F are
  not).
* Its budget counts terminal columns, not characters: a wide (CJK, emoji) character counts
  two, a combining mark or joiner none.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

# ------------------------------------------------------------------ terminal escape sequences
_ESC = "\x1b"
_CSI_C1 = "\x9b"
_OSC_C1 = "\x9d"
_ST_C1 = "\x9c"
_STRING_OPENERS = "]PX^_"  # after ESC: OSC, DCS, SOS, PM, APC: a string up to its terminator


def _string_end(text: str, start: int) -> int:
    """Where a control string that starts at `start` ends (past BEL, ESC \\ or ST; the end of
    the text when it is never closed)."""
    i = start
    while i < len(text):
        ch = text[i]
        if ch in ("\x07", _ST_C1):
            return i + 1
        if ch == _ESC and text[i + 1:i + 2] == "\\":
            return i + 2
        i += 1
    return i


def _csi_end(text: str, start: int) -> int:
    """Past a CSI sequence's parameters (0x30-0x3F), intermediates (0x20-0x2F) and final byte
    (0x40-0x7E), from `start` (just after its introducer)."""
    i = start
    while i < len(text) and "\x30" <= text[i] <= "\x3f":
        i += 1
    while i < len(text) and "\x20" <= text[i] <= "\x2f":
        i += 1
    if i < len(text) and "\x40" <= text[i] <= "\x7e":
        i += 1
    return i


def strip_escapes(text: str) -> str:
    """`text` without terminal escape sequences, as Claude Code removes them from what it
    lists."""
    if _ESC not in text and _CSI_C1 not in text and _OSC_C1 not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == _CSI_C1:
            i = _csi_end(text, i + 1)
        elif ch == _OSC_C1:
            i = _string_end(text, i + 1)
        elif ch != _ESC:
            out.append(ch)
            i += 1
        else:
            following = text[i + 1:i + 2]
            if following == "[":
                i = _csi_end(text, i + 2)
            elif following and following in _STRING_OPENERS:
                i = _string_end(text, i + 2)
            else:
                # ESC, intermediates (0x20-0x2F), a final byte (0x30-0x7E); a lone ESC goes
                j = i + 1
                while j < len(text) and "\x20" <= text[j] <= "\x2f":
                    j += 1
                if j < len(text) and "\x30" <= text[j] <= "\x7e":
                    i = j + 1
                else:
                    i += 1
    return "".join(out)


# ------------------------------------------------------------------ hidden characters
# Code points hidden beyond the control, format, surrogate, private-use and unassigned ones.
_HIDDEN_RANGES = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
                  (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
                  (0x2028, 0x2029), (0x2060, 0x206F), (0x2800, 0x2800), (0x3164, 0x3164),
                  (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFFB),
                  (0x1107F, 0x1107F), (0x13430, 0x1343F), (0x16FE4, 0x16FE4),
                  (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
_ZWJ = "\u200d"


def _hidden(ch: str) -> bool:
    code = ord(ch)
    if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
        return True
    return any(low <= code <= high for low, high in _HIDDEN_RANGES)


def _pictographic(ch: str) -> bool:
    code = ord(ch)
    return (0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF
            or unicodedata.category(ch) == "So")


_JOINERS = re.compile("[\u200c\u200d\ufe0f\U000e007f]")
_EMOJI_SCAN_LIMIT = 4096  # UTF-16 units: a longer text keeps no joiner


def _emoji_positions(text: str) -> set[int]:
    """The positions of the characters of each RGI emoji in `text` (a family, a flag, a
    keycap: what Unicode recommends for general interchange), whose joiners and variation
    selectors are kept; only looked for in a text that holds a joiner."""
    if not _JOINERS.search(text) or len(text.encode("utf-16-le")) // 2 > _EMOJI_SCAN_LIMIT:
        return set()
    import emoji

    qualified = emoji.STATUS["fully_qualified"]
    kept: set[int] = set()
    for found in emoji.emoji_list(text):
        if emoji.EMOJI_DATA.get(found["emoji"], {}).get("status") == qualified:
            kept.update(range(found["match_start"], found["match_end"]))
    return kept


def hide(text: str) -> str:
    """Escapes removed, each run of hidden characters one space (the characters of an emoji
    kept)."""
    text = strip_escapes(text)
    kept = _emoji_positions(text)
    out: list[str] = []
    for i, ch in enumerate(text):
        if _hidden(ch) and i not in kept:
            if not out or out[-1] != " " or not _hidden(text[i - 1]):
                out.append(" ")
            continue
        out.append(ch)
    return "".join(out)


# JavaScript's String.prototype.trim: white space (Zs, tab, VT, FF, BOM) and line terminators.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008" \
            "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_trim(text: str) -> str:
    return text.strip(_JS_SPACE)


# ------------------------------------------------------------------ width in terminal columns
def _is_regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def columns(text: str) -> int:
    """The columns `text` takes in a terminal (what Claude Code's listing budget counts):
    escapes and controls none, combining marks and joiners none, wide and full-width
    characters two, the parts of an emoji sequence after its first none, others one."""
    text = strip_escapes(text)
    total = 0
    joined = False  # the previous character was a zero-width joiner inside an emoji
    regional_open = False
    for ch in text:
        code = ord(ch)
        category = unicodedata.category(ch)
        if ch == _ZWJ:
            joined = True
            continue
        if category in ("Mn", "Me", "Cc", "Cf", "Cs") or 0xFE00 <= code <= 0xFE0F:
            continue
        if joined and _pictographic(ch):
            joined = False
            continue
        joined = False
        if 0x1F3FB <= code <= 0x1F3FF:  # a skin tone after an emoji
            continue
        if _is_regional(ch):
            total += 0 if regional_open else 2
            regional_open = not regional_open
            continue
        regional_open = False
        total += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return total


# ------------------------------------------------------------------ frontmatter
_OPENED = re.compile(r"^---\s*\n([\s\S]*?)---\s*\n?")
_KEY_VALUE = re.compile(r"^([a-zA-Z_-]+):\s+(\S[^\n\r\u2028\u2029]*)$")
_MEANINGFUL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_LEADING_TABS = re.compile(r"^\t+", re.MULTILINE)


def _requoted(frontmatter: str) -> str:
    """Each `key: value` line whose value holds a character YAML gives a meaning, quoted (the
    second reading); values quoted already and lists that load are kept."""
    out = []
    for line in frontmatter.split("\n"):
        match = _KEY_VALUE.match(line)
        if match:
            key, value = match.group(1), match.group(2)
            quoted = value.startswith(('"', "'")) and value.endswith(value[0])
            listed = (value.startswith("[") and value.endswith("]")
                      and isinstance(_load(value), list))
            if not quoted and not listed and _MEANINGFUL.search(value):
                value = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{key}: "{value}"'
        out.append(line)
    return "\n".join(out)


def _load(text: str) -> Any:
    from memlens.agents.claude.skill_yaml import load

    return load(text)


def _mapping(text: str) -> dict[str, Any] | None:
    try:
        data = _load(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else {}  # a list, a scalar or nothing: no keys


def read_frontmatter(text: str) -> tuple[dict[str, Any], str, bool]:
    """(the frontmatter's keys, the body, whether the YAML had to be read again or was
    ignored), as Claude Code splits a SKILL.md."""
    original = text
    if text.startswith("\ufeff"):
        text = text[1:]
    match = _OPENED.match(text) if text.find("---", 3) >= 0 else None
    if match is None:
        return {}, original, False
    body = text[match.end():]
    yaml = match.group(1) or ""
    data = _mapping(yaml)
    if data is not None:
        return data, body, False
    again = _LEADING_TABS.sub(lambda m: "  " * len(m.group(0)), _requoted(yaml))
    data = _mapping(again)
    return (data or {}), body, True


__all__ = ["columns", "hide", "js_trim", "read_frontmatter", "strip_escapes"]
