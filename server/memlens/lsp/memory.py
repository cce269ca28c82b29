"""memlens/addMemory: save_memory from the editor, with a preview the user confirms."""

from __future__ import annotations

import os
from typing import Any, Literal

from ..model import Wire
from ..writing import (
    create_patch,
    memory_description,
    memory_target,
    proposed_memory,
    save_memory,
)
from .custom import _params
from .server import MemlensServer

ADD_MEMORY = "memlens/addMemory"


class AddMemoryParams(Wire):
    fact: str
    scope: Literal["global", "project"] = "global"
    preview: bool = False
    # The proposal as the user edited it, written verbatim (as Gemini CLI does).
    modified_content: str | None = None


class AddMemoryResult(Wire):
    path: str
    description: str
    success: bool
    message: str
    diff: str | None = None
    proposed: str | None = None


def register(server: MemlensServer) -> None:
    @server.feature(ADD_MEMORY)
    def add_memory(ls: MemlensServer, params: Any) -> dict[str, object]:
        request: AddMemoryParams = _params(AddMemoryParams, params)
        index = ls.require_index()
        settings = index.settings
        workspace = index.folders[0] if index.folders else os.getcwd()
        path = memory_target(settings.home, settings.context_file_names, workspace,
                             request.scope)
        description = memory_description(path, settings.home)
        if request.preview:
            try:
                current, proposed = proposed_memory(request.fact, path, request.scope)
            except ValueError as err:
                return AddMemoryResult(path=path, description=description, success=False,
                                       message=str(err)).compact()
            diff = create_patch(os.path.basename(path), current, proposed)
            return AddMemoryResult(path=path, description=description, success=True,
                                   message=f"Confirm Memory Save: {description}", diff=diff,
                                   proposed=proposed).compact()
        try:
            outcome = save_memory(request.fact, path, request.scope, home=settings.home,
                                  modified_content=request.modified_content)
        except ValueError as err:
            return AddMemoryResult(path=path, description=description, success=False,
                                   message=str(err)).compact()
        ls.publish(index.file_changed(path))
        return AddMemoryResult(path=path, description=description, success=outcome.success,
                               message=outcome.return_display).compact()
