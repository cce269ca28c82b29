"""Safe text and JSON output of names that come from the file system or from a model.

A folder name may hold a newline (forging output lines, GitHub workflow commands), terminal
escape sequences, or bytes that are not UTF-8. Text output shows such a path quoted, C-style
(`"a\\nb"`, `\\xff` for a byte that is not UTF-8) and leaves every other path as it is; JSON
output keeps every string valid UTF-8, with a reversible form for paths that are not.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls, DEL, C1 controls, the Unicode line and paragraph separators, and the lone
# surrogates Python uses for bytes that are not UTF-8 (PEP 383).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\udc80-\udcff]")
_NEEDS_QUOTES = re.compile('[\x00-\x1f\x7f-\x9f\u2028\u2029\udc80-\udcff"\\\\]')
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\e"}


def _escape_one(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def escape_controls(text: str, *, keep: str = "") -> str:
    """`text` with every control character written as an escape (`\\n`, `\\e`, `\\x07`, ...);
    characters in `keep` (say "\\n\\t" for a diff) stay as they are."""
    return _CONTROL.sub(lambda m: m[0] if m[0] in keep else _escape_one(m[0]), text)


def display_path(path: str) -> str:
    """A path for one line of text output: as it is, unless it holds a control character,
    a byte that is not UTF-8, a backslash or a double quote; then C-style quoted (as git's
    core.quotePath does), so it can neither break the line nor be mistaken for another."""
    if not _NEEDS_QUOTES.search(path):
        return path
    body = path.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _CONTROL.sub(lambda m: _escape_one(m[0]), body) + '"'


def _undecodable(text: str) -> bool:
    return any(0xDC80 <= ord(c) <= 0xDCFF for c in text)


def json_safe(value: Any) -> Any:
    """A JSON value every consumer can read back: an absolute path that is not valid UTF-8
    becomes a `file://` URI with its bytes percent-encoded (RFC 8089; reversible with
    `urllib.parse.unquote_to_bytes`; a plain path never starts with `file:`); in any other
    string a byte that is not UTF-8 becomes U+FFFD, as Node (and so the agent) reads it."""
    if isinstance(value, str):
        if not _undecodable(value):
            return value
        raw = value.encode("utf-8", "surrogateescape")
        if value.startswith("/") and "\n" not in value:
            from urllib.parse import quote

            return "file://" + quote(raw, safe="/")
        return raw.decode("utf-8", "replace")
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
