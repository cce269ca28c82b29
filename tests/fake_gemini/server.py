"""The fake Gemini API's HTTP server: :class:`FakeGemini` serves the script on 127.0.0.1,
records every request and answers as the real API would (see the package's docstring)."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from .recording import RecordedRequest
from .script import Script, Turn, _Delay, _Drop, error
from .wire import _client_gone, _Envelope, _merge, _read_body

REDACTED = "<REDACTED>"
NO_SCRIPT_MESSAGE = "FakeGemini: no scripted response left"
_SECRET_HEADERS = frozenset({"x-goog-api-key", "authorization", "proxy-authorization"})
_ROUTE = re.compile(
    r"^/(?P<version>v1|v1beta|v1alpha)/models/(?P<model>[^/:]+)"
    r":(?P<action>generateContent|streamGenerateContent|countTokens)$"
)
_POLL = 0.02  # seconds between checks while a turn waits


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
            # stop() sets `_stopping` before it shuts the connections: a connection gone
            # after that is stop()'s doing, not the client's.
            if self._stopping.is_set():
                raise _Stopped
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
