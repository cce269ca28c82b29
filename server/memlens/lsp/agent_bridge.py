"""How the agents (agent/: the chat, the memory manager, skill extraction) work inside the
language server: the context of the folder they work in, and the one way they put approvals
and questions to the user."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from memlens.agent.config import ChatSettings
from memlens.lsp.errors import RequestFailed, plain
from memlens.protocol.chat import ApprovalRequest, ApprovalResponse
from memlens.protocol.editor import AskUserParams, AskUserReply

if TYPE_CHECKING:
    from memlens.agent.context import AgentContext
    from memlens.agent.tools.base import Approve
    from memlens.lsp.state import MemlensServer

ASK_USER = "memlens/askUser"


def chat_settings(ls: MemlensServer, folder: str | None) -> ChatSettings:
    """The chat's settings in `folder` (None: the window's)."""
    return ChatSettings.from_sources(ls.editor.for_folder(folder))


def agent_context(ls: MemlensServer, folder: str | None) -> AgentContext:
    """What an agent working in `folder` gets: that folder's settings, startup memory, JIT
    session and skills, its transcripts folder, and the editor's key."""
    # The agents (tools, sessions) load on first use: a server that is never asked to chat
    # does not pay for them at start-up.
    from memlens.agent.context import assemble_context

    state = ls.service.folder_state(folder) if folder is not None else None
    if folder is None or state is None:
        raise RequestFailed("open a workspace folder to chat")
    return assemble_context(ls.service.index_of_folder(folder).settings,
                            chat_settings(ls, folder), state.load, folder, for_chat=True,
                            jit=ls.service.jit_session_for(folder), api_key=ls.api_key)


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
