"""The language server's transport (stdio, and TCP): framing that survives a hostile client.

pygls's reader (`pygls.io_.run_async`) trusts the stream: it matches exactly
`Content-Length: N\\r\\n`, reads N bytes in one allocation and hands the rest of the stream to
the next header read. One mis-framed message (no header, a lowercase header, a body longer or
shorter than declared, a header without its blank line) glues the following bodies onto header
lines and the server never reads a message again; `Content-Length: 1000000000000` raises
MemoryError out of the loop and kills it. This module replaces that reader
(docs/security.md "The language server's connection"):

- `MessageReader` splits bytes into JSON values. Header names are case-insensitive, headers
  other than Content-Length are ignored, a header block longer than `MAX_HEADER_BYTES` or with
  a line that is not `Name: value` is garbage. After garbage it resynchronises on the next
  `Content-Length:` in the stream; a body of more than `MAX_MESSAGE_BYTES` is refused and
  skipped the same way, never held in memory. A declared length that runs into the next
  message is cut there (a Content-Length line cannot occur inside valid JSON), and a body that
  holds one JSON value then more bytes gives the rest back to the stream; a body that is not
  JSON is answered ParseError.
- `serve_stdio` runs the server's protocol on it: stdin is read on a daemon thread, so a
  blocked read never keeps the process alive after `exit`; end of input ends the server.
  `serve_tcp` does the same for the first client of `memlens serve --tcp` that proves it is
  the owner: its first message must be `initialize` carrying the per-start token (written by
  `memlens serve` to a file only the user can read); until then nothing it sends reaches the
  server, and a client that fails gets one error and is closed.

Limits: a declared length that overshoots, when no message follows, makes the server wait
for the bytes it was promised, as any reader of a byte stream must.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import queue
import re
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO, Protocol

from pygls.io_ import StdoutWriter

log = logging.getLogger("memlens.lsp.transport")

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024
READ_CHUNK = 64 * 1024

_MARKER = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
# A complete Content-Length line. Inside a valid JSON body it cannot occur: a raw line break
# is only allowed between tokens, where no letters are. Seen in a body still arriving, it
# proves the declared length too long.
_HEADER_LINE = re.compile(rb"content-length[ \t]*:[ \t]*[0-9]+[ \t]*\r?\n", re.IGNORECASE)
_MARKER_TAIL = 64  # bytes kept while skipping: a marker may straddle two reads
_HEADER_END = re.compile(rb"\r?\n\r?\n")
_LINE_END = re.compile(rb"\r?\n")
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_LEADING_BLANKS = re.compile(rb"[ \t\r\n]*")


@dataclass(frozen=True)
class Received:
    """One decoded JSON value; `note` says how a mis-framed one was recovered."""

    value: Any
    note: str = ""


@dataclass(frozen=True)
class Garbled:
    """Bytes that were not a message; `parse_error`: a framed body that is not JSON."""

    reason: str
    parse_error: bool = False


def _preview(data: bytes | bytearray, limit: int = 40) -> str:
    text = repr(bytes(data[:limit]))
    return text + ("..." if len(data) > limit else "")


class MessageReader:
    """Splits the client's byte stream into JSON-RPC messages, resynchronising after garbage."""

    def __init__(self, max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.max_message_bytes = max_message_bytes
        self._buffer = bytearray()
        self._skipping = False  # discarding up to the next Content-Length header
        self._scanned = 0  # how far a pending body has been searched for a header

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def __iter__(self) -> Iterator[Received | Garbled]:
        """Every message (or garbage) complete in what was fed so far."""
        while (event := self._next()) is not None:
            yield event

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    # --- the state machine ---------------------------------------------------------------
    def _next(self) -> Received | Garbled | None:
        scanned, self._scanned = self._scanned, 0
        buf = self._buffer
        if self._skipping:
            marker = _MARKER.search(buf)
            if marker is None:
                del buf[:-_MARKER_TAIL]
                return None
            del buf[:marker.start()]
            self._skipping = False
        blanks = _LEADING_BLANKS.match(buf)
        if blanks is not None and blanks.end():
            del buf[:blanks.end()]
        if not buf:
            return None
        end = _HEADER_END.search(buf, 0, MAX_HEADER_BYTES)
        if end is None:
            if len(buf) >= MAX_HEADER_BYTES:
                return self._resync(f"no end of headers within {MAX_HEADER_BYTES} bytes "
                                    f"({_preview(buf)})")
            return None
        length, problem = self._content_length(bytes(buf[:end.start()]))
        if problem is not None:
            return self._resync(problem)
        assert length is not None
        body_start = end.end()
        if length > self.max_message_bytes:
            del buf[:body_start]
            self._skipping = True
            return Garbled(f"refusing a message with Content-Length {length}: over the "
                           f"{self.max_message_bytes}-byte limit; skipping to the next header")
        note = ""
        if len(buf) < body_start + length:
            header = _HEADER_LINE.search(buf, max(body_start, scanned))
            if header is None:
                self._scanned = max(body_start, len(buf) - _MARKER_TAIL)
                return None
            note = (f"the declared Content-Length {length} ran into the next message after "
                    f"{header.start() - body_start} bytes")
            length = header.start() - body_start
        body = bytes(buf[body_start:body_start + length])
        del buf[:body_start + length]
        return self._decode(body, note)

    def _content_length(self, block: bytes) -> tuple[int | None, str | None]:
        length: int | None = None
        for line in _LINE_END.split(block):
            name, colon, value = line.partition(b":")
            if not colon or not _TOKEN.fullmatch(name):
                return None, f"not a header line: {_preview(line)}"
            if name.lower() != b"content-length":
                continue  # Content-Type and friends: LSP only speaks UTF-8 JSON
            value = value.strip(b" \t")
            if length is not None:
                return None, "two Content-Length headers"
            if not value.isdigit():
                return None, f"Content-Length {_preview(value)} is not a number"
            if len(value) > 20:  # not even parsed: no sane length has that many digits
                return None, (f"Content-Length of {len(value)} digits is over the "
                              f"{self.max_message_bytes}-byte limit")
            length = int(value)
        if length is None:
            return None, "no Content-Length header"
        return length, None

    def _resync(self, reason: str) -> Garbled:
        """Drop what cannot be a message, up to the next Content-Length header."""
        buf = self._buffer
        marker = _MARKER.search(buf, 1)
        if marker is not None:
            del buf[:marker.start()]
        else:
            # Keep a tail that may hold the start of the next header, but never the first
            # byte: a header there is the one just rejected.
            del buf[:max(1, len(buf) - _MARKER_TAIL)]
            self._skipping = True
        return Garbled(f"{reason}; skipping to the next header")

    def _decode(self, body: bytes, note: str = "") -> Received | Garbled:
        try:
            return Received(json.loads(body), note)
        except RecursionError:
            return Garbled("the message is nested too deeply", parse_error=True)
        except ValueError as err:  # JSONDecodeError, UnicodeDecodeError, huge integers
            problem = str(err)
        # Mis-framed? A JSON value followed by more bytes: the declared length was too long
        # and the rest belongs to the next message.
        try:
            text = body.decode("utf-8")
            value, end = json.JSONDecoder().raw_decode(text)
        except (ValueError, RecursionError):
            pass
        else:
            rest = text[end:].encode("utf-8")
            self._buffer[0:0] = rest
            return Received(value, note=f"the declared Content-Length was {len(rest)} bytes "
                                        "too long; the rest is read as the next message")
        marker = _MARKER.search(body)
        if marker is not None:  # a header inside the body: read again from there
            self._buffer[0:0] = body[marker.start():]
        return Garbled(f"the message is not JSON ({problem}): {_preview(body)}",
                       parse_error=True)


class Receiver(Protocol):
    """What the transport delivers to (`MemlensProtocol`)."""

    def receive(self, data: Any) -> None: ...

    def parse_error(self, reason: str) -> None: ...

    def set_writer(self, writer: Any, include_headers: bool = True) -> None: ...


class _StdinPump:
    """Reads the input on a daemon thread, one chunk per `read()`: the event loop never blocks,
    the client's pace is kept, and a read still blocked never holds up the process's exit."""

    def __init__(self, stream: BinaryIO) -> None:
        self._read = getattr(stream, "read1", stream.read)
        self._requests: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop,
                                                asyncio.Future[bytes]]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    async def read(self) -> bytes:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bytes] = loop.create_future()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="memlens-stdin",
                                            daemon=True)
            self._thread.start()
        self._requests.put((loop, future))
        return await future

    def _run(self) -> None:
        while True:
            loop, future = self._requests.get()
            try:
                data: bytes | BaseException = bytes(self._read(READ_CHUNK))
            except (OSError, ValueError) as err:  # a closed or broken stream
                data = err
            try:
                loop.call_soon_threadsafe(_settle, future, data)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                return
            if not data or isinstance(data, BaseException):
                return


