"""Session transcripts: JSONL under the project's private folder in HOME, secrets redacted."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from memlens.agents.gemini.projects import project_temp_dir
from memlens.protocol.chat import ChatEvent, SessionRecord, SessionSummary, TextEvent, ThoughtEvent

REDACTED = "[REDACTED]"
_KEY_PATTERN = re.compile(r"AIza[0-9A-Za-z_\-]{35}")
# The start of a Google-shaped key at the very end of a text (a stream may cut a key anywhere).
_KEY_PREFIX_PATTERN = re.compile(r"(?:A|AI|AIz|AIza[0-9A-Za-z_\-]{0,34})\Z")


# Where the process finds keys: google-genai reads both variables (GOOGLE_API_KEY first).
KEY_ENVIRONMENT = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_registered: set[str] = set()
_registered_lock = threading.Lock()


def register_secret(secret: str | None) -> None:
    """Remember a key for the life of the process (the one the extension sends from its
    SecretStorage, say): every Redactor hides it from then on, even after it is replaced."""
    if secret and len(secret.strip()) >= 8:
        with _registered_lock:
            _registered.add(secret.strip())


def _url_secrets(url: str | None) -> list[str]:
    """A password or `key=` parameter written into an endpoint URL."""
    if not url:
        return []
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
        found = [parts.password or ""]
        found += [v for k, v in parse_qsl(parts.query) if k.lower() in ("key", "token")]
    except ValueError:
        return []
    return [f for f in found if f]


def known_secrets() -> set[str]:
    """Every key this process knows: registered ones and, read afresh, the environment's."""
    found = {os.environ.get(name, "").strip() for name in KEY_ENVIRONMENT}
    found.update(_url_secrets(os.environ.get("MEMLENS_GEMINI_BASE_URL")))
    with _registered_lock:
        found |= _registered
    return {f for f in found if len(f) >= 8}


class Redactor:
    """Replaces every known key (its own, the registered ones, the environment's, and
    anything shaped like a Google API key) with [REDACTED]."""

    def __init__(self) -> None:
        self.secrets: set[str] = set()

    def add(self, secret: str | None) -> None:
        if secret and len(secret) >= 8:
            self.secrets.add(secret)
            register_secret(secret)

    def all_secrets(self) -> list[str]:
        return sorted(self.secrets | known_secrets(), key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self.all_secrets():
            value = value.replace(secret, REDACTED)
        return _KEY_PATTERN.sub(REDACTED, value)

    def complete(self, value: str) -> str:
        """`text`, for a whole value that may have been cut short (a tool output truncated to
        4,000 characters): a tail of 6 or more characters that begins a key is hidden too."""
        value = self.text(value)
        hold = self.held_back(value)
        return value[:len(value) - hold] + REDACTED if hold >= 6 else value

    def deep(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.complete(value)
        if isinstance(value, dict):
            return {k: self.deep(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.deep(v) for v in value]
        return value

    def held_back(self, value: str) -> int:
        """How many characters at the end of `value` could be the start of a key (so a
        stream must wait for the next chunk before showing them)."""
        longest = 0
        for secret in self.all_secrets():
            for size in range(min(len(secret) - 1, len(value)), longest, -1):
                if value.endswith(secret[:size]):
                    longest = size
                    break
        shaped = _KEY_PREFIX_PATTERN.search(value)
        if shaped is not None:
            longest = max(longest, len(value) - shaped.start())
        return longest


Emit = Callable[[Any], Awaitable[None]]


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


class _RedactingStream:
    """A text stream (stdout, stderr) that redacts every known key from what is written."""

    def __init__(self, stream: Any, redactor: Redactor):
        self._stream = stream
        self._redactor = redactor

    def write(self, text: str) -> int:
        self._stream.write(self._redactor.text(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def install_stream_redaction(*, stdout: bool = True, stderr: bool = True) -> None:
    """Redact known keys from everything this process writes to stdout / stderr (the last
    line of defence: tracebacks, warnings, library messages). Idempotent."""
    import sys

    redactor = Redactor()
    if stdout and sys.stdout is not None and not isinstance(sys.stdout, _RedactingStream):
        sys.stdout = _RedactingStream(sys.stdout, redactor)
    if stderr and sys.stderr is not None and not isinstance(sys.stderr, _RedactingStream):
        sys.stderr = _RedactingStream(sys.stderr, redactor)


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
            try:
                with open(index_path, encoding="utf-8") as handle:
                    index = json.load(handle)
            except (OSError, ValueError):
                index = {}
            if not isinstance(index, dict):
                index = {}
            index[self.session_id] = SessionSummary(
                session_id=self.session_id, title=self.redactor.text(title),
                summary=self.redactor.text(summary), updated=time.time(),
                message_count=message_count).wire()
            atomic_write(index_path, json.dumps(index, ensure_ascii=False, indent=1))


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
