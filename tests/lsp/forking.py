"""One fork server (fork_server.py) for a test session or module, and the command that goes
through it (fork_launch.py): described in tests/lsp/conftest.py's docstring."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
# pidfds and descriptor passing: Linux; MEMLENS_TEST_REAL_SERVER=1 runs the real command
AVAILABLE = (sys.platform == "linux" and hasattr(os, "pidfd_open")
             and hasattr(socket, "send_fds") and os.environ.get("MEMLENS_TEST_REAL_SERVER") != "1")


class Forking:
    """A fork server that preloads what `python -m memlens COMMAND` imports, started with the
    environment `env` (the interpreter's variables in it must be those the tests run with)."""

    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.preload, self.env = command, dict(env)
        # Made by `running`; its name is known now, for the commands made before it runs
        self.folder = Path(tempfile.gettempdir()) / f"memlens-fork-{secrets.token_hex(6)}"
        self.socket = self.folder / "socket"

    def command(self, *args: str) -> list[str]:
        """The command that runs `python -m memlens ARGS`, through this fork server."""
        if not AVAILABLE:
            return [sys.executable, "-m", "memlens", *args]
        return [sys.executable, "-I", "-S", str(_HERE / "fork_launch.py"), str(self.socket),
                *args]

    @contextlib.contextmanager
    def running(self) -> Iterator[dict[str, Any] | None]:
        """The fork server, from now to the end of the block (then it kills what is left of
        its children and ends); what it said when ready, or None when the real command runs.
        Warns when a launcher had to run the real command."""
        if not AVAILABLE:
            yield None
            return
        self.folder.mkdir(mode=0o700)
        log = self.folder / "log"
        with open(log, "wb") as log_file:
            process = subprocess.Popen(
                [sys.executable, str(_HERE / "fork_server.py"), str(self.socket), self.preload],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_file, env=self.env)
        assert process.stdout is not None and process.stdin is not None
        ready = process.stdout.readline()
        if not ready:
            process.wait()
            raise RuntimeError(f"the fork server did not start: {log.read_text()}")
        try:
            yield json.loads(ready)
        finally:
            process.stdin.close()  # EOF: the fork server ends
            summary = process.stdout.readline()
            process.wait(timeout=30)
            process.stdout.close()
            shutil.rmtree(self.folder, ignore_errors=True)
        refused = json.loads(summary)["refused"] if summary else ["no summary"]
        if refused:
            warnings.warn(f"the fork server refused {len(refused)} start(s), which ran the "
                          f"real command: {sorted(set(refused))}", stacklevel=1)
