"""The command the LSP tests start (conftest.py `memlens_command`, through the fork server)
behaves as `python -m memlens` does: output, exit status, working folder, environment, signals,
and no process left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from . import fork_server as fork
from .conftest import memlens_command, uri

REAL = [sys.executable, "-m", "memlens"]
forking = pytest.mark.skipif(memlens_command() == REAL, reason="the real command runs here")


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("args", [["--version"], ["nonsense"], ["show"], ["list", "--json"]],
                         ids=" ".join)
def test_same_output_and_status_as_python_m_memlens(workspace: Path, args: list[str]) -> None:
    """Run in the workspace with a HOME of its own: what both print and return is the same,
    so the working folder, the environment and the arguments reached the child."""
    env = {**os.environ, "HOME": str(workspace / "home")}
    forked = _run(memlens_command(*args), workspace, env)
    assert forked == _run([*REAL, *args], workspace, env)
    assert forked[0] == (2 if args == ["nonsense"] else 0)


def _initialized_server(command: list[str], workspace: Path) -> subprocess.Popen[bytes]:
    """`memlens serve` started by `command`, once it answered `initialize` (so it runs)."""
    server = subprocess.Popen([*command, "serve"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": uri(workspace), "capabilities": {}}}).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.stdin.flush()
    while server.stdout.readline().strip():
        pass  # the headers of the answer
    return server


@pytest.mark.timeout(90)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=lambda s: s.name)
def test_a_signal_ends_the_server_as_it_ends_the_real_one(workspace: Path,
                                                          signum: signal.Signals) -> None:
    """SIGTERM is forwarded; SIGKILL (nothing can forward it) kills the child too. Either way
    the exit status is the real server's, and the server's stdout closes: no process holds it."""
    ends = []
    for command in (REAL, memlens_command()):
        server = _initialized_server(command, workspace)
        try:
            server.send_signal(signum)
            assert server.wait(timeout=30) == -signum
            assert server.stdout is not None
            server.stdout.read()  # returns at EOF: every writer has ended
            ends.append(server.returncode)
        finally:
            server.kill()
            server.wait()
            for stream in (server.stdin, server.stdout):
                if stream is not None:
                    stream.close()
    assert ends == [-signum, -signum]


@forking
def test_the_preloaded_imports_read_only_the_interpreters_variables(
        fork_server: dict[str, Any]) -> None:
    """No module the server imports reads the environment at import time (what a test sets
    must reach the child), beyond the interpreter's own PYTHON* variables."""
    assert all(key.startswith("PYTHON") for key in fork_server["read_at_import"]), fork_server


def test_an_environment_that_differs_where_it_was_read_runs_the_real_command() -> None:
    same = dict(os.environ)
    assert fork.refusal(same, {"HOME"}) is None
    assert fork.refusal({**same, "HOME": "/elsewhere"}, set()) is None
    assert fork.refusal({**same, "HOME": "/elsewhere"}, {"HOME"}) == \
        "HOME differs from the fork server's"
    assert fork.refusal({**same, "PYTHONWARNINGS": "error"}, set()) == \
        "PYTHONWARNINGS differs from the fork server's"
    assert fork.refusal(same, {"*"}) == "an import listed the whole environment"
