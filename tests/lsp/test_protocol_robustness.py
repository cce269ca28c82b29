"""The real server over raw stdio bytes (docs/security.md "The language server's connection"):
mis-framed messages, absurd lengths, malformed requests and invalid positions.

Every exchange has a deadline (`READ_TIMEOUT`): a server that goes deaf fails the test rather
than hanging the suite. Positions: a wrong shape (negative, not an integer, missing) or a line
past the end of a document the server can read is InvalidParams (-32602); a character past the
end of its line counts as the line's end, as the LSP specification says.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import SERVE, uri

READ_TIMEOUT = 15.0
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_NOT_INITIALIZED = -32002

Message = dict[str, Any]


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def encode(message: Message) -> bytes:
    return json.dumps(message).encode()


class RawServer:
    """`memlens serve` as a subprocess; bytes in, strictly framed JSON messages out."""

    def __init__(self, tmp: Path) -> None:
        self.stderr_path = tmp / "server-stderr.log"
        self._stderr = self.stderr_path.open("wb")
        env = {**os.environ, "MEMLENS_LOG_LEVEL": "WARNING"}
        self.process = subprocess.Popen(SERVE,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr, env=env)
        self.messages: queue.Queue[Message | None] = queue.Queue()
        self.notifications: list[Message] = []
        self._next_id = 1000
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.process.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            assert length is not None, "the server sent a header without Content-Length"
            self.messages.put(json.loads(out.read(length)))

    # --- sending ----------------------------------------------------------------------
    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Message) -> None:
        self.send_bytes(frame(encode(message)))

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request_message(self, method: str, params: Any = None) -> tuple[int, Message]:
        msg_id = self.new_id()
        message: Message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        return msg_id, message

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # --- receiving --------------------------------------------------------------------
    def responses(self, ids: list[Any], timeout: float = READ_TIMEOUT) -> dict[Any, Message]:
        """Wait for one response to each id (None: a response with a null id)."""
        wanted, found = list(ids), {}
        deadline = time.monotonic() + timeout
        while wanted:
            remaining = deadline - time.monotonic()
            try:
                message = self.messages.get(timeout=max(remaining, 0.01))
            except queue.Empty:
                raise AssertionError(f"no response to {wanted} within {timeout:.0f} s; "
                                     f"server log:\n{self.log()[-3000:]}") from None
            if message is None:
                raise AssertionError(f"the server closed its output (exit "
                                     f"{self.process.poll()}); log:\n{self.log()[-3000:]}")
            if "method" in message:
                if "id" in message:  # a request from the server: answer it, we have no opinion
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                else:
                    self.notifications.append(message)
                continue
            if message.get("id") in wanted:
                wanted.remove(message["id"])
                found[message["id"]] = message
        return found

    def call(self, method: str, params: Any = None, timeout: float = READ_TIMEOUT) -> Message:
        msg_id, message = self.request_message(method, params)
        self.send(message)
        return self.responses([msg_id], timeout)[msg_id]

    def log(self) -> str:
        self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=READ_TIMEOUT)
        self._stderr.close()


def initialize(server: RawServer, workspace: Path) -> None:
    reply = server.call("initialize", {
        "processId": None, "rootUri": uri(workspace), "capabilities": {},
        "workspaceFolders": [{"uri": uri(workspace), "name": "ws"}],
        "initializationOptions": {"memlens": {"home": str(workspace / "home")}}})
    assert "result" in reply, reply
    server.notify("initialized", {})
    assert "result" in server.call("memlens/refresh", {})  # the index is built


def start(workspace: Path, tmp: Path) -> RawServer:
    server = RawServer(tmp)
    try:
        initialize(server, workspace)
    except BaseException:
        server.close()
        raise
    return server


@pytest.fixture
def raw(workspace: Path, tmp_path: Path) -> Iterator[RawServer]:
    server = start(workspace, tmp_path)
    yield server
    server.close()


def links_request(server: RawServer, workspace: Path) -> tuple[int, Message]:
    return server.request_message("textDocument/documentLink",
                                  {"textDocument": {"uri": uri(workspace / "GEMINI.md")}})


def assert_answers(server: RawServer, workspace: Path) -> None:
    """The server is alive and answering a real request correctly."""
    msg_id, message = links_request(server, workspace)
    server.send(message)
    reply = server.responses([msg_id])[msg_id]
    assert len(reply["result"]) == 1, reply
    assert server.process.poll() is None


# --- (a) framing --------------------------------------------------------------------------
def _body(server: RawServer, workspace: Path) -> tuple[int, bytes]:
    msg_id, message = links_request(server, workspace)
    return msg_id, encode(message)


def _length_header(value: bytes) -> Callable[[bytes], bytes]:
    return lambda body: b"Content-Length: " + value + b"\r\n\r\n" + body


# Each case turns a valid request body into hostile bytes. The valid request that follows
# must be answered whatever the server made of them.
MISFRAMED: dict[str, Callable[[bytes], bytes]] = {
    "garbage_header_line": lambda body: b"Garbage: \x00\xff\r\nnot a header\r\n" + frame(body),
    "lowercase_header_name": lambda body: b"content-length: %d\r\n\r\n" % len(body) + body,
    "missing_content_length": lambda body: (
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body),
    "no_header_at_all": lambda body: body,
    "non_numeric_length": _length_header(b"ten"),
    "negative_length": _length_header(b"-5"),
    "five_thousand_digit_length": _length_header(b"9" * 5000),
    "zero_length": lambda body: b"Content-Length: 0\r\n\r\n",
    "body_shorter_than_declared": lambda body: (
        b"Content-Length: %d\r\n\r\n" % (len(body) + 25) + body),
    "length_overshoots_by_a_megabyte": lambda body: (
        b"Content-Length: %d\r\n\r\n" % (len(body) + 2**20) + body),
    "body_longer_than_declared": lambda body: (
        b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body),
    "no_blank_line_after_header": lambda body: b"Content-Length: %d\r\n" % len(body) + body,
    "invalid_json_body": lambda body: frame(b'{"jsonrpc": "2.0", "id": 1, "method": '),
    "invalid_utf8_body": lambda body: frame(b'{"jsonrpc": "2.0", "method": "\xff\xfe"}'),
    "deeply_nested_json": lambda body: frame(b"[" * 100_000 + b"]" * 100_000),
    "overlong_header_line": lambda body: b"X" * 300_000,
    "binary_garbage": lambda body: bytes(range(256)) * 64,
}


@pytest.mark.parametrize("case", sorted(MISFRAMED))
def test_misframed_message_then_valid_request_is_answered(raw: RawServer, workspace: Path,
                                                          case: str) -> None:
    _, body = _body(raw, workspace)
    raw.send_bytes(MISFRAMED[case](body))
    assert_answers(raw, workspace)
    # Twice: the server is resynchronised, not lucky once.
    assert_answers(raw, workspace)


def test_lowercase_header_name_is_accepted(raw: RawServer, workspace: Path) -> None:
    """Header names are case-insensitive, as in HTTP: the message itself is answered."""
    msg_id, body = _body(raw, workspace)
    raw.send_bytes(b"content-length: %d\r\ncontent-type: application/vscode-jsonrpc\r\n\r\n"
                   % len(body) + body)
    assert len(raw.responses([msg_id])[msg_id]["result"]) == 1


def test_body_shorter_than_declared_is_still_answered(raw: RawServer,
                                                      workspace: Path) -> None:
    """A declared length that overshoots into the next message: both messages are answered."""
    first, body = _body(raw, workspace)
    second, message = links_request(raw, workspace)
    raw.send_bytes(MISFRAMED["body_shorter_than_declared"](body) + frame(encode(message)))
    replies = raw.responses([first, second])
    assert all(len(r["result"]) == 1 for r in replies.values())
    assert "declared" in raw.log()


def test_invalid_json_gets_a_parse_error(raw: RawServer, workspace: Path) -> None:
    raw.send_bytes(frame(b'{"jsonrpc": "2.0", "id": 7, "method": '))
    reply = raw.responses([None])[None]
    assert reply["error"]["code"] == PARSE_ERROR
    assert_answers(raw, workspace)


# --- (b) sizes ------------------------------------------------------------------------------
@pytest.mark.parametrize("length", [10**12, 64 * 1024 * 1024 + 1])
def test_absurd_content_length_is_refused(raw: RawServer, workspace: Path,
                                          length: int) -> None:
    raw.send_bytes(b"Content-Length: %d\r\n\r\n" % length + b'{"jsonrpc": "2.0"}')
    assert_answers(raw, workspace)
    log = raw.log()
    assert "MemoryError" not in log
    assert f"Content-Length {length}" in log and "limit" in log


def test_oversized_message_is_skipped_and_the_next_one_answered(raw: RawServer,
                                                                workspace: Path) -> None:
    """A real 64 MiB + 1 body is read past (never held whole), then the stream resyncs."""
    size = 64 * 1024 * 1024 + 1
    padding = b" " * (size - 2)
    raw.send_bytes(b"Content-Length: %d\r\n\r\n{" % size + padding + b"}")
    assert_answers(raw, workspace)


# --- malformed requests -----------------------------------------------------------------------
MALFORMED_REQUESTS: dict[str, tuple[Any, Any]] = {
    # name: (message, id the error response carries)
    "id_is_an_object": ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "memlens/list"}, None),
    "id_is_null": ({"jsonrpc": "2.0", "id": None, "method": "memlens/list"}, None),
    "method_is_a_number": ({"jsonrpc": "2.0", "id": 31, "method": 5}, 31),
    "no_jsonrpc_member": ({"id": 32, "method": "memlens/list"}, 32),
    "jsonrpc_1_0": ({"jsonrpc": "1.0", "id": 33, "method": "memlens/list"}, 33),
    "params_is_a_string": ({"jsonrpc": "2.0", "id": 34, "method": "textDocument/hover",
                            "params": "x"}, 34),
    "batch_array": ([{"jsonrpc": "2.0", "id": 35, "method": "memlens/list"}], None),
    "top_level_string": ("hello", None),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_REQUESTS))
def test_malformed_request_gets_an_error(raw: RawServer, workspace: Path, case: str) -> None:
    message, reply_id = MALFORMED_REQUESTS[case]
    raw.send_bytes(frame(json.dumps(message).encode()))
    reply = raw.responses([reply_id])[reply_id]
    assert reply["error"]["code"] in (INVALID_REQUEST, INVALID_PARAMS), reply
    assert_answers(raw, workspace)


def test_a_message_nested_in_params_is_data(raw: RawServer, workspace: Path) -> None:
    """pygls structures every JSON object holding "jsonrpc", nested ones too: a response-like
    object inside a command's arguments made the whole request fail unanswered."""
    reply = raw.call("workspace/executeCommand", {
        "command": "memlens.noSuchCommand", "arguments": [{"jsonrpc": "2.0", "id": 5}]})
    # The request got as far as the command lookup (an unknown command is InvalidParams).
    assert "noSuchCommand' is not defined" in reply["error"]["message"], reply
    assert_answers(raw, workspace)


