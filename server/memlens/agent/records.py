"""Session transcripts: JSONL under the project's private folder in HOME, secrets redacted."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from memlens.agents.gemini.projects import project_temp_dir
from memlens.files.secrets import (
    KEY_ENVIRONMENT,
    REDACTED,
    Redactor,
    install_stream_redaction,
    known_secrets,
    register_secret,
)
from memlens.files.structured import json_file_or_none
from memlens.protocol.chat import ChatEvent, SessionRecord, SessionSummary, TextEvent, ThoughtEvent

# The redaction itself lives in files/secrets.py (the command line uses it for every output).
__all__ = ["KEY_ENVIRONMENT", "REDACTED", "Redactor", "install_stream_redaction",
           "known_secrets", "register_secret"]

Emit = Callable[[Any], Awaitable[None]]
_INDEX_BYTES = 64 * 1024 * 1024  # the sessions index (in HOME: read through files.structured)


def redacting_emit(emit: Emit, redactor: Redactor) -> Emit:
    """`emit` for chat events with every key redacted, in every field. Streamed text is
    redacted across chunk boundaries: the end of a chunk that could begin a key waits for the
    next chunk (or for the next event of another kind, which first flushes it)."""
    pending: dict[str, Any] = {"event": None, "text": ""}

    async def flush() -> None:
        event, held = pending["event"], pending["text"]
        pending["event"], pending["text"] = None, ""
        if event is not None and held:
            await emit(event.model_copy(update={"text": redactor.text(held)}))

    async def wrapped(event: ChatEvent) -> None:
        if isinstance(event, TextEvent | ThoughtEvent) and event.text:
            if pending["event"] is not None and pending["event"].kind != event.kind:
                await flush()
            buffer = redactor.text(pending["text"] + event.text)
            hold = redactor.held_back(buffer)
            shown, pending["text"] = buffer[:len(buffer) - hold], buffer[len(buffer) - hold:]
            pending["event"] = event
            if shown:
                await emit(event.model_copy(update={"text": shown}))
            return
        await flush()
        await emit(type(event).model_validate(redactor.deep(event.model_dump())))

    return wrapped


def chats_dir(home: str, project_root: str) -> str:
    """Where this project's transcripts go, registering the project as Gemini CLI does."""
    temp = project_temp_dir(home, project_root, claim=True)
    assert temp is not None
    return os.path.join(temp, "memlens", "chats")


def existing_chats_dir(home: str, project_root: str) -> str | None:
    """Where this project's transcripts are, without touching the registry (for reads)."""
    temp = project_temp_dir(home, project_root, claim=False)
    return os.path.join(temp, "memlens", "chats") if temp else None


class Transcript:
    """Appends records for one session; keeps the sessions index (one-line summaries)."""

    def __init__(self, folder: str, session_id: str, redactor: Redactor):
        self.folder = folder
        self.session_id = session_id
        self.redactor = redactor
        self.path = os.path.join(folder, f"{session_id}.jsonl")

    def append(self, kind: str, data: dict[str, Any]) -> None:
        os.makedirs(self.folder, exist_ok=True)
        record = SessionRecord(session_id=self.session_id, kind=kind,
                               data=self.redactor.deep(data))
        line = json.dumps(record.wire(), ensure_ascii=False)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")

    def update_index(self, title: str, summary: str, message_count: int) -> None:
        """Read-modify-write of `index.json` under the folder's write lock, written atomically
        (sessions of several threads and processes end turns at once)."""
        from memlens.agents.gemini.writing import atomic_write, memory_lock

        index_path = os.path.join(self.folder, "index.json")
        with memory_lock(index_path):
            index = json_file_or_none(index_path, max_bytes=_INDEX_BYTES)
            if not isinstance(index, dict):
                index = {}
            index[self.session_id] = SessionSummary(
                session_id=self.session_id, title=self.redactor.text(title),
                summary=self.redactor.text(summary), updated=time.time(),
                message_count=message_count).wire()
            atomic_write(index_path, json.dumps(index, ensure_ascii=False, indent=1))


def list_sessions(folder: str) -> list[SessionSummary]:
    index = json_file_or_none(os.path.join(folder, "index.json"), max_bytes=_INDEX_BYTES)
    if not isinstance(index, dict):
        return []
    sessions = [SessionSummary.model_validate(v) for v in index.values()]
    return sorted(sessions, key=lambda s: s.updated, reverse=True)


def read_transcript(folder: str, session_id: str) -> list[SessionRecord]:
    if not re.fullmatch(r"[A-Za-z0-9_\-]+", session_id):
        return []
    try:
        with open(os.path.join(folder, f"{session_id}.jsonl"), encoding="utf-8") as handle:
            return [SessionRecord.model_validate_json(line) for line in handle if line.strip()]
    except (OSError, ValueError):
        return []
