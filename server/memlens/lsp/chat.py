"""Chat over LSP: memlens/chat/send|cancel|sessions|history|status, memlens/setApiKey; events
stream as memlens/chat/event and writes wait for memlens/chat/approve (docs/chat-protocol.md).
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from ..agent.config import ChatSettings
from ..agent.gemini import uses_vertex
from ..agent.records import (
    Redactor,
    chats_dir,
    existing_chats_dir,
    install_stream_redaction,
    list_sessions,
    read_transcript,
    register_secret,
)
from ..agent.session import AgentContext, ChatSession
from ..protocol.chat import (
    ApiKeyParams,
    ApiKeyResult,
    CancelResult,
    ChatEvent,
    ChatStatus,
    ErrorEvent,
    HistoryMessage,
    HistoryResult,
    SendParams,
    SendResult,
    SessionParams,
    SessionsResult,
)
from ..skills import discover_skills
from .errors import RequestFailed, parse_params
from .server import MemlensServer

SEND, CANCEL, SESSIONS, HISTORY, STATUS = (
    "memlens/chat/send", "memlens/chat/cancel", "memlens/chat/sessions",
    "memlens/chat/history", "memlens/chat/status")
SET_API_KEY, EVENT, APPROVE = "memlens/setApiKey", "memlens/chat/event", "memlens/chat/approve"

_sessions: dict[str, ChatSession] = {}
_api_key: dict[str, str | None] = {"key": None}


def agent_context(ls: MemlensServer) -> AgentContext:
    index = ls.require_index()
    folder = index.folders[0] if index.folders else None
    if folder is None or folder not in index.folder_states:
        raise RequestFailed("open a workspace folder to chat")
    state = index.folder_states[folder]
    home = index.settings.home
    skills = [s for s, _ in discover_skills(home, folder, state.load.trusted)]
    try:
        transcripts: str | None = chats_dir(home, folder)
    except OSError:
        transcripts = None
    return AgentContext(settings=index.settings, chat=ChatSettings.from_sources(ls.editor_settings),
                        startup=state.load, jit=ls.jit_session_for(folder), skills=skills,
                        transcripts=transcripts, api_key=_api_key["key"])


def _transcripts(ls: MemlensServer) -> str | None:
    """The transcripts folder for reading; a project never chatted in has none (and listing
    sessions must not register it in Gemini CLI's project registry)."""
    index = ls.require_index()
    if not index.folders:
        return None
    try:
        return existing_chats_dir(index.settings.home, index.folders[0])
    except OSError:
        return None


class _RedactSecrets(logging.Filter):
    """Keeps every key out of every log line (pygls logs message bodies at debug level):
    the extension's, the environment's (GEMINI_API_KEY, GOOGLE_API_KEY), Google-shaped ones."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redactor = Redactor()
        redactor.add(_api_key["key"])
        cleaned = redactor.text(message)
        if '"key"' in cleaned and SET_API_KEY in cleaned:
            cleaned = re.sub(r'"key"\s*:\s*"[^"]*"', '"key": "[REDACTED]"', cleaned)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install_log_redaction() -> None:
    """Redact keys from the server's log and from anything else it writes to stderr (stdout
    carries JSON-RPC, whose chat events are redacted where they are made)."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(_RedactSecrets())
    install_stream_redaction(stdout=False)


def register(server: MemlensServer) -> None:
    @server.feature(SEND)
    async def send(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(SendParams, params)
        await ls.ready.wait()
        index = ls.require_index()
        if index.folders and not index.folder_states[index.folders[0]].load.trusted:
            ls.protocol.notify(EVENT, ErrorEvent(
                session_id=request.session_id, retryable=False,
                message="Chat is off in an untrusted workspace: its tools would read the "
                        "workspace. Trust the folder to chat.").payload())
            return SendResult(session_id=request.session_id, status="error").compact()
        session = _sessions.get(request.session_id)
        if session is None:
            session = ChatSession(agent_context(ls), request.session_id)
            _sessions[request.session_id] = session
        else:
            session.context.set_api_key(_api_key["key"])
            session.context.chat = ChatSettings.from_sources(ls.editor_settings)

        async def emit(event: ChatEvent) -> None:
            ls.protocol.notify(EVENT, event.payload())

        from .memory import lsp_approver

        approve = lsp_approver(ls, APPROVE)

        status = await session.send(request.text, emit, approve)
        return SendResult(session_id=request.session_id,
                          status=status).compact()  # type: ignore[arg-type]

    @server.feature(CANCEL)
    def cancel(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(SessionParams, params)
        session = _sessions.get(request.session_id)
        return CancelResult(cancelled=bool(session and session.cancel())).wire()

    @server.feature(SESSIONS)
    def sessions(ls: MemlensServer, params: Any) -> dict[str, object]:
        folder = _transcripts(ls)
        found = list_sessions(folder) if folder else []
        return SessionsResult(sessions=found).wire()

    @server.feature(HISTORY)
    def history(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(SessionParams, params)
        folder = _transcripts(ls)
        records = read_transcript(folder, request.session_id) if folder else []
        messages = [HistoryMessage(role="user" if r.kind == "user" else "model",
                                   text=str(r.data.get("text", "")))
                    for r in records if r.kind in ("user", "model")]
        return HistoryResult(session_id=request.session_id, messages=messages).wire()

    @server.feature(STATUS)
    def status(ls: MemlensServer, params: Any) -> dict[str, object]:
        chat = ChatSettings.from_sources(ls.editor_settings)
        has_key = bool(_api_key["key"] or os.environ.get("GEMINI_API_KEY")
                       or os.environ.get("GOOGLE_API_KEY") or uses_vertex())
        return ChatStatus(has_api_key=has_key, model=chat.model,
                          approval_mode=chat.approval_mode, base_url=chat.base_url).compact()

    @server.feature(SET_API_KEY)
    def set_api_key(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(ApiKeyParams, params)
        _api_key["key"] = request.key.strip() or None
        register_secret(_api_key["key"])  # redacted everywhere from now on
        for session in _sessions.values():
            session.context.set_api_key(_api_key["key"])
        return ApiKeyResult(has_api_key=bool(_api_key["key"])).wire()
