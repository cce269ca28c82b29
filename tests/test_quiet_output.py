"""The server's stderr is the editor's output channel (issue 13): at the default log level it
carries Memory Lens's own warnings only, not pygls's protocol chatter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _serve(workspace: Path, home: Path, level: str | None) -> str:
    messages: list[dict[str, object]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": workspace.as_uri(), "capabilities": {},
            "initializationOptions": {"memlens": {"trusted": True, "home": str(home)}}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        # What VS Code does all the time: cancel a request already answered, answer late.
        {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 999}},
        {"jsonrpc": "2.0", "id": 998, "result": None},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    env = {k: v for k, v in os.environ.items() if k != "MEMLENS_LOG_LEVEL"}
    if level is not None:
        env["MEMLENS_LOG_LEVEL"] = level
    run = subprocess.run([sys.executable, "-m", "memlens", "serve"],
                         input=b"".join(_frame(m) for m in messages), capture_output=True,
                         env=env, timeout=60, check=False)
    return run.stderr.decode()


def test_no_pygls_warnings_at_the_default_level(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "GEMINI.md").write_text("# Project\n")
    assert "pygls" not in _serve(workspace, home, None)
    # Asked for, they are still there.
    assert "Cancel notification for unknown message id" in _serve(workspace, home, "WARNING")
