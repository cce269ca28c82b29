"""memlens/addMemory: save_memory from the editor, with a preview the user confirms."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from memlens.agents.gemini.writing import (
    create_patch,
    memory_description,
    memory_target,
    proposed_memory,
    save_memory,
)
from memlens.lsp.agent_bridge import agent_context, lsp_approver
from memlens.lsp.errors import parse_params
from memlens.protocol.chat import ChatEvent
from memlens.protocol.editor import AddMemoryParams, AddMemoryResult

if TYPE_CHECKING:
    from memlens.lsp.server import MemlensServer

ADD_MEMORY = "memlens/addMemory"
MEMORY_APPROVE = "memlens/memory/approve"


def register(server: MemlensServer) -> None:
    @server.feature(ADD_MEMORY)
    async def add_memory(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(AddMemoryParams, params)
        folder = ls.folder_for_uri(request.uri)
        settings = ls.service.index_of_folder(folder).settings
        workspace = folder or os.getcwd()
        path = memory_target(settings.home, settings.context_file_names, workspace,
                             request.scope)
        description = memory_description(path, settings.home)
        if request.preview and settings.memory_manager:
            return AddMemoryResult(path=path, description="the memory manager decides where",
                                   success=True, managed=True,
                                   message="The memory manager will route this memory and ask "
                                           "you to approve each change.").compact()
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
        if settings.memory_manager and request.modified_content is None:
            return (await _managed(ls, request, folder, path, description)).compact()
        try:
            outcome = save_memory(request.fact, path, request.scope, home=settings.home,
                                  modified_content=request.modified_content)
        except ValueError as err:
            return AddMemoryResult(path=path, description=description, success=False,
                                   message=str(err)).compact()
        ls.publish(ls.service.file_changed(path))
        return AddMemoryResult(path=path, description=description, success=outcome.success,
                               message=outcome.return_display).compact()


async def _managed(ls: MemlensServer, request: AddMemoryParams, folder: str | None,
                   path: str, description: str) -> AddMemoryResult:
    from memlens.agent.memory_manager import manage_memory

    context = agent_context(ls, folder)
    if not context.startup.trusted:
        # Its tools read and edit the workspace's memory files: project memory (SPEC §12).
        return AddMemoryResult(path=path, description=description, managed=True,
                               success=False,
                               message="The memory manager is off in an untrusted workspace: "
                                       "it reads and edits the workspace's memory files. "
                                       "Trust the folder to use it.")

    from memlens.agent.gemini import NoApiKey, make_client

    try:
        make_client(context.api_key, context.chat)
    except NoApiKey:
        return AddMemoryResult(path=path, description=description, managed=True,
                               success=False, needs_key=True,
                               message="The memory manager needs a Gemini API key (or "
                                       "GEMINI_API_KEY in the environment). Without one, turn "
                                       "memlens.memoryManager off to save memory directly.")

    async def emit(event: ChatEvent) -> None:
        return None

    status, sentence = await manage_memory(context, request.fact, request.scope, emit,
                                           lsp_approver(ls, MEMORY_APPROVE))
    # It may have edited any memory file: every index re-reads its own.
    touched: set[str] = set()
    for index in ls.service.indexes():
        for root in list(index.roots):
            touched |= index.file_changed(root)
    ls.publish(touched)
    return AddMemoryResult(path=path, description=description, managed=True,
                           success=status == "done",
                           message=sentence or "The memory manager made no change.")
