"""The script of the fake Gemini API: the turns it answers, built from :func:`text`,
:func:`thought`, :func:`function_call`, :func:`part`, :func:`raw`, :func:`chunk`,
:func:`hang`, :func:`drop` (joined with ``+``) and :func:`error`."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .recording import RecordedRequest

# google.rpc.Code names for the HTTP statuses the API maps them to.
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    412: "FAILED_PRECONDITION",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
# Messages close to what the real API says for these statuses.
_DEFAULT_MESSAGES = {
    400: "Request contains an invalid argument.",
    403: "The caller does not have permission",
    404: "Requested entity was not found.",
    429: "You exceeded your current quota, please check your plan and billing details.",
    500: "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    503: "The model is overloaded. Please try again later.",
    504: "The request timed out. Please try again.",
}


# --------------------------------------------------------------------------- script


@dataclass(frozen=True)
class _Chunk:
    """One streamed chunk made of model parts (the fake adds the envelope)."""

    parts: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class _Raw:
    """One chunk sent exactly as given."""

    body: dict[str, Any]


@dataclass(frozen=True)
class _Delay:
    seconds: float


@dataclass(frozen=True)
class _Drop:
    """Close the connection abruptly."""


_Piece = _Chunk | _Raw | _Delay | _Drop


@dataclass(frozen=True)
class Turn:
    """The answer to one generate request: chunks (streamed one by one, merged into one
    response for ``generateContent``), or an HTTP error.

    Join pieces into one turn with ``+``. The last content chunk carries the turn's
    finishReason, which a joined turn takes from its right-hand side: ``raw()`` and
    ``drop()`` have none, so ``text("a") + drop()`` ends without one. ``.finish()``
    sets it explicitly."""

    pieces: tuple[_Piece, ...] = ()
    finish_reason: str | None = "STOP"
    usage: dict[str, Any] | None = None
    error_status: int | None = None
    error_body: dict[str, Any] | None = None
    times: int = 1

    def __add__(self, other: Turn) -> Turn:
        if not isinstance(other, Turn):
            return NotImplemented
        if self.error_status is not None or other.error_status is not None:
            raise ValueError("an error() turn cannot be combined with other pieces")
        usage = {**(self.usage or {}), **(other.usage or {})} or None
        return Turn(self.pieces + other.pieces, other.finish_reason, usage)

    def finish(self, reason: str | None) -> Turn:
        """The finishReason of the last chunk (``None``: leave it out)."""
        return replace(self, finish_reason=reason)

    def with_usage(self, **counts: Any) -> Turn:
        """Override usageMetadata fields, e.g. ``with_usage(promptTokenCount=7)``."""
        return replace(self, usage={**(self.usage or {}), **counts})

    @property
    def is_error(self) -> bool:
        return self.error_status is not None


Script = Turn | Callable[["RecordedRequest"], Turn]


def text(*chunks: str) -> Turn:
    """Model text, one streamed chunk per argument."""
    if not chunks:
        raise ValueError("text() needs at least one chunk")
    return Turn(tuple(_Chunk(({"text": c},)) for c in chunks))


def thought(summary: str, *, signature: str | bytes | None = None) -> Turn:
    """A thought-summary part (``"thought": true``) in its own chunk."""
    p: dict[str, Any] = {"text": summary, "thought": True}
    if signature is not None:
        p["thoughtSignature"] = _b64(signature)
    return Turn((_Chunk((p,)),))


def function_call(
    name: str,
    args: dict[str, Any] | None = None,
    id: str | None = None,
    *,
    signature: str | bytes | None = None,
) -> Turn:
    """A ``functionCall`` part in its own chunk (``signature``: its thoughtSignature)."""
    call: dict[str, Any] = {"name": name, "args": dict(args or {})}
    if id is not None:
        call["id"] = id
    p: dict[str, Any] = {"functionCall": call}
    if signature is not None:
        p["thoughtSignature"] = _b64(signature)
    return Turn((_Chunk((p,)),))


def part(value: dict[str, Any]) -> Turn:
    """Any model part, as given, in its own chunk."""
    return Turn((_Chunk((dict(value),)),))


def chunk(*turns: Turn) -> Turn:
    """Put the parts of ``turns`` into one single chunk (e.g. parallel function calls)."""
    parts: list[dict[str, Any]] = []
    for t in turns:
        for piece in t.pieces:
            if not isinstance(piece, _Chunk):
                raise ValueError("chunk() only takes part turns (text, thought, ...)")
            parts.extend(piece.parts)
    return Turn((_Chunk(tuple(parts)),))


def raw(body: dict[str, Any]) -> Turn:
    """A whole chunk / response sent verbatim (no envelope, usage or finishReason added).

    ``raw({"error": {"code": 500, "message": "x", "status": "INTERNAL"}})`` inside a
    stream is how the API reports a failure after streaming has started."""
    return Turn((_Raw(body),), finish_reason=None)


def hang(seconds: float) -> Turn:
    """Wait ``seconds`` at this point (before the response for generateContent, between
    events for a stream). The wait ends early when the client goes away or on stop()."""
    return Turn((_Delay(float(seconds)),))


def drop() -> Turn:
    """Close the connection here without finishing the response."""
    return Turn((_Drop(),), finish_reason=None)


def error(
    status: int,
    message: str | None = None,
    times: int = 1,
    *,
    status_name: str | None = None,
    details: list[dict[str, Any]] | None = None,
    retry_delay: str | None = None,
) -> Turn:
    """An HTTP error with Google's JSON error body, answered to ``times`` requests.

    ``retry_delay`` (e.g. ``"2s"``) adds the ``google.rpc.RetryInfo`` detail that real
    429s carry."""
    if times < 1:
        raise ValueError("times must be >= 1")
    body: dict[str, Any] = {
        "code": status,
        "message": message if message is not None else _DEFAULT_MESSAGES.get(status, "Error"),
        "status": status_name or _STATUS_NAMES.get(status, "UNKNOWN"),
    }
    all_details = list(details or [])
    if retry_delay is not None:
        all_details.append(
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry_delay}
        )
    if all_details:
        body["details"] = all_details
    return Turn(error_status=status, error_body={"error": body}, times=times, finish_reason=None)


def _b64(value: str | bytes) -> str:
    return base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else value
