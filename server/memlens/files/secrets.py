"""Secrets the process knows, and the one redaction every output uses
(docs/security.md "Secrets, writes and output").

`GEMINI_API_KEY` and `GOOGLE_API_KEY` from the environment, the key the editor sends, a
password or `key=` in the endpoint URL, and values that environment expansion put into a
settings file's context file names (`register_secret`) are replaced by `[REDACTED]`, as is
anything shaped like a Google API key: in chat events and transcripts (`agent/records.py`), the
server's log, and everything the command line writes to stdout and stderr
(`install_stream_redaction`).
"""

from __future__ import annotations

import os
import re
import threading
from typing import Any

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