def _settle(future: asyncio.Future[bytes], data: bytes | BaseException) -> None:
    if future.done():
        return
    if isinstance(data, BaseException):
        future.set_exception(data)
    else:
        future.set_result(data)


def deliver(receiver: Receiver, event: Received | Garbled) -> None:
    if isinstance(event, Garbled):
        log.error("malformed input from the client: %s", event.reason)
        if event.parse_error:
            receiver.parse_error(event.reason)
        return
    if event.note:
        log.warning("mis-framed message from the client: %s", event.note)
    try:
        receiver.receive(event.value)
    except BrokenPipeError:  # the client is gone: nothing more to serve
        raise
    except Exception:  # a bug of ours must not end the connection
        log.exception("could not handle a message")


async def serve_stream(read: Callable[[], Awaitable[bytes]], receiver: Receiver,
                       stop: threading.Event, max_message_bytes: int = MAX_MESSAGE_BYTES,
                       reader: MessageReader | None = None) -> None:
    """Deliver the messages `read` returns the bytes of, until end of input or `stop`
    (`reader`: one that already holds bytes read before, such as the TCP handshake's)."""
    reader = reader or MessageReader(max_message_bytes)
    for event in reader:  # what arrived with the handshake
        deliver(receiver, event)
        await asyncio.sleep(0)
    while not stop.is_set():
        try:
            data = await read()
        except (OSError, ValueError) as err:
            log.error("cannot read from the client (%s); exiting", err)
            return
        if not data:
            if reader.buffered:
                log.warning("end of input inside a message (%d bytes dropped)",
                            reader.buffered)
            log.info("end of input: the client closed the connection")
            return
        reader.feed(data)
        for event in reader:
            deliver(receiver, event)
            await asyncio.sleep(0)  # let the handlers this message started run
            if stop.is_set():
                return


