"""Run one agent process against the fake model, inside a sandbox.

``run_job(job)`` re-runs this module inside the strongest isolation this machine has
(docs/security.md, "`memlens verify` runs the agents, never the repository"):

* ``sandbox`` — bubblewrap (`bwrap`, Debian's `bubblewrap`; unprivileged user namespaces, so
  no root needed): a network namespace whose only interface is loopback; the whole file
  system read-only; the user's HOME hidden under an empty tmpfs (only what the run needs to
  execute — the Python runner, the agent's install, node — bound back read-only); `/tmp` a
  fresh tmpfs; only the job's scratch folders writable; its own PID namespace, killed with
  us. A command a repository smuggles past the scrubbing (verify/scrub.py) can read no secret
  in HOME, write nothing of the user's and reach nothing but our recording model.
* ``network-namespace`` — as root with ``unshare`` only: the network is cut, nothing else.
* ``none`` — in this process: the offline flags and a model on 127.0.0.1, nothing enforced.

``Job.isolation`` says what the caller accepts: ``sandbox`` (``memlens verify``: anything less
is refused, unless the user names the risk), or ``best`` (the conformance harness, whose
trees are ours). Either way the fake model and the agent share one loopback, and the result
carries every request the model saw and which isolation held.

The agent gets exactly ``job.env`` (the caller builds it from nothing, as ``env -i`` would),
stdin from /dev/null, its own process group (killed whole on timeout). ``{PORT}`` in the argv
or in an environment value is replaced with the fake model's port.
"""

from __future__ import annotations

import contextlib
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
from typing import Any, Literal

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
    tool_call: dict[str, Any] | None = None  # {name, args} called on the first turn
    timeout: float = 120.0
    # The folders the run may write (besides HOME, CODEX_HOME and XDG_CACHE_HOME of `env`):
    # the scratch copy. Everything else is read-only in the sandbox.
    writable: list[str] = []
    # (folder, where it appears): a scratch folder bound over a path of the copy, for this run
    # only (the sandbox alone; Copilot's repository marker over the shared copy's `.git`).
    overlays: list[tuple[str, str]] = []
    # Paths the agent needs to run that may lie under a hidden HOME (its install, node).
    executables: list[str] = []
    isolation: Literal["sandbox", "best"] = "best"
    # Files (under a writable folder) in which `{PORT}` is replaced with the fake model's port
    # before the agent starts: pi reads its model's address only from its models.json.
    port_files: list[str] = []


Isolation = Literal["sandbox", "network-namespace", "none"]


class SandboxUnavailable(RuntimeError):
    """`Job.isolation == "sandbox"` on a machine where bubblewrap cannot run."""


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
    isolated: bool  # ran in its own network namespace (sandbox or network-namespace)
    isolation: Isolation = "none"
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


@functools.cache
def bubblewrap() -> str | None:
    """The `bwrap` that works here (None: missing, or user namespaces refused), unless
    switched off (MEMLENS_NO_BWRAP=1, for tests of the refusal)."""
    if os.environ.get("MEMLENS_NO_BWRAP") == "1":
        return None
    found = shutil.which("bwrap")
    if found is None:
        return None
    probe = subprocess.run([found, "--ro-bind", "/", "/", "--unshare-net", "true"],
                           capture_output=True, check=False)
    return found if probe.returncode == 0 else None


def best_isolation() -> Isolation:
    if bubblewrap():
        return "sandbox"
    return "network-namespace" if can_isolate() else "none"


def run_job(job: Job) -> JobResult:
    kind = best_isolation()
    if job.isolation == "sandbox" and kind != "sandbox":
        raise SandboxUnavailable("no sandbox here: bubblewrap (`bwrap`) is not installed or "
                                 "user namespaces are refused")
    if kind == "none":
        return _run_here(job, isolation="none")
    with tempfile.TemporaryDirectory(prefix="memlens-job-") as folder:
        job_file = Path(folder) / "job.json"
        result_file = Path(folder) / "result.json"
        job_file.write_text(job.model_dump_json(), encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(PACKAGE_ROOT)}
        inner_argv = [sys.executable, "-m", "memlens.verify.sandbox", str(job_file),
                      str(result_file), kind]
        if kind == "sandbox":
            argv = [*bwrap_argv(job, [folder]), *inner_argv]
        else:
            argv = ["unshare", "-n", *inner_argv]
        inner = subprocess.run(
            argv, cwd=PACKAGE_ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=job.timeout + 30, check=False,
        )
        if inner.returncode != 0 or not result_file.exists():
            raise RuntimeError(
                f"sandbox failed ({inner.returncode}): {inner.stderr[-2000:]}"
            )
        return JobResult.model_validate_json(result_file.read_text(encoding="utf-8"))


