"""Issue 23 over the language server: hostile frontmatter never stops the index (findings 1
and 2, over stdio with pytest-lsp), and `memlens serve --tcp` serves only its owner (finding 5,
over real TCP sockets, with the chat pointed at the fake Gemini server, which records every
request and the key that came with it).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from ..conftest import build_tree
from ..fake_gemini import FakeGemini, function_call, text
from .conftest import SERVE, plain, uri

KEY = "AIzaTCPOWNERKEY-0123456789abcdefghijklmnop"
SECRET = "the owner's private notes: s3cr3t-0xC0FFEE"
DEEP = 600
READY_SECONDS = 60.0

CLEAN = ClientServerConfig(
    server_command=SERVE,
    server_env={**{k: v for k, v in os.environ.items() if not k.startswith("GEMINI_")},
                "MEMLENS_LOG_LEVEL": "WARNING"})


# ------------------------------------------------- findings 1 and 2: the index gets ready


@pytest_lsp.fixture(config=CLEAN)
async def deep_client(lsp_client: LanguageClient, workspace: Path
                      ) -> AsyncIterator[LanguageClient]:
    build_tree(workspace, {
        ".claude/rules/deep.md": "---\npaths: " + "[" * DEEP + "]" * DEEP + "\n---\nLint.\n",
        ".gemini/skills/deep/SKILL.md": "---\nname: deep\ndescription: " + "[" * DEEP
                                        + "]" * DEEP + "\n---\nBody.\n",
        "CLAUDE.md": "Claude rules.\n",
    })
    ready: list[Any] = []

    @lsp_client.feature("memlens/ready")
    def on_ready(params: Any) -> None:
        ready.append(plain(params))

    # The server registers its file watchers (as with VS Code); answered, not refused.
    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        return None

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        workspace_folders=[types.WorkspaceFolder(uri=uri(workspace), name="ws")],
        initialization_options={"memlens": {"home": str(workspace / "home"), "trusted": True,
                                            "agents": ["gemini@0.44.0", "claude@2.1.332"]}}))
    deadline = time.monotonic() + READY_SECONDS
    while not ready:
        assert time.monotonic() < deadline, "memlens/ready never came: the index never finished"
        await asyncio.sleep(0.05)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_deep_frontmatter_never_stops_the_first_index(deep_client: LanguageClient,
                                                            workspace: Path) -> None:
    shown = plain(await deep_client.protocol.send_request_async(
        "memlens/show", {"uri": uri(workspace / "CLAUDE.md")}))
    assert isinstance(shown, dict)
    report = await deep_client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    codes = {str(d.code) for item in report.items
             for d in getattr(item, "items", [])}
    assert {"skill-invalid-yaml", "frontmatter-unreadable"} <= codes, codes


# ------------------------------------------------- finding 5: the TCP transport


def frame(value: Any) -> bytes:
    body = json.dumps(value).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawTcp:
    """A JSON-RPC client on a raw socket: what an attacker on the same machine can write."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.buffer = b""
        self.next_id = 0

    def send(self, method: str, params: Any, *, notify: bool = False) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.sock.sendall(frame(message))
        return None if notify else self.next_id

    def reply(self, request_id: int | None) -> dict[str, Any] | None:
        """The answer to `request_id` (server requests and notifications skipped); None when
        the server closed the connection first."""
        while True:
            header_end = self.buffer.find(b"\r\n\r\n")
            if header_end >= 0:
                headers = self.buffer[:header_end].decode("ascii").lower()
                length = int(headers.split("content-length:")[1].split("\r\n")[0])
                if len(self.buffer) >= header_end + 4 + length:
                    body = self.buffer[header_end + 4:header_end + 4 + length]
                    self.buffer = self.buffer[header_end + 4 + length:]
                    value = json.loads(body)
                    if "method" in value and "id" in value:  # a request from the server
                        self.sock.sendall(frame({"jsonrpc": "2.0", "id": value["id"],
                                                 "result": None}))
                        continue
                    if value.get("id") == request_id and "method" not in value:
                        return value  # type: ignore[no-any-return]
                    continue
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                return None
            if not chunk:
                return None
            self.buffer += chunk

    def close(self) -> None:
        self.sock.close()


def listening(port: int) -> bool:
    """Whether a socket listens on 127.0.0.1:`port` (Linux's /proc/net/tcp, state 0A)."""
    wanted = f"0100007F:{port:04X}"
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return any(line.split()[1] == wanted and line.split()[3] == "0A" for line in lines)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini() as server:
        yield server


@pytest.fixture
def owner_home(tmp_path: Path) -> Path:
    home = Path(os.path.realpath(tmp_path)) / "owner"
    build_tree(home, {".gemini/GEMINI.md": "Global.\n", "notes/secret.md": SECRET + "\n",
                      "repo/.git": None, "repo/GEMINI.md": "Project.\n"})
    return home