# --- (c) invalid positions ------------------------------------------------------------------
POSITION_METHODS = ["textDocument/hover", "textDocument/definition",
                    "textDocument/completion", "textDocument/references"]

# GEMINI.md of the workspace has 6 lines of text and ends with a newline: lines 0..6 exist.
INVALID_POSITIONS: dict[str, Callable[[str], Message]] = {
    "negative_line": lambda doc: {"textDocument": {"uri": doc},
                                  "position": {"line": -1, "character": 0}},
    "negative_character": lambda doc: {"textDocument": {"uri": doc},
                                       "position": {"line": 0, "character": -3}},
    "line_past_end": lambda doc: {"textDocument": {"uri": doc},
                                  "position": {"line": 7, "character": 0}},
    "line_far_past_end": lambda doc: {"textDocument": {"uri": doc},
                                      "position": {"line": 2**31 - 1, "character": 0}},
    "line_above_uinteger": lambda doc: {"textDocument": {"uri": doc},
                                        "position": {"line": 2**31, "character": 0}},
    "line_is_a_string": lambda doc: {"textDocument": {"uri": doc},
                                     "position": {"line": "0", "character": 0}},
    "line_is_a_float": lambda doc: {"textDocument": {"uri": doc},
                                    "position": {"line": 1.5, "character": 0}},
    "character_is_a_bool": lambda doc: {"textDocument": {"uri": doc},
                                        "position": {"line": 0, "character": True}},
    "character_missing": lambda doc: {"textDocument": {"uri": doc}, "position": {"line": 0}},
    "position_missing": lambda doc: {"textDocument": {"uri": doc}},
    "position_null": lambda doc: {"textDocument": {"uri": doc}, "position": None},
    "position_is_a_list": lambda doc: {"textDocument": {"uri": doc}, "position": [0, 0]},
    "text_document_missing": lambda doc: {"position": {"line": 0, "character": 0}},
    "uri_is_a_number": lambda doc: {"textDocument": {"uri": 5},
                                    "position": {"line": 0, "character": 0}},
    "params_missing": lambda doc: {},
}


