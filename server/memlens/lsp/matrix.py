"""memlens/matrix: the agent matrix of a workspace folder (every memory file × every agent,
each agent's context map; workspace/matrix.py), for the editor's Agent Matrix panel, which
only draws what this answers."""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from memlens.lsp.errors import InvalidParams, parse_params
from memlens.protocol.matrix import MatrixParams

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

MATRIX = "memlens/matrix"


def register(server: MemlensServer) -> None:
    @server.feature(MATRIX)
    async def matrix_request(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(MatrixParams, params)
        # The folder the request names; only a single-root window may leave it out.
        folder = request.folder or ls.only_folder(MATRIX, "folder")
        if folder is None or not os.path.isdir(folder):
            raise InvalidParams(f"not a folder: {folder}" if folder else "no workspace folder")
        settings = ls.service.settings_for(folder)
        # Kept per workspace generation: a second request without changes costs nothing.
        result = await asyncio.to_thread(ls.service.matrix, folder, settings)
        return result.wire()
