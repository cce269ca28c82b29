"""Conversions between the engine's world (paths, offsets, 1-based columns) and LSP's."""

from __future__ import annotations

import bisect
import os
import re
import urllib.parse
from array import array

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from memlens.agents.gemini.imports import find_imports
from memlens.protocol.memory import Diagnostic
from memlens.text.references import ImportToken

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


def path_of(uri: str) -> str | None:
    if not uri.startswith("file:"):
        return None
    parts = urllib.parse.urlsplit(uri)
    if parts.netloc in ("", "localhost") and "%" in parts.path:
        # Percent-encoded bytes are the file name's own bytes (not necessarily UTF-8): decode
        # them as the file system does, so a name that is not UTF-8 maps back to itself.
        raw = urllib.parse.unquote_to_bytes(parts.path)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return os.fsdecode(raw)
    return to_fs_path(uri)


def uri_of(path: str) -> str:
    """A file URI for `path`; a name that is not valid UTF-8 (undecodable bytes arrive as
    surrogate escapes) has its bytes percent-encoded, reversibly (`path_of` maps it back)."""
    try:
        return from_fs_path(path) or f"file://{path}"
    except UnicodeEncodeError:
        try:
            raw = os.fsencode(path)
        except UnicodeEncodeError:
            raw = path.encode("utf-8", "surrogatepass")
        return "file://" + urllib.parse.quote(raw)


def _char_units(char: str, encoding: str) -> int:
    if encoding == "utf-32":
        return 1
    if encoding == "utf-8":
        return len(char.encode("utf-8", "surrogatepass"))
    return 2 if ord(char) > 0xFFFF else 1


_WIDE = {"utf-8": re.compile(r"[^\x00-\x7f]"), "utf-16": re.compile(r"[\U00010000-\U0010ffff]")}


class DocIndex:
    """One document's line starts and wide characters, computed once (every position is then
    a bisection, not a re-split of the text: 50,000 diagnostics used to cost 50,000 splits)."""

    def __init__(self, text: str, encoding: str):
        self.text = text
        self.encoding = encoding
        starts = array("q", [0])
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts
        self.bom = text.startswith("\ufeff")
        # Offsets of the characters wider than one unit, and the extra units up to each.
        self.wide = array("q")
        self.extra = array("q", [0])
        pattern = _WIDE.get(encoding)
        if pattern is not None and not text.isascii():
            total = 0
            for match in pattern.finditer(text):
                char = match.group()
                total += (len(char.encode("utf-8", "surrogatepass")) - 1
                          if encoding == "utf-8" else 1)
                self.wide.append(match.start())
                self.extra.append(total)

    def units(self, start: int, end: int) -> int:
        """Code units of the text between two offsets (start <= end)."""
        if not len(self.wide):
            return end - start
        return (end - start + self.extra[bisect.bisect_left(self.wide, end)]
                - self.extra[bisect.bisect_left(self.wide, start)])

    def line_count(self) -> int:
        return len(self.starts)

    def line_span(self, line: int) -> tuple[int, int]:
        """[start, end) of 0-based `line`, its newline excluded."""
        start = self.starts[line]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)
        return start, end

    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        if line == 0 and self.bom:
            start = min(1, offset)  # clients strip the byte-order mark
        return types.Position(line=line, character=self.units(start, offset))

    def offset(self, position: types.Position) -> int:
        if position.line >= len(self.starts):
            return len(self.text)
        start, end = self.line_span(position.line)
        if position.line == 0 and self.bom:
            start = min(1, end)
        if not len(self.wide) or self.units(start, end) == end - start:
            return min(start + position.character, end)
        units = 0
        for index in range(start, end):
            if units >= position.character:
                return index
            units += _char_units(self.text[index], self.encoding)
        return end

    def column(self, line: int, col: int) -> types.Position:
        """A diagnostic's 1-based line and column (in characters, never counting a BOM)."""
        if line - 1 >= len(self.starts):
            return types.Position(line=max(line - 1, 0), character=0)
        start, end = self.line_span(line - 1)
        if line == 1 and self.bom:
            start = min(1, end)
        # The line's own characters, its CR included (as a split on LF keeps it).
        stop = min(start + max(col - 1, 0), end)
        return types.Position(line=line - 1, character=self.units(start, stop))


class PositionConverter:
    """Positions in the encoding negotiated with the client (LSP's default: UTF-16 code
    units), each document's line index kept while it is asked about again."""

    def __init__(self, encoding: str = "utf-16"):
        self.encoding = encoding
        self._recent: list[DocIndex] = []

    def doc_index(self, text: str) -> DocIndex:
        """The index of `text`, reused while the same string object is asked about again (a
        request converts all its positions in one document)."""
        for index in self._recent:
            if index.text is text:
                return index
        index = DocIndex(text, self.encoding)
        self._recent.insert(0, index)
        del self._recent[4:]
        return index

    def position_at(self, text: str, offset: int) -> types.Position:
        return self.doc_index(text).position(offset)

    def offset_at(self, text: str, position: types.Position) -> int:
        return self.doc_index(text).offset(position)

    def range_of(self, text: str, start: int, end: int) -> types.Range:
        index = self.doc_index(text)
        return types.Range(start=index.position(start), end=index.position(end))

    def to_lsp_diagnostic(self, d: Diagnostic, text: str | None, uri: str | None = None
                          ) -> types.Diagnostic:
        if text is not None:
            index = self.doc_index(text)
            rng = types.Range(start=index.column(d.line, d.col),
                              end=index.column(d.end_line, d.end_col))
        else:
            rng = types.Range(start=types.Position(line=d.line - 1, character=d.col - 1),
                              end=types.Position(line=d.end_line - 1, character=d.end_col - 1))
        related = None
        if d.detail and uri is not None:
            # The detail under the short message (VS Code shows it as a line under the
            # problem).
            related = [types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri, range=rng), message=d.detail)]
        for other in d.related or []:
            # The other places it concerns (the other rule of an instruction-conflict): the
            # editor links each.
            at = types.Range(
                start=types.Position(line=other.line - 1, character=other.col - 1),
                end=types.Position(line=other.end_line - 1, character=other.end_col - 1))
            related = [*(related or []), types.DiagnosticRelatedInformation(
                location=types.Location(uri=uri_of(other.path), range=at),
                message=other.message)]
        return types.Diagnostic(range=rng, message=d.message, severity=SEVERITY[d.severity],
                                code=d.code, source="memlens", related_information=related)

    def token_at(self, text: str, position: types.Position) -> ImportToken | None:
        """The import token (outside code) under the cursor, if any."""
        offset = self.offset_at(text, position)
        for token in find_imports(text):
            if not token.in_code and token.start <= offset <= token.end:
                return token
        return None
