"""Session transcripts: JSONL under the project's private folder in HOME, secrets redacted."""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from pydantic import Field

from ..model import Wire
from ..projects import project_temp_dir

REDACTED = "[REDACTED]"
_KEY_PATTERN = re.compile(r"AIza[0-9A-Za-z_\-]{35}")


class SessionRecord(Wire):
    """One line of a transcript."""

    ts: float = Field(default_factory=time.time)
    session_id: str
    kind: str  # user | model | toolCall | toolResult | memoryLoaded | error | done
    data: dict[str, Any] = Field(default_factory=dict)


class SessionSummary(Wire):
    session_id: str
    title: str
    summary: str
    updated: float
    message_count: int


class Redactor:
    def __init__(self) -> None:
        self.secrets: set[str] = set()

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= 8:
            self.secrets.add(secret)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        return _KEY_PATTERN.sub(REDACTED, value)

    def deep(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.deep(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        return value


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
        index_path = os.path.join(self.folder, "index.json")
        try:
            with open(index_path, encoding="utf-8") as handle:
                index = json.load(handle)
        except (OSError, ValueError):
            index = {}
        index[self.session_id] = SessionSummary(
            session_id=self.session_id, title=self.redactor.text(title),
            summary=self.redactor.text(summary), updated=time.time(),
            message_count=message_count).wire()
        tmp = index_path + f".{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(index, handle, ensure_ascii=False, indent=1)
        os.replace(tmp, index_path)


def list_sessions(folder: str) -> list[SessionSummary]:
    try:
        with open(os.path.join(folder, "index.json"), encoding="utf-8") as handle:
            index = json.load(handle)
    except (OSError, ValueError):
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
