"""Start-up progress and exiting when the parent process dies."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from .conftest import SERVE, uri


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.timeout(60)
def test_server_exits_when_its_parent_dies(workspace: Path) -> None:
    parent = subprocess.Popen(["sleep", "60"])
    server = subprocess.Popen(SERVE,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        assert server.stdin is not None
        server.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": parent.pid, "rootUri": uri(workspace), "capabilities": {}}}))
        server.stdin.flush()
        time.sleep(1.0)
        assert server.poll() is None  # alive while the parent lives
        parent.kill()
        parent.wait()
        # stdin stays open: only the parent watch can end the server.
        server.wait(timeout=15)
        assert server.returncode == 0
    finally:
        parent.kill()
        server.kill()


@pytest.mark.asyncio
async def test_indexing_reports_progress(client: LanguageClient) -> None:
    ends = [p for reports in client.progress_reports.values() for p in reports
            if getattr(p, "kind", None) == "end"]
    assert len(ends) == 1
    assert ends[0].message == "5 memory files indexed"


def _read_frame(stream: Any) -> dict[str, Any]:
    length = 0
    while (line := stream.readline().strip()):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return dict(json.loads(stream.read(length)))


@pytest.mark.timeout(60)
def test_ready_then_open_files_diagnostics(workspace: Path) -> None:
    """After `initialized` the server builds its index, sends memlens/ready, then pushes the
    diagnostics of the files already open (before it asks the client to watch files)."""
    server = subprocess.Popen(SERVE,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        assert server.stdin is not None and server.stdout is not None
        gemini = workspace / "GEMINI.md"
        gemini.write_text("# Root\n\n@./missing.md\n")
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": None, "rootUri": uri(workspace), "capabilities": {}}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
                "uri": uri(gemini), "languageId": "markdown", "version": 1,
                "text": gemini.read_text()}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        ):
            server.stdin.write(_frame(message))
        server.stdin.flush()
        ready = False
        while True:
            frame = _read_frame(server.stdout)
            method = frame.get("method")
            if method == "memlens/ready":
                assert frame["params"]["memoryFiles"] >= 1
                assert frame["params"]["indexSeconds"] >= 0
                ready = True
            elif method == "textDocument/publishDiagnostics" and ready:
                assert frame["params"]["uri"] == uri(gemini)
                codes = [d.get("code") for d in frame["params"]["diagnostics"]]
                assert "import-not-found" in codes
                break
            elif method == "client/registerCapability":
                assert ready, "the server asked the client for watchers before it was ready"
                raise AssertionError("no diagnostics pushed between memlens/ready and "
                                     "the watcher registration")
    finally:
        server.kill()
        server.wait()