def _with_context(method: str, params: Message) -> Message:
    if method == "textDocument/references" and params:
        return {**params, "context": {"includeDeclaration": True}}
    return params


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RawServer, Path]]:
    """One server for the position cases (each case is one request and its answer)."""
    from ..conftest import build_tree
    from .conftest import WORKSPACE

    tmp = Path(os.path.realpath(tmp_path_factory.mktemp("positions")))
    workspace = tmp / "ws"
    workspace.mkdir()
    build_tree(workspace, WORKSPACE)
    server = start(workspace, tmp)
    yield server, workspace
    server.close()


@pytest.mark.parametrize("case", sorted(INVALID_POSITIONS))
def test_invalid_position_is_invalid_params(session: tuple[RawServer, Path], case: str) -> None:
    server, workspace = session
    doc = uri(workspace / "GEMINI.md")
    sent = {}
    for method in POSITION_METHODS:
        msg_id, message = server.request_message(
            method, _with_context(method, INVALID_POSITIONS[case](doc)))
        if case == "params_missing":
            message.pop("params")
        server.send(message)
        sent[msg_id] = method
    replies = server.responses(list(sent))
    for msg_id, method in sent.items():
        error = replies[msg_id].get("error")
        assert error is not None, (method, replies[msg_id])
        assert error["code"] == INVALID_PARAMS, (method, error)
        assert method in error["message"], error
    assert_answers(server, workspace)


