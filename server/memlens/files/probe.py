"""Running a program whose output we read (an agent's `--version`, git): bounded.

A program found on PATH, or one a repository put there (`node_modules/.bin`), may print
without end. `run_bounded` reads its output up to a cap and then kills its whole process
group, as it does at the deadline; memory never grows past the cap, whatever the program does.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Probed:
    """What a bounded run gave: its output (stdout, with stderr when merged) up to the cap."""

    returncode: int | None  # None: it was killed (over the cap, past the deadline)
    output: bytes
    errors: bytes = b""  # stderr when kept apart (capped too)
    over_cap: bool = False  # it printed more than the cap: killed
    timed_out: bool = False  # still running at the deadline: killed
    failed: str | None = None  # it could not be started (the OS's reason)

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run_bounded(argv: Sequence[str], *, max_output: int, timeout: float | None = None,
                cwd: str | None = None, env: Mapping[str, str] | None = None,
                merge_stderr: bool = False, max_errors: int = 64 * 1024,
                stdin: int | None = None) -> Probed:
    """Run `argv` (no shell, stdin closed, a session of its own) and read its stdout up to
    `max_output` bytes (stderr up to `max_errors`, or merged into stdout). Past a cap or the
    `timeout` its whole process group is killed. Never raises for the program's behaviour.
    `stdin`: a file descriptor to read from instead of nothing."""
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=None if env is None else dict(env),
                                stdin=subprocess.DEVNULL if stdin is None else stdin,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                                start_new_session=True)
    except (OSError, ValueError, subprocess.SubprocessError) as err:
        return Probed(None, b"", failed=getattr(err, "strerror", None) or str(err))
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        return _collect(proc, deadline, max_output, max_errors, timeout)
    except BaseException:  # interrupted (SIGTERM, Ctrl-C): the program goes with us
        _kill_group(proc)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
        raise


def _collect(proc: subprocess.Popen[bytes], deadline: float | None, max_output: int,
             max_errors: int, timeout: float | None) -> Probed:
    assert proc.stdout is not None
    out_fd = proc.stdout.fileno()
    buffers: dict[int, bytearray] = {}
    caps: dict[int, int] = {}
    over_cap = timed_out = False
    with selectors.DefaultSelector() as selector:
        for stream, cap in ((proc.stdout, max_output), (proc.stderr, max_errors)):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                selector.register(stream.fileno(), selectors.EVENT_READ)
                buffers[stream.fileno()] = bytearray()
                caps[stream.fileno()] = cap
        while selector.get_map():
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                timed_out = True
                break
            for key, _ in selector.select(wait):
                fd = key.fd
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    selector.unregister(fd)
                    continue
                room = caps[fd] + 1 - len(buffers[fd])
                buffers[fd] += chunk[:room]
                if len(buffers[fd]) > caps[fd]:
                    over_cap = True
            if over_cap:
                break
    if over_cap or timed_out:
        _kill_group(proc)
    returncode: int | None
    try:
        returncode = proc.wait(timeout=None if over_cap or timed_out else timeout)
    except subprocess.TimeoutExpired:  # closed its output but kept running: killed too
        _kill_group(proc)
        timed_out = True
        returncode = proc.wait()
    finally:
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    stdout = buffers[out_fd]
    stderr = next((b for fd, b in buffers.items() if fd != out_fd), bytearray())
    return Probed(None if over_cap or timed_out else returncode,
                  bytes(stdout[:max_output]), bytes(stderr[:max_errors]), over_cap, timed_out)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
