"""Node.js semantics that leak into Gemini CLI's output and must be reproduced exactly.

Gemini CLI is TypeScript on Node: its `String.prototype.trim`, `path.resolve`, default
`Array.prototype.sort` and libuv error messages all end up in the text the model receives,
so the preview has to use the same rules rather than Python's.
"""

from __future__ import annotations

import errno
import posixpath

# ECMAScript WhiteSpace + LineTerminator: what String.prototype.trim removes.
# Python's str.strip differs (it strips \x1c-\x1f and \x85, and keeps \ufeff).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    return text.strip(JS_WHITESPACE)


def js_trim_start(text: str) -> str:
    return text.lstrip(JS_WHITESPACE)


def js_trim_end(text: str) -> str:
    return text.rstrip(JS_WHITESPACE)


def js_sort_key(text: str) -> bytes:
    """Key for JS default sort: UTF-16 code-unit order (astral chars sort as surrogates)."""
    return text.encode("utf-16-be", "surrogatepass")


def js_sorted(items: list[str]) -> list[str]:
    return sorted(items, key=js_sort_key)


def js_units(text: str) -> str:
    """`text` with each astral character as its two UTF-16 surrogates, so that Python's
    indices, `len` and slices are JavaScript's (code units)."""
    if all(ord(c) < 0x10000 for c in text):
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(int.from_bytes(data[i:i + 2], "little")) for i in range(0, len(data), 2))


def from_js_units(units: str) -> str:
    """Back from `js_units`: surrogate pairs joined again (a lone one stays lone)."""
    if all(not 0xD800 <= ord(c) <= 0xDFFF for c in units):
        return units
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def js_to_fixed(value: float, digits: int) -> str:
    """`Number.prototype.toFixed` for a non-negative number: the exact binary value rounded
    half up (Python's formatting rounds half to even)."""
    from decimal import ROUND_HALF_UP, Decimal
    return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def resolve(base: str, *parts: str) -> str:
    """`path.resolve(base, ...parts)` on POSIX (no cwd lookup when base is absolute)."""
    joined = posixpath.join(base, *parts) if parts else base
    if not joined.startswith("/"):
        joined = posixpath.join(posixpath.abspath("."), joined)
    normal = posixpath.normpath(joined)
    # posixpath keeps a leading '//' (POSIX allows it); Node collapses it.
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    return normal


def to_absolute(path: str) -> str:
    """Gemini CLI's `toAbsolutePath`: `path.resolve`, then every backslash made a slash (so a
    folder named `a\\b` is looked for as `a/b`, as Gemini CLI does on every platform)."""
    return resolve(path).replace("\\", "/")


def js_truthy(value: object) -> bool:
    """JavaScript's truthiness of a JSON value (`if (value)`)."""
    if value is None or value is False:
        return False
    if isinstance(value, int | float):
        return value == value and value != 0  # NaN and 0 are falsy
    if isinstance(value, str):
        return value != ""
    return True  # arrays and objects, even empty ones


def js_number(value: object) -> float:
    """`Number(value)` for a JSON value, as `<` compares it (NaN when it is no number)."""
    if value is None or value is False:
        return 0.0
    if value is True:
        return 1.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = js_trim(value)
        if text == "":
            return 0.0
        try:
            if text[:2].lower() in ("0x", "0o", "0b"):
                return float(int(text, 0))
            if text.lstrip("+-") in ("Infinity",):
                return float("-inf") if text.startswith("-") else float("inf")
            if text.lower().lstrip("+-") in ("inf", "infinity", "nan"):
                return float("nan")
            return float(text)
        except ValueError:
            return float("nan")
    return float("nan")


def dirname(path: str) -> str:
    return posixpath.dirname(path) if path != "/" else "/"


def is_subpath(parent: str, child: str) -> bool:
    """Gemini CLI's `isSubpath`: `path.relative(parent, child)` does not climb out."""
    if _normal(parent) and _normal(child):
        # Both already absolute and normalised: a prefix test says the same, much faster.
        return child == parent or parent == "/" or child.startswith(parent + "/")
    rel = posixpath.relpath(resolve(child), resolve(parent))
    if rel == ".":
        return True
    return not (rel == ".." or rel.startswith("../") or rel.startswith("/"))


def _normal(path: str) -> bool:
    return ((path.startswith("/") and not path.endswith("/")) or path == "/") and (
        "//" not in path and "/./" not in path and "/../" not in path
        and not path.endswith(("/.", "/..")))


# libuv's uv_strerror texts, as Node prints them in `err.message`.
_UV_MESSAGES: dict[int, str] = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENOTDIR: "not a directory",
    errno.ELOOP: "too many symbolic links encountered",
    errno.ENAMETOOLONG: "name too long",
    errno.EPERM: "operation not permitted",
    errno.EIO: "i/o error",
    errno.ENXIO: "no such device or address",
    errno.EMFILE: "too many open files",
    errno.ENFILE: "file table overflow",
    errno.EINVAL: "invalid argument",
    errno.EBUSY: "resource busy or locked",
    errno.ENOMEM: "not enough memory",
}


_INSPECT_META = {**{c: f"\\x{c:02X}" for c in [*range(0x20), *range(0x7F, 0xA0)]},
                 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r",
                 0x5C: "\\\\"}


def js_inspect_string(text: str) -> str:
    """A string as Node's `util.inspect` shows it (in error messages): single quotes, or
    double quotes (then backquotes) when it holds a single quote and not the other; control
    characters, the backslash and the quote escaped; a lone surrogate as `\\udxxx`."""
    quote = "'"
    if "'" in text:
        if '"' not in text:
            quote = '"'
        elif "`" not in text and "${" not in text:
            quote = "`"
    out = []
    for char in text:
        code = ord(char)
        if char == quote:
            out.append("\\" + char)
        elif code in _INSPECT_META:
            out.append(_INSPECT_META[code])
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return quote + "".join(out) + quote


def node_null_byte_message(path: str, argument: str = "path") -> str:
    """Node's ERR_INVALID_ARG_VALUE for a path holding a NUL, as a failed fs call's message."""
    return (f"The argument '{argument}' must be a string, Uint8Array, or URL without null "
            f"bytes. Received {js_inspect_string(path)}")


def node_error_message(err: OSError, syscall: str, path: str | None) -> str:
    """Format an OSError the way Node formats a failed fs call's `err.message`."""
    code = errno.errorcode.get(err.errno or 0, "EIO")
    text = _UV_MESSAGES.get(err.errno or 0, (err.strerror or "unknown error").lower())
    if path is None:
        return f"{code}: {text}, {syscall}"
    return f"{code}: {text}, {syscall} '{path}'"
