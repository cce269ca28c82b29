"""Code lenses on a memory file's first line: "imported by N" and "loads M files"."""

from __future__ import annotations

from lsprotocol import types

from .convert import path_of, uri_of
from .server import MemlensServer

_TOP = types.Range(start=types.Position(line=0, character=0),
                   end=types.Position(line=0, character=0))


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: MemlensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        path = path_of(params.text_document.uri)
        if path is None:
            return []
        index = ls.require_index()
        lenses = []
        importers = index.graph.importers_of(path)
        if importers:
            sources = sorted({e.source for e in importers})
            lenses.append(types.CodeLens(range=_TOP, command=types.Command(
                title=f"imported by {len(sources)}",
                command="editor.action.showReferences",
                arguments=[params.text_document.uri, _TOP.start, []])))
        if index.is_memory_file(path):
            from .hover import memory_lens_title

            lenses.append(types.CodeLens(range=_TOP, command=types.Command(
                title=memory_lens_title(ls, path),
                command="memlens.showMergedContext", arguments=[uri_of(path)])))
        return lenses
