"""A scriptable fake of the Gemini API (generativelanguage) for tests.

The real ``google-genai`` client talks to it over real HTTP on 127.0.0.1:

    from google import genai
    from tests.fake_gemini import FakeGemini, text, function_call

    with FakeGemini(expect_key="test-key") as fake:
        fake.enqueue(function_call("read_file", {"path": "GEMINI.md"}), text("Done", "."))
        client = genai.Client(
            api_key="test-key",
            http_options=genai.types.HttpOptions(base_url=fake.base_url, api_version="v1beta"),
        )
        ...
        assert fake.requests[1].function_responses[0]["name"] == "read_file"

Wire format, as google-genai (checked against 3.4.0) sends and parses it:

* ``POST {base_url}/{api_version}/models/{model}:generateContent`` answers one
  ``GenerateContentResponse`` as JSON.
* ``POST {base_url}/{api_version}/models/{model}:streamGenerateContent?alt=sse``
  answers ``text/event-stream`` (HTTP/1.1 chunked): one ``data: {json}\\r\\n\\r\\n``
  event per chunk, each chunk a ``GenerateContentResponse``. Without ``alt=sse`` the
  real API streams a JSON array; that is served too.
* The key travels in the ``x-goog-api-key`` header (``?key=`` is accepted as well, as
  the real API does). The SDK's default ``api_version`` is ``v1``; ``v1``, ``v1beta``
  and ``v1alpha`` are all served and the one used is recorded.
* Errors are Google's JSON error body ``{"error": {"code", "message", "status"}}``
  with the HTTP status; ``data: {"error": ...}`` inside a stream is what the API
  sends for a failure mid-stream (use :func:`raw` for that).

A script is a queue of turns, one per generate request, built from the helpers
:func:`text`, :func:`thought`, :func:`function_call`, :func:`part`, :func:`raw`,
:func:`chunk`, :func:`hang`, :func:`drop` (joined with ``+`` into one turn) and
:func:`error`. A callable ``f(request) -> Turn`` may stand in for a turn. When the
queue is empty the fake answers HTTP 500 "FakeGemini: no scripted response left".

SDK behaviour worth knowing when writing tests (google-genai 3.4.0):

* ``genai.Client.__del__`` closes its HTTP client, so keep a reference to the Client;
  ``make_client().models.generate_content(...)`` may fail with "client has been closed".
* Leaving a sync stream early (``break``) closes the connection. In async code, ``break``
  or ``aclose()`` on the stream does not: the connection stays open until the server
  finishes. Cancelling the consuming task does close it.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

REDACTED = "<REDACTED>"
NO_SCRIPT_MESSAGE = "FakeGemini: no scripted response left"
_SECRET_HEADERS = frozenset({"x-goog-api-key", "authorization", "proxy-authorization"})
_ROUTE = re.compile(
    r"^/(?P<version>v1|v1beta|v1alpha)/models/(?P<model>[^/:]+)"
    r":(?P<action>generateContent|streamGenerateContent|countTokens)$"
)
_POLL = 0.02  # seconds between checks while a turn waits

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


# ------------------------------------------------------------------------- recording


@dataclass
class RecordedRequest:
    """One request as the fake received it (secrets redacted)."""

    index: int
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    api_key_sent: bool
    """A non-empty key came in ``x-goog-api-key`` (or ``?key=``)."""
    api_key_matches: bool | None
    """The key equals ``expect_key``; None when the fake has no ``expect_key``."""
    body: Any
    raw_body: bytes = field(repr=False)
    api_version: str | None = None
    model: str | None = None
    action: str | None = None
    status: int | None = None
    """HTTP status answered (None while the answer is being produced)."""
    outcome: str = "pending"
    """scripted | error | unscripted | rejected | not_found | bad_request | internal |
    dropped (a drop() piece) | stopped (stop() cut the answer short)"""
    events_sent: int = 0
    """SSE events (or JSON array items) written for a stream."""
    disconnected: bool = False
    """The client closed the connection before the answer was complete."""
    completed: bool = False

    @property
    def stream(self) -> bool:
        return self.action == "streamGenerateContent"

    def _get(self, key: str) -> Any:
        return self.body.get(key) if isinstance(self.body, dict) else None

    @property
    def contents(self) -> list[dict[str, Any]]:
        return self._get("contents") or []

    @property
    def system_instruction(self) -> dict[str, Any] | None:
        return self._get("systemInstruction")

    @property
    def system_text(self) -> str:
        si = self.system_instruction or {}
        return "".join(p.get("text", "") for p in si.get("parts", []))

    @property
    def tools(self) -> list[dict[str, Any]]:
        return self._get("tools") or []

    @property
    def tool_config(self) -> dict[str, Any] | None:
        return self._get("toolConfig")

    @property
    def generation_config(self) -> dict[str, Any]:
        return self._get("generationConfig") or {}

    @property
    def function_declarations(self) -> list[dict[str, Any]]:
        return [d for t in self.tools for d in t.get("functionDeclarations", [])]

    @property
    def function_names(self) -> list[str]:
        return [d.get("name", "") for d in self.function_declarations]

    @property
    def function_responses(self) -> list[dict[str, Any]]:
        """Every ``functionResponse`` in the history, oldest first."""
        return [
            p["functionResponse"]
            for c in self.contents
            for p in c.get("parts", [])
            if "functionResponse" in p
        ]

    @property
    def last_user_text(self) -> str:
        for c in reversed(self.contents):
            if c.get("role", "user") == "user":
                texts = [p["text"] for p in c.get("parts", []) if "text" in p]
                if texts:
                    return "".join(texts)
        return ""


# ---------------------------------------------------------------------------- server


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = True
    allow_reuse_address = False

    def __init__(self, fake: FakeGemini) -> None:
        self.fake = fake
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    # Tracked from accept (in the serving thread) to close, so stop() can reach them all.
    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeGemini/1.0"
    sys_version = ""
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean; everything is in fake.requests

    def _dispatch(self) -> None:
        self.server.fake._handle(self)

    do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = _dispatch


class _ClientGone(Exception):
    pass


class _Stopped(Exception):
    pass


class FakeGemini:
    """A local, scriptable Gemini API server (see module docstring).

    Usable as a context manager (``with FakeGemini() as fake``), or started/stopped by
    hand, or through the :func:`fake_gemini` pytest fixture.
    """

    def __init__(self, *, expect_key: str | None = None, start: bool = True) -> None:
        self.expect_key = expect_key
        self._cond = threading.Condition()
        self._script: deque[Script] = deque()
        self._requests: list[RecordedRequest] = []
        self._problems: list[str] = []
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._responses = 0
        if start:
            self.start()

    # ---- lifecycle

    def start(self) -> FakeGemini:
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"FakeGemini:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, thread = self._server, self._thread
        if server is None:
            return
        self._stopping.set()  # ends hang() waits
        server.shutdown()  # no new connections
        with server.connections_lock:
            open_connections = list(server.connections)
        for conn in open_connections:  # wakes keep-alive handlers blocked on a read
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        server.server_close()  # joins the handler threads
        if thread is not None:
            thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeGemini is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """For ``HttpOptions(base_url=...)``."""
        return f"http://127.0.0.1:{self.port}"

    def http_options(self, **overrides: Any) -> Any:
        """``HttpOptions`` pointed at this fake, pinned to ``v1beta`` (the SDK's own
        default is ``v1``)."""
        from google.genai import types

        options: dict[str, Any] = {"base_url": self.base_url, "api_version": "v1beta"}
        options.update(overrides)
        return types.HttpOptions(**options)

    def client(self, api_key: str | None = None, **http_overrides: Any) -> Any:
        """A real ``genai.Client`` for this fake (key: ``expect_key`` unless given)."""
        from google import genai

        return genai.Client(
            api_key=api_key or self.expect_key or "fake-gemini-key",
            vertexai=False,
            http_options=self.http_options(**http_overrides),
        )

    # ---- scripting

    def enqueue(self, *turns: Script) -> FakeGemini:
        """Append turns, one per upcoming generate request (an ``error(times=n)`` takes n)."""
        with self._cond:
            for t in turns:
                if isinstance(t, Turn):
                    self._script.extend([replace(t, times=1)] * t.times)
                elif callable(t):
                    self._script.append(t)
                else:
                    raise TypeError(f"not a Turn or callable: {t!r}")
        return self

    script = enqueue

    @property
    def remaining(self) -> int:
        with self._cond:
            return len(self._script)

    def clear(self) -> None:
        with self._cond:
            self._script.clear()
            self._requests.clear()
            self._problems.clear()

    # ---- recording

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, generate calls and anything else."""
        with self._cond:
            return list(self._requests)

    @property
    def generate_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.action not in (None, "countTokens")]

    @property
    def count_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.action == "countTokens"]

    @staticmethod
    def count_tokens(rec: RecordedRequest) -> int:
        """The fake's token count for a countTokens request: one token per whitespace-
        separated word of every text part (a fixed rule the tests can compute by hand)."""
        return sum(len(str(p.get("text", "")).split()) for c in rec.contents
                   for p in c.get("parts", []) if isinstance(p, dict))

    @property
    def last_request(self) -> RecordedRequest:
        reqs = self.requests
        if not reqs:
            raise AssertionError("FakeGemini received no request")
        return reqs[-1]

    def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("FakeGemini: timed out waiting for a condition")
                self._cond.wait(min(left, 0.1))

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[RecordedRequest]:
        self.wait_until(lambda: len(self._requests) >= n, timeout)
        return self.requests

    def assert_done(self) -> None:
        """Fail if scripted turns are left, or if anything went unscripted/wrong."""
        with self._cond:
            problems = list(self._problems)
            if self._script:
                problems.append(f"{len(self._script)} scripted turn(s) never requested")
        if problems:
            raise AssertionError("FakeGemini: " + "; ".join(problems))

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify_all()

    # ---- request handling (server threads)

    def _handle(self, h: _Handler) -> None:
        try:
            raw_body = _read_body(h)
        except (OSError, ValueError):
            h.close_connection = True
            return
        split = urlsplit(h.path)
        query_pairs = parse_qsl(split.query, keep_blank_values=True)
        query = {k: (REDACTED if k == "key" else v) for k, v in query_pairs}
        sent_key = h.headers.get("x-goog-api-key") or dict(query_pairs).get("key") or ""
        headers = {
            k.lower(): (REDACTED if k.lower() in _SECRET_HEADERS else v)
            for k, v in h.headers.items()
        }
        try:
            body: Any = json.loads(raw_body) if raw_body else None
            bad_json = False
        except ValueError:
            body, bad_json = None, True
        route = _ROUTE.match(split.path)
        with self._cond:
            rec = RecordedRequest(
                index=len(self._requests),
                method=h.command,
                path=split.path,
                query=query,
                headers=headers,
                api_key_sent=bool(sent_key),
                api_key_matches=None if self.expect_key is None else sent_key == self.expect_key,
                body=body,
                raw_body=raw_body,
                api_version=route["version"] if route else None,
                model=route["model"] if route else None,
                action=route["action"] if route else None,
            )
            self._requests.append(rec)
            self._cond.notify_all()
        try:
            self._answer(h, rec, route is not None, bad_json, dict(query_pairs))
        except _ClientGone:
            rec.disconnected = True
            h.close_connection = True
        except _Stopped:
            rec.outcome = "stopped"
            h.close_connection = True
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            rec.disconnected = True
            h.close_connection = True
        except Exception as exc:  # a bug in the fake or in a scripted callable
            rec.outcome = "internal"
            with self._cond:
                self._problems.append(f"request {rec.index}: {type(exc).__name__}: {exc}")
            with contextlib.suppress(Exception):
                self._send_error(h, rec, 500, f"FakeGemini internal error: {exc!r}")
            h.close_connection = True
        finally:
            self._notify()

    def _answer(
        self,
        h: _Handler,
        rec: RecordedRequest,
        routed: bool,
        bad_json: bool,
        query: dict[str, str],
    ) -> None:
        if not routed or h.command != "POST":
            rec.outcome = "not_found"
            with self._cond:
                self._problems.append(f"request {rec.index}: unsupported {h.command} {rec.path}")
            self._send_error(h, rec, 404, f"FakeGemini: no such endpoint {h.command} {rec.path}")
            return
        if self.expect_key is not None and not rec.api_key_matches:
            rec.outcome = "rejected"
            if not rec.api_key_sent:  # what the real API answers without a key
                self._send_error(
                    h,
                    rec,
                    403,
                    "Method doesn't allow unregistered callers (callers without established "
                    "identity). Please use API Key or other form of API consumer identity to "
                    "call this API.",
                )
            else:  # and with a wrong one
                self._send_error(
                    h,
                    rec,
                    400,
                    "API key not valid. Please pass a valid API key.",
                    details=[
                        {
                            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                            "reason": "API_KEY_INVALID",
                            "domain": "googleapis.com",
                            "metadata": {"service": "generativelanguage.googleapis.com"},
                        }
                    ],
                )
            return
        if bad_json or not isinstance(rec.body, dict):
            rec.outcome = "bad_request"
            self._send_error(h, rec, 400, "Invalid JSON payload received.")
            return

        if rec.action == "countTokens":  # answered from the text, never from the script
            rec.outcome = "counted"
            self._send_json(h, rec, 200, {"totalTokens": self.count_tokens(rec)})
            return
        with self._cond:
            item = self._script.popleft() if self._script else None
        if item is None:
            rec.outcome = "unscripted"
            with self._cond:
                self._problems.append(f"request {rec.index} ({rec.action}): {NO_SCRIPT_MESSAGE}")
            self._send_error(h, rec, 500, NO_SCRIPT_MESSAGE)
            return
        turn = item if isinstance(item, Turn) else item(rec)
        if not isinstance(turn, Turn):
            raise TypeError(f"scripted callable returned {turn!r}, not a Turn")

        if turn.is_error:
            rec.outcome = "error"
            assert turn.error_status is not None and turn.error_body is not None
            self._send_json(h, rec, turn.error_status, turn.error_body)
            return
        rec.outcome = "scripted"
        with self._cond:
            self._responses += 1
            response_id = f"fakegemini-{self._responses:06d}"
        chunks = _Envelope(turn, rec, response_id)
        if rec.stream:
            self._send_stream(h, rec, turn, chunks, sse=query.get("alt") == "sse")
        else:
            self._send_single(h, rec, turn, chunks)

    def _send_single(self, h: _Handler, rec: RecordedRequest, turn: Turn, env: _Envelope) -> None:
        bodies: list[dict[str, Any]] = []
        for i, piece in enumerate(turn.pieces):
            if isinstance(piece, _Delay):
                self._wait(h, rec, piece.seconds)
            elif isinstance(piece, _Drop):
                self._drop(h, rec)
                return
            else:
                bodies.append(env.build(piece, i))
        if not env.any_content:
            bodies.append(env.empty_final())
        self._send_json(h, rec, 200, _merge(bodies))

    def _send_stream(
        self, h: _Handler, rec: RecordedRequest, turn: Turn, env: _Envelope, *, sse: bool
    ) -> None:
        rec.status = 200
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream" if sse else "application/json")
        h.send_header("Content-Disposition", "attachment")
        h.send_header("Vary", "Origin, X-Origin, Referer")
        h.send_header("X-Content-Type-Options", "nosniff")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def emit(body: dict[str, Any]) -> None:
            data = json.dumps(body, ensure_ascii=False)
            if sse:
                frame = f"data: {data}\r\n\r\n"
            else:
                frame = ("[" if rec.events_sent == 0 else ",\r\n") + data
            rec.events_sent += 1  # counted first: the client may act on it at once
            try:
                self._write_chunk(h, rec, frame.encode("utf-8"))
            except BaseException:
                rec.events_sent -= 1
                raise
            self._notify()

        for i, piece in enumerate(turn.pieces):
            if isinstance(piece, _Delay):
                self._wait(h, rec, piece.seconds)
            elif isinstance(piece, _Drop):
                self._drop(h, rec)
                return
            else:
                emit(env.build(piece, i))
        if not env.any_content:
            emit(env.empty_final())
        if not sse:
            self._write_chunk(h, rec, b"[]" if rec.events_sent == 0 else b"]")
        rec.completed = True  # set first: the client may be done as soon as this is sent
        try:
            h.wfile.write(b"0\r\n\r\n")
        except BaseException:
            rec.completed = False
            raise

    # ---- low-level I/O

    def _send_json(self, h: _Handler, rec: RecordedRequest, status: int, body: Any) -> None:
        data = json.dumps(body, indent=2, ensure_ascii=False).encode("utf-8")
        h.send_response(status)
        h.send_header("Content-Type", "application/json; charset=UTF-8")
        h.send_header("Vary", "Origin, X-Origin, Referer")
        h.send_header("X-Content-Type-Options", "nosniff")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        rec.status, rec.completed = status, True  # before the client can see the answer
        try:
            h.wfile.write(data)
        except BaseException:
            rec.completed = False
            raise

    def _send_error(
        self,
        h: _Handler,
        rec: RecordedRequest,
        status: int,
        message: str,
        details: list[dict[str, Any]] | None = None,
    ) -> None:
        turn = error(status, message, details=details)
        self._send_json(h, rec, status, turn.error_body)

    def _write_chunk(self, h: _Handler, rec: RecordedRequest, data: bytes) -> None:
        if self._stopping.is_set():
            raise _Stopped
        if _client_gone(h.connection):
            raise _ClientGone
        h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _wait(self, h: _Handler, rec: RecordedRequest, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while True:
            if _client_gone(h.connection):
                raise _ClientGone
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self._stopping.wait(min(left, _POLL)):
                raise _Stopped  # stop(): abandon the answer

    def _drop(self, h: _Handler, rec: RecordedRequest) -> None:
        rec.outcome = "dropped"
        h.close_connection = True
        with contextlib.suppress(OSError):
            h.wfile.flush()
            h.connection.shutdown(socket.SHUT_RDWR)


class _Envelope:
    """Builds GenerateContentResponse chunks for one turn, with running usage."""

    def __init__(self, turn: Turn, rec: RecordedRequest, response_id: str) -> None:
        self.turn = turn
        self.model = rec.model or "gemini"
        self.response_id = response_id
        body = rec.body if isinstance(rec.body, dict) else {}
        prompt = json.dumps([body.get("systemInstruction"), body.get("contents")])
        self.prompt_tokens = max(1, len(prompt) // 4)
        self.candidate_tokens = 0
        self.thought_tokens = 0
        content_idx = [i for i, p in enumerate(turn.pieces) if isinstance(p, _Chunk)]
        self.last_content = content_idx[-1] if content_idx else None
        self.any_content = any(isinstance(p, _Chunk | _Raw) for p in turn.pieces)

    def build(self, piece: _Chunk | _Raw, position: int) -> dict[str, Any]:
        if isinstance(piece, _Raw):
            return json.loads(json.dumps(piece.body))  # a private copy
        for p in piece.parts:
            tokens = _tokens(p)
            if p.get("thought") is True:
                self.thought_tokens += tokens
            else:
                self.candidate_tokens += tokens
        final = position == self.last_content
        return self._envelope([dict(p) for p in piece.parts], final=final)

    def empty_final(self) -> dict[str, Any]:
        return self._envelope([], final=True)

    def _envelope(self, parts: list[dict[str, Any]], *, final: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        if final and self.turn.finish_reason is not None:
            candidate["finishReason"] = self.turn.finish_reason
        candidate["index"] = 0
        usage: dict[str, Any] = {"promptTokenCount": self.prompt_tokens}
        if self.candidate_tokens:
            usage["candidatesTokenCount"] = self.candidate_tokens
        usage["totalTokenCount"] = self.prompt_tokens + self.candidate_tokens + self.thought_tokens
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": self.prompt_tokens}]
        if self.thought_tokens:
            usage["thoughtsTokenCount"] = self.thought_tokens
        if final and self.turn.usage:
            usage.update(self.turn.usage)
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": self.model,
            "responseId": self.response_id,
        }


def _tokens(p: dict[str, Any]) -> int:
    if "text" in p:
        return max(1, len(p["text"]) // 4)
    return max(1, len(json.dumps(p)) // 4)


def _merge(bodies: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Stream chunks -> the single response generateContent gives: parts concatenated,
    adjacent plain texts joined, other fields from the later chunks."""
    if len(bodies) == 1:
        return bodies[0]
    merged: dict[str, Any] = {}
    candidate: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    for b in bodies:
        for k, v in b.items():
            if k != "candidates":
                merged[k] = v
        cands = b.get("candidates") or []
        if cands:
            c = cands[0]
            parts.extend((c.get("content") or {}).get("parts") or [])
            candidate.update({k: v for k, v in c.items() if k != "content"})
    joined: list[dict[str, Any]] = []
    for p in parts:
        prev = joined[-1] if joined else None
        if (
            prev is not None
            and set(p) <= {"text", "thought"}
            and set(prev) <= {"text", "thought"}
            and p.get("thought") == prev.get("thought")
        ):
            joined[-1] = {**prev, "text": prev["text"] + p["text"]}
        else:
            joined.append(dict(p))
    result = {"candidates": [{"content": {"parts": joined, "role": "model"}, **candidate}]}
    result.update(merged)
    return result


def _read_body(h: _Handler) -> bytes:
    if "chunked" in h.headers.get("Transfer-Encoding", "").lower():
        out = bytearray()
        while True:
            size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(out)
            out += h.rfile.read(size)
            h.rfile.readline()
    length = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(length) if length else b""


def _client_gone(sock: socket.socket) -> bool:
    """True once the peer has closed its end (HTTP/1.1 clients send nothing while
    they wait for an answer, so a readable socket means EOF or a reset)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True


@pytest.fixture
def fake_gemini() -> Iterator[FakeGemini]:
    """A running FakeGemini expecting the key ``"test-key"``; stopped afterwards.

    Re-export it from a conftest (``from tests.fake_gemini import fake_gemini``) to use
    it by name; call ``fake_gemini.assert_done()`` to check the script was used up."""
    with FakeGemini(expect_key="test-key") as fake:
        yield fake


__all__ = [
    "NO_SCRIPT_MESSAGE",
    "REDACTED",
    "FakeGemini",
    "RecordedRequest",
    "Turn",
    "chunk",
    "drop",
    "error",
    "fake_gemini",
    "function_call",
    "hang",
    "part",
    "raw",
    "text",
    "thought",
]
