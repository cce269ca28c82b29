"""Code lenses on a memory file's first line: "imported by N" and "loads M files".

Every lens runs a command the client registers (docs/reference.md "The language server"):
`memlens.showReferences` with the file's URI, the lens position and the importers' locations as
plain LSP JSON (the client turns them into VS Code's types and opens the references peek; VS Code's
own `editor.action.showReferences` wants `Uri`/`Position`/`Location` objects, which JSON cannot
carry), and `memlens.showMergedContext` with the file's URI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memlens.lsp.convert import path_of, uri_of
from memlens.lsp.links import importer_locations
from memlens.lsp.merged import memory_lens_title

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

SHOW_REFERENCES = "memlens.showReferences"
SHOW_MERGED_CONTEXT = "memlens.showMergedContext"

_TOP = types.Range(start=types.Position(line=0, character=0),
                   end=types.Position(line=0, character=0))


def _position(position: types.Position) -> dict[str, int]:
    return {"line": position.line, "character": position.character}


def _location(location: types.Location) -> dict[str, Any]:
    return {"uri": location.uri, "range": {"start": _position(location.range.start),
                                           "end": _position(location.range.end)}}


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: MemlensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        path = path_of(params.text_document.uri)
        if path is None:
            return []
        lenses = []
        locations = importer_locations(ls, path)
        if locations:
            sources = {location.uri for location in locations}
            lenses.append(types.CodeLens(range=_TOP, command=types.Command(
                title=f"imported by {len(sources)}",
                command=SHOW_REFERENCES,
                arguments=[params.text_document.uri, _position(_TOP.start),
                           [_location(location) for location in locations]])))
        if ls.service.is_memory_file(path):
            lenses.append(types.CodeLens(range=_TOP, command=types.Command(
                title=memory_lens_title(ls.service, path),
                command=SHOW_MERGED_CONTEXT, arguments=[uri_of(path)])))
        return lenses