def test_line_past_end_of_an_open_buffer(session: tuple[RawServer, Path]) -> None:
    """The client's buffer, not the file on disk, says where a document ends."""
    server, workspace = session
    doc = uri(workspace / "docs" / "naming.md")
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": doc, "languageId": "markdown", "version": 1, "text": "one\r\ntwo\rthree\n"}})
    try:
        # \r\n, \r and \n all end a line: lines 0..3 exist.
        ok = server.call("textDocument/hover",
                         {"textDocument": {"uri": doc}, "position": {"line": 3, "character": 0}})
        assert "result" in ok, ok
        bad = server.call("textDocument/hover",
                          {"textDocument": {"uri": doc}, "position": {"line": 4, "character": 0}})
        assert bad["error"]["code"] == INVALID_PARAMS
        assert "line 4" in bad["error"]["message"] and "4 lines" in bad["error"]["message"]
    finally:
        server.notify("textDocument/didClose", {"textDocument": {"uri": doc}})


def test_character_past_line_end_counts_as_line_end(session: tuple[RawServer, Path]) -> None:
    """LSP: a character beyond the line's length defaults back to the line length."""
    server, workspace = session
    doc = uri(workspace / "GEMINI.md")
    at_end = server.call("textDocument/definition",
                         {"textDocument": {"uri": doc}, "position": {"line": 2, "character": 999}})
    assert at_end["result"]["uri"] == uri(workspace / "docs" / "style.md")
    last_line = server.call("textDocument/hover",
                            {"textDocument": {"uri": doc},
                             "position": {"line": 6, "character": 10}})
    assert "result" in last_line


def test_code_action_range_is_checked(session: tuple[RawServer, Path]) -> None:
    server, workspace = session
    doc = uri(workspace / "GEMINI.md")

    def action(start: Message, end: Message) -> Message:
        return server.call("textDocument/codeAction", {
            "textDocument": {"uri": doc}, "range": {"start": start, "end": end},
            "context": {"diagnostics": []}})

    assert "result" in action({"line": 2, "character": 0}, {"line": 2, "character": 5})
    for start, end in [({"line": 2, "character": 0}, {"line": 70, "character": 0}),
                       ({"line": 3, "character": 0}, {"line": 2, "character": 0}),
                       ({"line": -2, "character": 0}, {"line": 2, "character": 0})]:
        reply = action(start, end)
        assert reply.get("error", {}).get("code") == INVALID_PARAMS, (start, end, reply)


def test_position_in_a_document_the_server_cannot_read(session: tuple[RawServer, Path]
                                                       ) -> None:
    """No text to check against: the shape is checked, the answer is empty, not an error."""
    server, workspace = session
    doc = uri(workspace / "nowhere" / "never.md")
    reply = server.call("textDocument/hover",
                        {"textDocument": {"uri": doc}, "position": {"line": 40, "character": 2}})
    assert reply == {"jsonrpc": "2.0", "id": reply["id"], "result": None}


