"""Checks on the positions a client sends, before any handler sees them
(docs/security.md "The language server's connection").

Two checks, both answered with InvalidParams (-32602) naming the method and the field:

- the shape, on the raw JSON: `line` and `character` are JSON integers in LSP's `uinteger`
  range (not strings, floats or booleans, which the converter would quietly coerce), a range
  does not end before it starts, `textDocument.uri` is a string;
- the line, on the structured request: a line past the last line of a document the server can
  read (the client's open buffer, else the file as the index reads it) does not exist.

A character past the end of its line is not an error: the LSP specification says it "defaults
back to the line length", and the handlers clamp it so. A document the server has no text for
gets the shape check only (its handlers answer with an empty result).
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

UINTEGER_MAX = 2**31 - 1


def line_count(text: str) -> int:
    """Lines as LSP counts them: `\\r\\n`, `\\r` and `\\n` each end one; a final line ending
    leaves an empty last line."""
    return text.count("\n") + text.count("\r") - text.count("\r\n") + 1


def _uinteger(value: Any) -> bool:
    return type(value) is int and 0 <= value <= UINTEGER_MAX


def _position_problem(value: Any, where: str) -> str | None:
    if not isinstance(value, dict):
        return f"{where} must be an object with integer line and character"
    for key in ("line", "character"):
        if key not in value:
            return f"{where}.{key} is missing"
        if not _uinteger(value[key]):
            return (f"{where}.{key} must be an integer from 0 to {UINTEGER_MAX}, "
                    f"got {_preview(value[key])}")
    return None


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def shape_problem(params: Any) -> str | None:
    """What is wrong with the position-bearing members of a request's raw params, if any."""
    if not isinstance(params, dict):
        return None  # left to the converter, which knows whether params are required
    document = params.get("textDocument")
    if "textDocument" in params and not (isinstance(document, dict)
                                         and isinstance(document.get("uri"), str)):
        return "textDocument must be an object with a string uri"
    if "position" in params:
        problem = _position_problem(params["position"], "position")
        if problem:
            return problem
    if "range" in params:
        rng = params["range"]
        if not isinstance(rng, dict):
            return "range must be an object with start and end positions"
        for key in ("start", "end"):
            problem = _position_problem(rng.get(key), f"range.{key}")
            if problem:
                return problem
        start, end = rng["start"], rng["end"]
        if (start["line"], start["character"]) > (end["line"], end["character"]):
            return "range ends before it starts"
    return None


def positions_of(params: Any) -> list[tuple[str, types.Position]]:
    """The positions of a structured request that must lie inside its document."""
    found: list[tuple[str, types.Position]] = []
    position = getattr(params, "position", None)
    if isinstance(position, types.Position):
        found.append(("position", position))
    rng = getattr(params, "range", None)
    if isinstance(rng, types.Range):
        found += [("range.start", rng.start), ("range.end", rng.end)]
    return found


def document_uri(params: Any) -> str | None:
    uri = getattr(getattr(params, "text_document", None), "uri", None)
    return uri if isinstance(uri, str) else None


def line_problem(params: Any, text: str, uri: str) -> str | None:
    """A position whose line the document does not have."""
    lines = line_count(text)
    for where, position in positions_of(params):
        if position.line >= lines:
            return (f"{where} line {position.line} is past the end of {uri} "
                    f"({lines} lines, 0 to {lines - 1})")
    return None
