"""memlens/addMemory: save_memory from the editor, with a preview the user confirms; with
`agent: "claude"`, a topic file in Claude Code's auto memory and its pointer line in MEMORY.md
(agents/claude/memory_writing.py), with the same preview."""

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
    from memlens.lsp.state import MemlensServer

ADD_MEMORY = "memlens/addMemory"
MEMORY_APPROVE = "memlens/memory/approve"


def register(server: MemlensServer) -> None:
    @server.feature(ADD_MEMORY)
    async def add_memory(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(AddMemoryParams, params)
        folder = ls.folder_for_uri(request.uri, ADD_MEMORY)
        settings = ls.service.index_of_folder(folder).settings
        workspace = folder or os.getcwd()
        if request.agent == "claude":
            return _add_for_claude(ls, request, settings.home, workspace).compact()
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
        # Its tools read and edit the workspace's memory files: project memory
        # (docs/security.md "The trust model").
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


def _add_for_claude(ls: MemlensServer, request: AddMemoryParams, home: str,
                    workspace: str) -> AddMemoryResult:
    """Claude Code's memory: the preview (both files' change, nothing written) or the write;
    a refusal (auto memory off, a name in use, a bad type) as an unsuccessful result. A
    folder the repository's own settings chose is neither read nor written until the request
    names it in `confirmed_folder` (the editor asks the user first): `needs_confirmation`."""
    from memlens.agents.claude.memory_topics import TOPIC_TYPES
    from memlens.agents.claude.memory_writing import (
        MemoryRefused,
        RepositoryFolder,
        plan_memory,
        write_memory,
    )

    types = list(TOPIC_TYPES)
    try:
        plan = plan_memory(home, workspace, request.fact, kind=request.memory_type,
                           name=request.name, description=request.description_line,
                           confirmed=request.confirmed_folder or False)
    except RepositoryFolder as err:
        return AddMemoryResult(path="", description=f"Claude Code's auto memory ({err.folder})",
                               success=False, message=str(err), memory_types=types,
                               memory_folder=err.folder, chosen_by="repository",
                               chosen_in=err.settings, needs_confirmation=True)
    except MemoryRefused as err:
        return AddMemoryResult(path="", description="Claude Code's auto memory", success=False,
                               message=str(err), memory_types=types)
    description = f"Claude Code's auto memory ({plan.folder})"

    def result(success: bool, message: str, diff: str | None = None,
               proposed: str | None = None) -> AddMemoryResult:
        return AddMemoryResult(path=plan.topic_path, description=description, success=success,
                               message=message, diff=diff, proposed=proposed,
                               index_path=plan.index_path, index_line=plan.pointer,
                               name=plan.name, memory_type=plan.type, memory_types=types,
                               memory_folder=plan.folder, chosen_by=plan.chosen_by,
                               chosen_in=plan.chosen_in)

    if request.preview:
        diff = (create_patch(os.path.basename(plan.topic_path), "", plan.topic_text)
                + create_patch("MEMORY.md", plan.index_before or "", plan.index_after))
        return result(True, f"Confirm Memory Save: {description}", diff, plan.topic_text)
    try:
        write_memory(plan)
    except MemoryRefused as err:
        return result(False, str(err))
    except OSError as err:
        return result(False, f"The memory was not saved: {err}")
    ls.publish(ls.service.file_changed(plan.index_path)
               | ls.service.file_changed(plan.topic_path))
    return result(True, plan.summary())