def serve_stdio(receiver: Receiver, stdin: BinaryIO, stdout: BinaryIO,
                stop: threading.Event) -> int:
    """Serve over stdio until the input ends or `exit`; the exit code."""
    receiver.set_writer(StdoutWriter(stdout))
    return _run(serve_stream(_StdinPump(stdin).read, receiver, stop))


TOKEN_OPTION = "memlensToken"  # in `initialize`'s initializationOptions
HANDSHAKE_SECONDS = 10.0  # a connection that has not proved itself by then is closed
HANDSHAKE_BYTES = 1024 * 1024  # nor may it send more than this before it has
NOT_AUTHORISED = -32600  # InvalidRequest: the only answer a client without the token gets


@dataclass(frozen=True)
class TcpOptions:
    """How `memlens serve --tcp` listens and whom it serves."""

    host: str
    port: int
    token: str  # the per-start secret, from a file only the user can read
    token_file: str  # where it is (named in the refusal, never the token itself)
    on_listening: Callable[[str, int], None]  # (host, port actually bound)
    on_owner: Callable[[], None]  # a client proved it holds the token


def _token_of(value: Any) -> str | None:
    if not (isinstance(value, dict) and value.get("method") == "initialize"):
        return None
    params = value.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    token = options.get(TOKEN_OPTION) if isinstance(options, dict) else None
    return token if isinstance(token, str) else None


