"""Start-up progress and exiting when the parent process dies."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from .conftest import uri


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.timeout(60)
def test_server_exits_when_its_parent_dies(workspace: Path) -> None:
    parent = subprocess.Popen(["sleep", "60"])
    server = subprocess.Popen([sys.executable, "-m", "memlens", "serve"],
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
