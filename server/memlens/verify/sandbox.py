"""Run one agent process against the fake model, inside a network namespace when possible.

``run_job(job)`` is what tests call. As root with ``unshare`` available it re-runs this module
under ``unshare -n`` (a network namespace whose only interface is loopback, brought up here),
so the agent provably reaches nothing but the fake model; otherwise it runs in this process.
Either way the fake model and the agent share one loopback, and the result carries every
request the model saw.

The agent gets exactly ``job.env`` (the caller builds it from nothing, as ``env -i`` would),
stdin from /dev/null, its own process group (killed whole on timeout). ``{PORT}`` in the argv
or in an environment value is replaced with the fake model's port.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from memlens.verify.fake_model import FakeModel

# The folder holding the `memlens` package (server/ in the repository, site-packages when
# installed): what the inner run under `unshare -n` needs on its PYTHONPATH.
PACKAGE_ROOT = Path(__file__).resolve().parents[2]
REPO = PACKAGE_ROOT.parent  # the repository, in a checkout
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


class Job(BaseModel):
    """One agent run."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    read_path: str | None = None
    timeout: float = 120.0


class Request(BaseModel):
    """One request the fake model recorded."""

    method: str
    path: str
    query: str
    route: str
    body: Any


class JobResult(BaseModel):
    exit_code: int  # -1: killed on timeout
    stdout: str
    stderr: str
    seconds: float
    isolated: bool  # ran in its own network namespace
    requests: list[Request]


@functools.cache
def can_isolate() -> bool:
    """Root, unshare present and allowed here (containers may forbid it), not switched off."""
    if os.environ.get("MEMLENS_CONFORMANCE_NO_UNSHARE") == "1":
        return False
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def run_job(job: Job) -> JobResult:
    if not can_isolate():
        return _run_here(job, isolated=False)
    with tempfile.TemporaryDirectory(prefix="memlens-job-") as folder:
        job_file = Path(folder) / "job.json"
        result_file = Path(folder) / "result.json"
        job_file.write_text(job.model_dump_json(), encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(PACKAGE_ROOT)}
        inner = subprocess.run(
            ["unshare", "-n", sys.executable, "-m", "memlens.verify.sandbox",
             str(job_file), str(result_file)],
            cwd=PACKAGE_ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=job.timeout + 30, check=False,
        )
        if inner.returncode != 0 or not result_file.exists():
            raise RuntimeError(
                f"sandbox failed ({inner.returncode}): {inner.stderr[-2000:]}"
            )
        return JobResult.model_validate_json(result_file.read_text(encoding="utf-8"))


def _loopback_up() -> None:
    """A new network namespace starts with lo down; bring it up (what `ip link set lo up`
    does), without depending on iproute2."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))


def _run_here(job: Job, *, isolated: bool) -> JobResult:
    with FakeModel(read_path=job.read_path) as fake:
        port = str(fake.port)
        argv = [a.replace("{PORT}", port) for a in job.argv]
        env = {k: v.replace("{PORT}", port) for k, v in job.env.items()}
        started = time.monotonic()
        process = subprocess.Popen(
            argv, cwd=job.cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True,
        )
        try:
            stdout, stderr = process.communicate(timeout=job.timeout)
            exit_code = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            stdout, stderr = process.communicate()
            exit_code = -1
        seconds = time.monotonic() - started
        requests = [
            Request(method=r.method, path=r.path, query=r.query, route=r.route, body=r.body)
            for r in fake.requests
        ]
    return JobResult(
        exit_code=exit_code, stdout=stdout, stderr=stderr, seconds=round(seconds, 2),
        isolated=isolated, requests=requests,
    )


def _main() -> None:
    """Inside `unshare -n`: loopback up, run the job, write the result file."""
    job_file, result_file = sys.argv[1], sys.argv[2]
    job = Job.model_validate_json(Path(job_file).read_text(encoding="utf-8"))
    _loopback_up()
    result = _run_here(job, isolated=True)
    Path(result_file).write_text(result.model_dump_json(), encoding="utf-8")


if __name__ == "__main__":
    _main()