def _without_token(value: dict[str, Any]) -> dict[str, Any]:
    """The `initialize` request with the token taken out (it never reaches a handler or a
    log)."""
    params = dict(value["params"])
    options = {k: v for k, v in params["initializationOptions"].items() if k != TOKEN_OPTION}
    params["initializationOptions"] = options
    return {**value, "params": params}


def _frame(value: Any) -> bytes:
    body = json.dumps(value).encode("utf-8")
    return f"Content-Length: {len(body)}\r\n\r\n".encode("ascii") + body


async def _handshake(stream: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     options: TcpOptions) -> tuple[MessageReader, Received] | None:
    """The connection's first message, when it is `initialize` carrying the token; otherwise
    the client is answered one clear error and None (the caller closes the connection).
    Nothing the client sends before that reaches the server."""
    reader = MessageReader(HANDSHAKE_BYTES)
    received = 0
    deadline = asyncio.get_running_loop().time() + HANDSHAKE_SECONDS
    first: Received | None = None
    while first is None:
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0 or received > HANDSHAKE_BYTES:
            log.warning("a TCP client sent no initialize with the token: closed")
            return None
        try:
            data = await asyncio.wait_for(stream.read(READ_CHUNK), remaining)
        except (TimeoutError, OSError, ValueError):
            return None
        if not data:
            return None
        received += len(data)
        reader.feed(data)
        for event in reader:
            if isinstance(event, Received):
                first = event
                break
            log.warning("before the handshake, from a TCP client: %s", event.reason)
    token = _token_of(first.value)
    if token is not None and hmac.compare_digest(token.encode("utf-8"),
                                                 options.token.encode("utf-8")):
        reader.max_message_bytes = MAX_MESSAGE_BYTES  # proven: the usual limit from now on
        return reader, Received(_without_token(first.value), first.note)
    request_id = first.value.get("id") if isinstance(first.value, dict) else None
    message = (f"memlens serve --tcp: not authorised. The first message must be initialize "
               f"with initializationOptions.{TOKEN_OPTION} set to the token in "
               f"{options.token_file} (readable by its owner only)")
    log.warning("a TCP client without the token was refused")
    with contextlib.suppress(OSError, ConnectionError):
        writer.write(_frame({"jsonrpc": "2.0", "id": request_id,
                             "error": {"code": NOT_AUTHORISED, "message": message}}))
        await writer.drain()
    return None


def serve_tcp(receiver: Receiver, options: TcpOptions, stop: threading.Event) -> int:
    """Serve the first client to connect to HOST:PORT that proves it holds the token (its
    `initialize` carries it), with the same framing, until it goes. Every other connection is
    answered one error and closed; none of its bytes reaches the server."""

    async def main() -> None:
        done = asyncio.Event()
        clients: list[asyncio.StreamWriter] = []

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                             ) -> None:
            if clients:
                writer.close()  # one client: the protocol has one writer
                return
            shaken = await _handshake(reader, writer, options)
            if shaken is None or clients:
                writer.close()
                return
            clients.append(writer)
            options.on_owner()
            receiver.set_writer(writer)
            messages, first = shaken
            deliver(receiver, first)
            try:
                await serve_stream(lambda: reader.read(READ_CHUNK), receiver, stop,
                                   reader=messages)
            finally:
                done.set()

        server = await asyncio.start_server(connection, options.host, options.port)
        bound = server.sockets[0].getsockname()
        log.info("serving on %s", ", ".join(str(s.getsockname()) for s in server.sockets))
        options.on_listening(str(bound[0]), int(bound[1]))
        async with server:
            await done.wait()

    return _run(main())


def _run(main: Coroutine[Any, Any, None]) -> int:
    """Run the server's loop; the exit code LSP asks for (0 after `shutdown`, else 1)."""
    try:
        asyncio.run(main)
    except SystemExit as exit_:  # pygls's `exit` handler
        return exit_.code if isinstance(exit_.code, int) else 0
    except BrokenPipeError:
        log.error("the connection to the client is lost; exiting")
    except KeyboardInterrupt:
        pass
    return 0
