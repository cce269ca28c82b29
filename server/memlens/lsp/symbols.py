"""Document symbols: markdown headings (outside fenced code) and the file's references, as the
agent reading the file reads them (links.py `shown_reading_agent`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types

from memlens.lsp.convert import path_of
from memlens.lsp.links import shown_reading_agent

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^(`{3,}|~{3,})")


def headings(text: str) -> list[tuple[int, str, int, int]]:
    """(level, title, start offset, end offset) of each ATX heading outside fences."""
    found = []
    offset = 0
    fence: str | None = None
    for line in text.split("\n"):
        stripped = line.rstrip("\r")
        marker = _FENCE.match(stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * 3
            elif stripped.startswith(fence):
                fence = None
        elif fence is None:
            match = _HEADING.match(stripped)
            if match:
                found.append((len(match.group(1)), match.group(2), offset,
                              offset + len(stripped)))
        offset += len(line) + 1
    return found


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def document_symbol(ls: MemlensServer, params: types.DocumentSymbolParams
                        ) -> list[types.DocumentSymbol]:
        path = path_of(params.text_document.uri)
        text = ls.text_of(path) if path else None
        if text is None:
            return []
        roots: list[types.DocumentSymbol] = []
        stack: list[tuple[int, types.DocumentSymbol]] = []
        for level, title, start, end in headings(text):
            rng = ls.positions.range_of(text, start, end)
            symbol = types.DocumentSymbol(name=title, kind=types.SymbolKind.String, range=rng,
                                          selection_range=rng, children=[])
            while stack and stack[-1][0] >= level:
                stack.pop()
            (stack[-1][1].children if stack else roots).append(symbol)  # type: ignore[union-attr]
            stack.append((level, symbol))
        agent = shown_reading_agent(ls, path) if path else None
        for token in agent.find_references(text) if agent else []:
            if token.in_code:
                continue
            rng = ls.positions.range_of(text, token.start, token.end)
            roots.append(types.DocumentSymbol(name=f"@{token.path}", kind=types.SymbolKind.File,
                                              range=rng, selection_range=rng,
                                              detail="import"))
        return roots
