"""Safe output of names that come from the file system or from a model, and the one way every
output option (`--html`, `--markdown`, `--json-file`) writes its file.

A folder name may hold a newline (forging output lines, GitHub workflow commands), terminal
escape sequences, Markdown (a link, an image, an @mention, a heading), or bytes that are not
UTF-8. Text output shows such a path quoted, C-style (`"a\\nb"`, `\\xff` for a byte that is not
UTF-8) and leaves every other path as it is; Markdown shows every name as a code span
(`markdown_code`); JSON output keeps every string valid UTF-8, with a reversible form for paths
that are not. Writing an output file never replaces what is not a regular file
(`write_output`, docs/security.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
from typing import Any, TextIO

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


def _quoted(path: str, needs: re.Pattern[str], control: re.Pattern[str]) -> str:
    if not needs.search(path):
        return path
    body = path.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + control.sub(lambda m: _escape_one(m[0]), body) + '"'


def display_path(path: str) -> str:
    """A path for one line of text output: as it is, unless it holds a control character,
    a byte that is not UTF-8, a backslash or a double quote; then C-style quoted (as git's
    core.quotePath does), so it can neither break the line nor be mistaken for another."""
    return _quoted(path, _NEEDS_QUOTES, _CONTROL)


# In Markdown, the bidi embeddings, overrides, isolates and marks too: a rendered page would
# show the name in another order than its characters (text/hidden.py's `bidi` class).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_MD_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}\udc80-\udcff]")
_MD_NEEDS_QUOTES = re.compile(f'[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}\udc80-\udcff"\\\\]')


def markdown_code(text: str, *, table: bool = False) -> str:
    """`text` (a name from disk) as one Markdown code span, so nothing in it renders: inside a
    code span there is no link, image, emphasis, HTML, entity, autolink or @mention, and
    GitHub's renderer skips code when it links mentions and references. What a code span
    cannot hold is taken out first: a line break or other control character (which would end
    a table row or a heading) and a bidi control is written C-style in a quoted name, as in
    text output (`display_path`); the fence is one backtick longer than the longest run inside,
    padded with a space when the name starts or ends with a backtick or a space. In a GFM
    table cell (`table=True`) every `|` is written `\\|`: the table splits its row on pipes
    before it parses code spans, then takes the backslash of `\\|` away, code spans included
    (GFM's tables extension; markdown-it's too)."""
    shown = _quoted(text, _MD_NEEDS_QUOTES, _MD_CONTROL)
    if table:
        shown = shown.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", shown)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if shown.strip(" ") and (shown[0] in "` " or shown[-1] in "` ") else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


# The characters that start Markdown markup inline: escapes, code, emphasis, links and
# images ([ ]), HTML (< >), headings, table cells, entities, strikethrough, math.
_MD_MARKUP = re.compile(r"[\\`*_\[\]<>#|&~$]")


def markdown_text(text: str) -> str:
    """`text` from disk that is prose, not a name (a skill's description, a glob, a rule's
    note), as Markdown that renders as that text: each control character, separator and bidi
    control written C-style, then each character that starts markup backslash-escaped, so no
    link, image, emphasis, code span, HTML, heading or table cell comes from it (a bare URL a
    client links shows itself)."""
    shown = _MD_CONTROL.sub(lambda m: _escape_one(m[0]), text)
    return _MD_MARKUP.sub(lambda m: "\\" + m[0], shown)


def valid_utf8(text: str) -> str:
    """`text` with each byte that is not UTF-8 (a lone surrogate, PEP 383) as U+FFFD, as a
    browser shows it: for a page that must be valid UTF-8 (the HTML report)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


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


# --- writing an output file ------------------------------------------------------------------
STDOUT = "-"


class OutputError(Exception):
    """An output path that is not written (a folder, a link to a file, ...) or whose write
    failed: one line, a usage error (exit 2)."""


