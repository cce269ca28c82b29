"""memlens/addMemory: save_memory from the editor, with a preview the user confirms."""

from __future__ import annotations

import os
from typing import Any

from pydantic import ValidationError

from ..agent.session import Approve
from ..protocol.chat import ApprovalRequest, ApprovalResponse, ChatEvent
from ..protocol.editor import AddMemoryParams, AddMemoryResult, AskUserParams, AskUserReply
from ..writing import (
    create_patch,
    memory_description,
    memory_target,
    proposed_memory,
    save_memory,
)
from .errors import parse_params, plain
from .server import MemlensServer

ADD_MEMORY = "memlens/addMemory"


def register(server: MemlensServer) -> None:
    @server.feature(ADD_MEMORY)
    async def add_memory(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(AddMemoryParams, params)
        index = ls.require_index()
        settings = index.settings
        workspace = index.folders[0] if index.folders else os.getcwd()
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
            return (await _managed(ls, request, path, description)).compact()
        try:
            outcome = save_memory(request.fact, path, request.scope, home=settings.home,
                                  modified_content=request.modified_content)
        except ValueError as err:
            return AddMemoryResult(path=path, description=description, success=False,
                                   message=str(err)).compact()
        ls.publish(index.file_changed(path))
        return AddMemoryResult(path=path, description=description, success=outcome.success,
                               message=outcome.return_display).compact()


MEMORY_APPROVE, ASK_USER = "memlens/memory/approve", "memlens/askUser"


def lsp_approver(ls: MemlensServer, approve_method: str) -> Approve:
    """Approvals through `approve_method`; `ask_user` questions through memlens/askUser."""

    async def approve(request: ApprovalRequest) -> ApprovalResponse:
        if request.tool == "ask_user":
            question = AskUserParams(session_id=request.session_id,
                                     question=str(request.args.get("question", "")),
                                     options=request.args.get("options") or [])
            answer = _answer(await ls.protocol.send_request_async(ASK_USER, question.wire()))
            return ApprovalResponse(outcome="approve" if answer else "deny", answer=answer)
        reply = await ls.protocol.send_request_async(approve_method, request.wire())
        return ApprovalResponse.model_validate(plain(reply))

    return approve


def _answer(reply: Any) -> str | None:
    """The user's answer to an `ask_user` question; None when they gave none (or the client
    sent something else)."""
    try:
        return AskUserReply.model_validate(plain(reply)).answer
    except ValidationError:
        return None


async def _managed(ls: MemlensServer, request: AddMemoryParams, path: str,
                   description: str) -> AddMemoryResult:
    from ..agent.memory_manager import manage_memory
    from .chat import agent_context

    context = agent_context(ls)
    if not context.startup.trusted:
        # Its tools read and edit the workspace's memory files: project memory (SPEC §12).
        return AddMemoryResult(path=path, description=description, managed=True,
                               success=False,
                               message="The memory manager is off in an untrusted workspace: "
                                       "it reads and edits the workspace's memory files. "
                                       "Trust the folder to use it.")

    from ..agent.gemini import NoApiKey, make_client

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
    index = ls.require_index()
    touched: set[str] = set()
    for root in list(index.roots):
        touched |= index.file_changed(root)
    ls.publish(touched)
    return AddMemoryResult(path=path, description=description, managed=True,
                           success=status == "done",
                           message=sentence or "The memory manager made no change.")
