"""Conversions between the engine's world (paths, offsets, 1-based columns) and LSP's."""

from __future__ import annotations

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ..imports import ImportToken, find_imports
from ..model import Diagnostic

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


def path_of(uri: str) -> str | None:
    if not uri.startswith("file:"):
        return None
    return to_fs_path(uri)


def uri_of(path: str) -> str:
    return from_fs_path(path) or f"file://{path}"


# The position encoding negotiated with the client (LSP default: UTF-16 code units).
ENCODING = {"name": "utf-16"}


def set_encoding(name: str) -> None:
    ENCODING["name"] = name


def _char_units(char: str) -> int:
    name = ENCODING["name"]
    if name == "utf-32":
        return 1
    if name == "utf-8":
        return len(char.encode("utf-8", "surrogatepass"))
    return 2 if ord(char) > 0xFFFF else 1


def _utf16_len(text: str) -> int:
    name = ENCODING["name"]
    if name == "utf-32":
        return len(text)
    if name == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _lines(text: str) -> list[str]:
    return text.split("\n")


def position_at(text: str, offset: int) -> types.Position:
    before = text[:offset]
    line = before.count("\n")
    start = before.rfind("\n") + 1
    if start == 0 and text.startswith("\ufeff"):
        start = min(1, offset)  # clients strip the byte-order mark
    return types.Position(line=line, character=_utf16_len(text[start:offset]))


def offset_at(text: str, position: types.Position) -> int:
    lines = _lines(text)
    if position.line >= len(lines):
        return len(text)
    offset = sum(len(line) + 1 for line in lines[: position.line])
    if position.line == 0 and text.startswith("\ufeff"):
        offset, lines[0] = 1, lines[0][1:]
    line = lines[position.line]
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return offset + index
        units += _char_units(char)
    return offset + len(line)


def range_of(text: str, start: int, end: int) -> types.Range:
    return types.Range(start=position_at(text, start), end=position_at(text, end))


def _column(lines: list[str], line: int, col: int) -> types.Position:
    if line - 1 >= len(lines):
        return types.Position(line=max(line - 1, 0), character=0)
    text = lines[line - 1]
    if line == 1 and text.startswith("\ufeff"):
        text = text[1:]  # diagnostic columns never count the byte-order mark
    return types.Position(line=line - 1, character=_utf16_len(text[: col - 1]))


def to_lsp_diagnostic(d: Diagnostic, text: str | None) -> types.Diagnostic:
    lines = _lines(text) if text is not None else []
    if lines:
        rng = types.Range(start=_column(lines, d.line, d.col),
                          end=_column(lines, d.end_line, d.end_col))
    else:
        rng = types.Range(start=types.Position(line=d.line - 1, character=d.col - 1),
                          end=types.Position(line=d.end_line - 1, character=d.end_col - 1))
    return types.Diagnostic(range=rng, message=d.message, severity=SEVERITY[d.severity],
                            code=d.code, source="memlens")


def token_at(text: str, position: types.Position) -> ImportToken | None:
    """The import token (outside code) under the cursor, if any."""
    offset = offset_at(text, position)
    for token in find_imports(text):
        if not token.in_code and token.start <= offset <= token.end:
            return token
    return None