# --- unknown methods, unknown documents, lifecycle -------------------------------------------
def test_unknown_methods_and_documents(raw: RawServer, workspace: Path) -> None:
    reply = raw.call("memlens/doesNotExist", {"x": 1})
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    # A method the server does not offer, with params it could not even read: still unknown.
    reply = raw.call("textDocument/documentHighlight", {"position": "nonsense"})
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    never = uri(workspace / "never-opened.md")
    raw.notify("memlens/unknownNotification", {"a": [1, 2]})
    raw.notify("$/cancelRequest", {"id": 123456})
    raw.notify("textDocument/didChange", {
        "textDocument": {"uri": never, "version": 4},
        "contentChanges": [{"range": {"start": {"line": 90, "character": 1},
                                      "end": {"line": 95, "character": 0}}, "text": "x"}]})
    raw.notify("textDocument/didChange", {
        "textDocument": {"uri": never, "version": 5},
        "contentChanges": [{"range": {"start": {"line": -1, "character": 0},
                                      "end": {"line": 0, "character": 0}}, "text": "x"}]})
    raw.notify("textDocument/didSave", {"textDocument": {"uri": never}})
    raw.notify("textDocument/didClose", {"textDocument": {"uri": never}})
    raw.notify("textDocument/didClose", {"textDocument": "not an object"})
    assert_answers(raw, workspace)


def test_request_after_shutdown_is_invalid_request(raw: RawServer, workspace: Path) -> None:
    assert raw.call("shutdown")["result"] is None
    msg_id, message = links_request(raw, workspace)
    raw.send(message)
    assert raw.responses([msg_id])[msg_id]["error"]["code"] == INVALID_REQUEST
    raw.notify("exit", None)
    assert raw.process.wait(timeout=READ_TIMEOUT) == 0


def test_exit_without_shutdown_exits_with_1(raw: RawServer) -> None:
    raw.notify("exit", None)
    assert raw.process.wait(timeout=READ_TIMEOUT) == 1


def test_request_before_initialize_is_server_not_initialized(tmp_path: Path,
                                                             workspace: Path) -> None:
    server = RawServer(tmp_path)
    try:
        reply = server.call("textDocument/hover", {
            "textDocument": {"uri": uri(workspace / "GEMINI.md")},
            "position": {"line": 0, "character": 0}})
        assert reply["error"]["code"] == SERVER_NOT_INITIALIZED
        initialize(server, workspace)
        assert_answers(server, workspace)
    finally:
        server.close()


def test_exits_when_stdin_closes(raw: RawServer, workspace: Path) -> None:
    assert_answers(raw, workspace)
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    assert raw.process.wait(timeout=READ_TIMEOUT) == 0


def test_tcp_transport_has_the_same_framing(workspace: Path, tmp_path: Path) -> None:
    """`memlens serve --tcp`: an absurd length and garbage, then a request that is answered."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with (tmp_path / "tcp-server.log").open("wb") as log:
        token_file = tmp_path / "token.json"
        server = subprocess.Popen([sys.executable, "-m", "memlens", "serve", "--tcp",
                                   f"127.0.0.1:{port}", "--token-file", str(token_file)],
                                  stderr=log,
                                  env={**os.environ, "MEMLENS_LOG_LEVEL": "WARNING"})
        try:
            deadline = time.monotonic() + READ_TIMEOUT
            while True:
                try:
                    client = socket.create_connection(("127.0.0.1", port), timeout=1)
                    break
                except OSError:
                    assert time.monotonic() < deadline, "the TCP server never listened"
                    time.sleep(0.1)
            token = json.loads(token_file.read_text())["token"]  # the owner's (issue 23)
            with client:
                client.settimeout(READ_TIMEOUT)
                client.sendall(b"Content-Length: 1000000000000\r\n\r\n{}" + b"garbage\r\n"
                               + frame(encode({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                               "params": {"capabilities": {},
                                                          "initializationOptions": {
                                                              "memlensToken": token}}})))
                received = b""
                while b'"id": 1' not in received:
                    chunk = client.recv(65536)
                    assert chunk, "the server closed the connection"
                    received += chunk
                assert server.poll() is None
            # The client is gone: so is the server.
            assert server.wait(timeout=READ_TIMEOUT) == 0
        finally:
            server.kill()
            server.wait(timeout=READ_TIMEOUT)