def hidden_homes() -> list[str]:
    """The user's home folders, as this process knows them: hidden in the sandbox."""
    import pwd

    homes = {os.path.realpath(os.path.expanduser("~"))}
    with contextlib.suppress(KeyError):  # a uid with no passwd entry (containers)
        homes.add(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    return sorted(h for h in homes if h not in ("/", ""))


def _needed_to_run(job: Job) -> list[str]:
    """What must stay readable for the runner and the agent: this Python (its prefixes),
    the `memlens` package, node, and the job's executables (resolved through links)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(PACKAGE_ROOT),
             os.path.dirname(os.path.realpath(sys.executable))}
    node = shutil.which("node")
    if node:
        paths.add(os.path.dirname(os.path.dirname(os.path.realpath(node))))
    for executable in [job.argv[0], *job.executables] if job.argv else job.executables:
        for path in (os.path.abspath(executable), os.path.realpath(executable)):
            # an npm install needs its whole tree: the folder holding its first node_modules
            head, marker, _ = path.partition("/node_modules/")
            paths.add(head if marker else os.path.dirname(path))
    return sorted(os.path.realpath(p) for p in paths if p and os.path.exists(p))


def bwrap_argv(job: Job, extra_writable: list[str]) -> list[str]:
    """bubblewrap's command line for `job` (everything up to the command it runs)."""
    bwrap = bubblewrap()
    assert bwrap is not None
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid",
            "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    homes = hidden_homes()
    for home in homes:
        argv += ["--tmpfs", home]
    for path in _needed_to_run(job):
        if any(path == h or path.startswith(h + "/") for h in homes) or path.startswith("/tmp/"):
            argv += ["--ro-bind", path, path]
    writable = [*job.writable, *extra_writable]
    writable += [job.env[k] for k in ("HOME", "CODEX_HOME", "XDG_CACHE_HOME") if k in job.env]
    for path in sorted({os.path.realpath(p) for p in writable if os.path.isdir(p)}):
        argv += ["--bind", path, path]
    for source, where in job.overlays:
        if os.path.isdir(source) and os.path.isdir(where) and not os.path.islink(where):
            argv += ["--bind", os.path.realpath(source), os.path.realpath(where)]
    return [*argv, "--chdir", str(PACKAGE_ROOT)]


def _loopback_up() -> None:
    """A new network namespace starts with lo down; bring it up (what `ip link set lo up`
    does), without depending on iproute2."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | _IFF_UP, b""))


def _run_here(job: Job, *, isolation: Isolation) -> JobResult:
    with FakeModel(read_path=job.read_path, tool_call=job.tool_call) as fake:
        port = str(fake.port)
        argv = [a.replace("{PORT}", port) for a in job.argv]
        env = {k: v.replace("{PORT}", port) for k, v in job.env.items()}
        for name in job.port_files:
            with contextlib.suppress(OSError):
                text = Path(name).read_text(encoding="utf-8")
                Path(name).write_text(text.replace("{PORT}", port), encoding="utf-8")
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
        isolated=isolation != "none", isolation=isolation, requests=requests,
    )


def _main() -> None:
    """Inside the sandbox (bubblewrap brings loopback up itself) or `unshare -n` (loopback up
    here): run the job, write the result file."""
    job_file, result_file, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    job = Job.model_validate_json(Path(job_file).read_text(encoding="utf-8"))
    if kind == "network-namespace":
        _loopback_up()
    result = _run_here(job, isolation="sandbox" if kind == "sandbox" else "network-namespace")
    Path(result_file).write_text(result.model_dump_json(), encoding="utf-8")


if __name__ == "__main__":
    _main()