def write_output(target: str, text: str, *, append: bool = False) -> None:
    """Write `text` to the output path `target`, as every output option does:

    - `-`, or a path naming our own standard output or error (`/dev/stdout`, `/dev/fd/2`), is
      that stream (redacted like every other output);
    - a new path or a regular file: replaced atomically (temp file, fsync, rename; its
      permissions kept) — or, with `append`, appended to;
    - a FIFO (a pipe a CI step reads, `/dev/fd/N` of a process substitution) or the null
      device (`/dev/null`), directly or behind a symbolic link: written in place — opened for
      writing, never renamed over, never truncated; a FIFO waits for its reader;
    - anything else is refused (`OutputError`), never replaced: a folder, a symbolic link to a
      file, a folder or nothing (a link a repository placed where a report goes is never
      followed to replace its target), any other device (a node an archive extracted as root
      can hold: writing to a watchdog or a port has effects), a socket.
    """
    if target == STDOUT:
        _to_stream(sys.stdout, text)
        return
    try:
        here = os.lstat(target)
    except FileNotFoundError:
        here = None
    except OSError as err:
        raise OutputError(f"{display_path(target)}: {err.strerror or err}") from None
    if here is None or stat.S_ISREG(here.st_mode):
        stream = None if here is None else _our_stream(target)
        if stream is not None:
            _to_stream(stream, text)
        else:
            _write_regular(target, text, append)
        return
    stream = _our_stream(target)
    if stream is not None:
        _to_stream(stream, text)
        return
    link = stat.S_ISLNK(here.st_mode)
    try:
        info: os.stat_result | None = os.stat(target) if link else here
    except OSError:
        info = None  # a dangling link: it would create a file where the link points
    if info is not None and (stat.S_ISFIFO(info.st_mode) or _is_null_device(info)):
        _write_in_place(target, text, append)
        return
    raise OutputError(f"{display_path(target)} {_refusal(info, link)}")


def _is_null_device(info: os.stat_result) -> bool:
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == null.st_rdev


def _refusal(info: os.stat_result | None, link: bool) -> str:
    mode = 0 if info is None else info.st_mode
    if stat.S_ISDIR(mode):
        what = "a folder"
    elif stat.S_ISREG(mode):
        what = "a file"
    elif info is None:
        what = "nothing"
    elif stat.S_ISSOCK(mode):
        what = "a socket"
    else:
        what = "a device"
    if link:
        return (f"is a symbolic link to {what}: not written through (write to the real path, "
                "or - for standard output)")
    if what == "a folder":
        return "is a folder: give a file name (or - for standard output)"
    return f"is {what}: not written (only a file, a FIFO or {os.devnull} is)"


def _our_stream(target: str) -> TextIO | None:
    """sys.stdout or sys.stderr when `target` is the very file (or pipe, or terminal) they
    write to."""
    try:
        info = os.stat(target)
    except OSError:
        return None
    for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
        with contextlib.suppress(OSError, ValueError):
            if os.path.samestat(info, os.fstat(fd)):
                return stream
    return None


def _to_stream(stream: TextIO, text: str) -> None:
    stream.write(text)
    stream.flush()


def _write_regular(target: str, text: str, append: bool) -> None:
    from memlens.files.atomic import atomic_write

    try:
        if not append:
            atomic_write(target, text)
            return
        # O_NOFOLLOW: a link put there since we looked is refused, not followed.
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_NOCTTY | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except OSError as err:
        raise OutputError(f"cannot write {display_path(target)}: {err.strerror or err}") from None
    _write_fd(fd, target, text, regular=True)


def _write_in_place(target: str, text: str, append: bool) -> None:
    """A character device or FIFO: opened for writing — no O_CREAT, no O_TRUNC — and written.
    A FIFO waits for its reader, as a shell redirection does."""
    flags = os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC | (os.O_APPEND if append else 0)
    try:
        fd = os.open(target, flags)
    except OSError as err:
        raise OutputError(f"cannot write {display_path(target)}: {err.strerror or err}") from None
    _write_fd(fd, target, text, regular=False)


def _write_fd(fd: int, target: str, text: str, *, regular: bool) -> None:
    """Write to an open descriptor, after checking what it is: what was opened must be the
    kind of file looked at (a path swapped since is refused, never written)."""
    try:
        mode = os.fstat(fd).st_mode
        if regular != stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            raise OutputError(f"{display_path(target)} changed while it was written: not "
                              "written")
        if regular:
            os.set_blocking(fd, True)
        data = text.encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as err:
        raise OutputError(f"cannot write {display_path(target)}: {err.strerror or err}") from None
    finally:
        os.close(fd)