class TcpServer:
    """`memlens serve --tcp 127.0.0.1:PORT`, started as its owner would (the owner's key in
    its environment); XDG_RUNTIME_DIR names where its token file goes."""

    def __init__(self, home: Path, *extra: str) -> None:
        self.port = free_port()
        self.runtime = home / "runtime"
        self.runtime.mkdir(mode=0o700, exist_ok=True)
        self.log = (home / "serve.log").open("wb")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "GOOGLE_"))}
        env.update({"GEMINI_API_KEY": KEY, "HOME": str(home), "GEMINI_CLI_HOME": str(home),
                    "XDG_RUNTIME_DIR": str(self.runtime), "MEMLENS_LOG_LEVEL": "WARNING",
                    "MEMLENS_RETRY_MAX_ATTEMPTS": "1"})
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memlens", "serve", "--tcp", f"127.0.0.1:{self.port}",
             *extra], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self.log)
        deadline = time.monotonic() + 30
        while not listening(self.port):  # never by connecting: the first client may be it
            assert self.process.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the TCP server never listened"
            time.sleep(0.1)

    def token_file(self) -> Path:
        return self.runtime / "memlens" / f"serve-{self.process.pid}.json"

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def hostile_initialize(client: RawTcp, repo: Path, fake: FakeGemini,
                       **options: Any) -> dict[str, Any] | None:
    request = client.send("initialize", {
        "processId": None, "capabilities": {},
        "workspaceFolders": [{"uri": uri(repo), "name": "repo"}],
        "initializationOptions": {"memlens": {"trusted": True, "home": str(repo.parent),
                                              "chat": {"baseUrl": fake.base_url,
                                                       "approvalMode": "autoEdit"}},
                                  **options}})
    return client.reply(request)


def test_a_client_without_the_token_gets_one_error_and_never_the_key(
        owner_home: Path, fake: FakeGemini) -> None:
    """The issue's attack: connect first, claim trust, point the chat at your own endpoint in
    autoEdit, ask it to read the owner's files. Refused before anything is read."""
    fake.enqueue(function_call("read_file", {"path": str(owner_home / "notes" / "secret.md")}),
                 text("done"))
    server = TcpServer(owner_home)
    attacker = RawTcp(server.port)
    try:
        answer = hostile_initialize(attacker, owner_home / "repo", fake)
        if answer is not None and "result" in answer:  # the old server served anyone: go on
            attacker.send("initialized", {}, notify=True)
            attacker.reply(attacker.send("memlens/refresh", {}))
            attacker.reply(attacker.send("memlens/chat/send",
                                         {"sessionId": "s1", "text": "read the notes"}))
        # the key never left for the attacker's endpoint, no file was read through the chat
        assert [r.api_key_sent for r in fake.requests] == []
        assert answer is not None and "error" in answer, answer
        assert "not authorised" in answer["error"]["message"]
        assert "memlensToken" in answer["error"]["message"]
        assert str(server.token_file()) in answer["error"]["message"]
        assert attacker.reply(None) is None  # and the connection is closed
    finally:
        attacker.close()
        server.close()
    assert KEY not in (owner_home / "serve.log").read_text()


def test_the_owner_with_the_token_is_served_and_no_second_client_is(
        owner_home: Path, fake: FakeGemini) -> None:
    server = TcpServer(owner_home)
    owner = intruder = None
    try:
        token_file = server.token_file()
        assert stat_mode(token_file) == 0o600 and stat_mode(token_file.parent) == 0o700
        info = json.loads(token_file.read_text())
        assert info["port"] == server.port and info["pid"] == server.process.pid
        owner = RawTcp(server.port)
        answer = hostile_initialize(owner, owner_home / "repo", fake,
                                    memlensToken=info["token"])
        assert answer is not None and "capabilities" in answer["result"]
        owner.send("initialized", {}, notify=True)
        status = owner.reply(owner.send("memlens/chat/status", {}))
        assert status is not None and status["result"]["baseUrl"] == fake.base_url
        intruder = RawTcp(server.port)  # the slot is taken: closed at once
        assert intruder.reply(intruder.send("initialize", {"capabilities": {}})) is None
        assert info["token"] not in (owner_home / "serve.log").read_text()
    finally:
        for client in (owner, intruder):
            if client is not None:
                client.close()
        server.close()
    assert not server.token_file().exists()  # removed when the server ends (SIGTERM too)


def test_a_wrong_token_and_garbage_first_are_refused_too(owner_home: Path,
                                                         fake: FakeGemini) -> None:
    server = TcpServer(owner_home)
    try:
        wrong = RawTcp(server.port)
        answer = hostile_initialize(wrong, owner_home / "repo", fake, memlensToken="guess")
        assert answer is not None and "not authorised" in answer["error"]["message"]
        wrong.close()
        noisy = RawTcp(server.port)
        noisy.sock.sendall(b"Content-Length: 1000000000000\r\n\r\n{}garbage\r\n")
        answer = noisy.reply(noisy.send("memlens/setApiKey", {"key": "x" * 20}))
        assert answer is not None and "not authorised" in answer["error"]["message"]
        noisy.close()
        assert fake.requests == []
    finally:
        server.close()


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1"])
def test_serve_tcp_listens_on_loopback_only_unless_asked(tmp_path: Path, host: str) -> None:
    shown = f"[{host}]" if ":" in host else host
    proc = subprocess.run([sys.executable, "-m", "memlens", "serve", "--tcp",
                           f"{shown}:{free_port()}"], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL,
                          env={**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)})
    assert proc.returncode == 2
    assert "not a loopback address" in proc.stderr and "--allow-remote" in proc.stderr


def test_an_unproven_client_can_never_set_the_endpoint_or_the_key() -> None:
    """The server's own gate, below the transport: until the client has proved it is the
    owner, chat settings are dropped and the key is refused."""
    from memlens.lsp.state import MemlensServer

    server = MemlensServer()
    server.owner_proven = False
    server.configure({"trusted": True, "chat": {"baseUrl": "http://evil"},
                      "chat.approvalMode": "autoEdit", "agents": ["gemini"]})
    assert "chat" not in server.editor.window and "chat.approvalMode" not in server.editor.window
    assert server.editor.window["agents"] == ["gemini"]
    server.owner_proven = True
    server.configure({"chat": {"baseUrl": "http://mine"}})
    assert server.editor.window["chat"] == {"baseUrl": "http://mine"}
