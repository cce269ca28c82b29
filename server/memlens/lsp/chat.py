"""Chat over LSP: memlens/chat/send|cancel|sessions|history|status, memlens/setApiKey; events
stream as memlens/chat/event and writes wait for memlens/chat/approve (docs/chat-protocol.md).

A session works in one workspace folder, chosen when it starts: the folder of the `uri` its
first message names, else the default folder (workspace.py).
"""

from __future__ import annotations

import logging
import os
import re
from typing import TYPE_CHECKING, Any

from memlens.agent.gemini import uses_vertex
from memlens.agent.records import (
    Redactor,
    existing_chats_dir,
    install_stream_redaction,
    list_sessions,
    read_transcript,
    register_secret,
)
from memlens.lsp.agent_bridge import agent_context, chat_settings, lsp_approver
from memlens.lsp.errors import RequestFailed, parse_params
from memlens.protocol.chat import (
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
    SessionRecord,
    SessionsResult,
    SessionSummary,
)

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

SEND, CANCEL, SESSIONS, HISTORY, STATUS = (
    "memlens/chat/send", "memlens/chat/cancel", "memlens/chat/sessions",
    "memlens/chat/history", "memlens/chat/status")
SET_API_KEY, EVENT, APPROVE = "memlens/setApiKey", "memlens/chat/event", "memlens/chat/approve"


def _transcripts(ls: MemlensServer, folder: str) -> str | None:
    """The transcripts folder of `folder`, for reading; a project never chatted in has none
    (and listing sessions must not register it in Gemini CLI's project registry)."""
    try:
        return existing_chats_dir(ls.service.index_of_folder(folder).settings.home, folder)
    except OSError:
        return None


def _all_sessions(ls: MemlensServer) -> list[SessionSummary]:
    """The sessions of every workspace folder, the latest first."""
    found: list[SessionSummary] = []
    for folder in ls.service.folders:
        transcripts = _transcripts(ls, folder)
        found += list_sessions(transcripts) if transcripts else []
    return sorted(found, key=lambda s: s.updated, reverse=True)


def _transcript(ls: MemlensServer, session_id: str) -> list[SessionRecord]:
    """A session's records, from the folder it was held in."""
    for folder in ls.service.folders:
        transcripts = _transcripts(ls, folder)
        records = read_transcript(transcripts, session_id) if transcripts else []
        if records:
            return records
    return []


class _RedactSecrets(logging.Filter):
    """Keeps every key out of every log line (pygls logs message bodies at debug level):
    the extension's, the environment's (GEMINI_API_KEY, GOOGLE_API_KEY), Google-shaped ones."""

    def __init__(self, ls: MemlensServer):
        super().__init__()
        self.ls = ls

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redactor = Redactor()
        redactor.add(self.ls.api_key)
        cleaned = redactor.text(message)
        if '"key"' in cleaned and SET_API_KEY in cleaned:
            cleaned = re.sub(r'"key"\s*:\s*"[^"]*"', '"key": "[REDACTED]"', cleaned)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install_log_redaction(ls: MemlensServer) -> None:
    """Redact keys from the server's log and from anything else it writes to stderr (stdout
    carries JSON-RPC, whose chat events are redacted where they are made)."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(_RedactSecrets(ls))
    install_stream_redaction(stdout=False)


def register(server: MemlensServer) -> None:
    @server.feature(SEND)
    async def send(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(SendParams, params)
        await ls.ready.wait()
        session = ls.chat_sessions.get(request.session_id)
        # A session stays in the folder it started in (its startup load's folder).
        folder = session.context.startup.cwd if session else ls.folder_for_uri(request.uri, SEND)
        if folder is not None and not ls.service.trusted(folder):
            ls.protocol.notify(EVENT, ErrorEvent(
                session_id=request.session_id, retryable=False,
                message="Chat is off in an untrusted workspace: its tools would read the "
                        "workspace. Trust the folder to chat.").payload())
            return SendResult(session_id=request.session_id, status="error").compact()
        if session is None:
            from memlens.agent.chat import ChatSession  # loaded on first use (start-up time)

            session = ChatSession(agent_context(ls, folder), request.session_id)
            ls.chat_sessions[request.session_id] = session
        else:
            session.context.set_api_key(ls.api_key)
            session.context.chat = chat_settings(ls, folder)

        async def emit(event: ChatEvent) -> None:
            ls.protocol.notify(EVENT, event.payload())

        status = await session.send(request.text, emit, lsp_approver(ls, APPROVE))
        return SendResult(session_id=request.session_id,
                          status=status).compact()  # type: ignore[arg-type]

    @server.feature(CANCEL)
    def cancel(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(SessionParams, params)
        session = ls.chat_sessions.get(request.session_id)
        return CancelResult(cancelled=bool(session and session.cancel())).wire()

    @server.feature(SESSIONS)
    def sessions(ls: MemlensServer, params: Any) -> dict[str, object]:
        return SessionsResult(sessions=_all_sessions(ls)).wire()

    @server.feature(HISTORY)
    def history(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(SessionParams, params)
        records = _transcript(ls, request.session_id)
        messages = [HistoryMessage(role="user" if r.kind == "user" else "model",
                                   text=str(r.data.get("text", "")))
                    for r in records if r.kind in ("user", "model")]
        return HistoryResult(session_id=request.session_id, messages=messages).wire()

    @server.feature(STATUS)
    def status(ls: MemlensServer, params: Any) -> dict[str, object]:
        chat = chat_settings(ls, ls.service.default_folder)
        has_key = bool(ls.api_key or os.environ.get("GEMINI_API_KEY")
                       or os.environ.get("GOOGLE_API_KEY") or uses_vertex())
        return ChatStatus(has_api_key=has_key, model=chat.model,
                          approval_mode=chat.approval_mode, base_url=chat.base_url).compact()

    @server.feature(SET_API_KEY)
    def set_api_key(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(ApiKeyParams, params)
        register_secret(request.key)  # even a refused key is never logged
        if not ls.owner_proven:
            raise RequestFailed("only the client that started the server (or proved it holds "
                                "the token of memlens serve --tcp) may set the API key")
        ls.api_key = request.key.strip() or None
        register_secret(ls.api_key)  # redacted everywhere from now on
        for session in ls.chat_sessions.values():
            session.context.set_api_key(ls.api_key)
        return ApiKeyResult(has_api_key=bool(ls.api_key)).wire()
