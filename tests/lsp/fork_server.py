"""The test suite's fork server: `python -m memlens serve` without its import time.

Started once per test session (tests/lsp/conftest.py, forking.py) as
`python fork_server.py SOCKET serve` (or `mcp`). It imports what `python -m memlens serve`
(or `mcp`) imports, then waits on SOCKET for launchers (fork_launch.py, the command the tests
start). Each launcher hands over its stdin, stdout,
stderr, working folder, environment and argument list; the fork server forks, and the child
takes them over and runs `memlens` as `python -m memlens` does (runpy, `__main__`), ending as
that process would end (atexit handlers, thread joins, its exit status or signal). The fork
server sends the launcher the child's pidfd (so the launcher forwards signals to it) and later
its wait status (so the launcher ends the same way).

What must hold for the child to be that process, and how it is kept:
- No module read, at import time, an environment variable that a test sets: every variable
  read while importing is recorded, and a launcher whose environment differs from this
  process's in one of those (or in any PYTHON*/LC_*/LANG variable, read by the interpreter at
  start) is refused; it then runs the real command itself.
- Single-threaded when it forks (checked), no event loop, no signal handler of its own, stdout
  flushed (one line says it is ready), stdin never read through sys.stdin (it is a pipe from
  pytest: EOF ends the fork server).
- The child keeps no descriptor of ours: the listening socket, the connections and the pidfds
  are closed before the child runs memlens.
- A launcher that dies without its child having ended (SIGKILL: nothing to forward) gets its
  child killed too, as the real process would have been. When pytest ends (stdin EOF) every
  child still running is killed, and the fork server exits.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import selectors
import signal
import socket
import sys
import threading
from typing import Any, ClassVar

# Read by the interpreter itself at start-up (paths, encodings, hashing, buffering, warnings)
_INTERPRETER_PREFIXES = ("PYTHON", "LC_")
_INTERPRETER_NAMES = frozenset({"LANG", "LANGUAGE"})
# What `python -m memlens serve` (or `mcp`) imports before it reads a byte: the CLI and the
# server (memlens/__main__.py itself runs the CLI: it is run, in the child, never imported)
PRELOAD = {"serve": ("memlens", "memlens.cli", "memlens.cli.main", "memlens.cli.serve",
                     "memlens.lsp.server", "memlens.lsp.chat", "memlens.lsp.transport"),
           "mcp": ("memlens", "memlens.cli", "memlens.cli.main", "memlens.cli.mcp",
                   "memlens.mcp.server")}


# The modules a read goes through on its way from the reader
_ENVIRON_PLUMBING = frozenset({"os", "collections.abc", "posixpath", "genericpath"})
# sysconfig notes the user base (from HOME) at import; `pip install --user` uses it, memlens
# never asks for it: a test's own HOME does not make the child differ
_READERS_IGNORED = frozenset({"sysconfig"})


class _Recording(os._Environ[str]):
    """os.environ that notes each key read (imports run with it in place)."""

    read: ClassVar[set[str]] = set()

    def __getitem__(self, key: str) -> str:
        frame = sys._getframe(1)
        while frame.f_back is not None and frame.f_globals.get("__name__") in _ENVIRON_PLUMBING:
            frame = frame.f_back
        if frame.f_globals.get("__name__") not in _READERS_IGNORED:
            _Recording.read.add(key)
        return super().__getitem__(key)

    def __iter__(self) -> Any:
        _Recording.read.add("*")  # the whole environment was copied or listed
        return super().__iter__()


# What memlens/cli/main.py `main` sets before the server's imports happen
_MAIN_DEFAULTS = {"PYDANTIC_DISABLE_PLUGINS": "__all__"}


def preload(command: str) -> set[str]:
    """Import what `command` imports, as `main` would; the environment variables read
    meanwhile."""
    for key, value in _MAIN_DEFAULTS.items():
        os.environ.setdefault(key, value)
    original = os.environ.__class__
    os.environ.__class__ = _Recording
    try:
        for name in PRELOAD[command]:
            __import__(name)
    finally:
        os.environ.__class__ = original
    return set(_Recording.read)


def _matters(key: str, read_at_import: set[str]) -> bool:
    return (key in read_at_import or key in _INTERPRETER_NAMES
            or key.startswith(_INTERPRETER_PREFIXES))


def refusal(env: dict[str, str], read_at_import: set[str]) -> str | None:
    """Why a launcher with environment `env` must run the real command, or None."""
    if "*" in read_at_import:
        return "an import listed the whole environment"
    env = {**_MAIN_DEFAULTS, **env}
    mine = dict(os.environ)
    for key in sorted(set(env) | set(mine)):
        if _matters(key, read_at_import) and env.get(key) != mine.get(key):
            return f"{key} differs from the fork server's"
    return None


def _recv(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
    return json.loads(data), fds


def _fresh_stdio() -> None:
    """sys.stdin, stdout and stderr made anew on descriptors 0-2 as the interpreter makes them
    at start: their buffering and seekability are the new descriptors', not ours."""
    assert sys.__stdin__ and sys.__stdout__ and sys.__stderr__
    buffered = not sys.__stdout__.write_through  # False under -u or PYTHONUNBUFFERED
    made = []
    for fd, old in enumerate((sys.__stdin__, sys.__stdout__, sys.__stderr__)):
        writing = fd > 0
        binary = open(fd, "wb" if writing else "rb",  # noqa: SIM115 (the new sys.std*)
                      -1 if buffered or not writing else 0, closefd=False)
        text = io.TextIOWrapper(binary, encoding=old.encoding, errors=old.errors, newline="\n",
                                line_buffering=buffered and (fd == 2 or os.isatty(fd)),
                                write_through=not buffered)
        text.mode = "w" if writing else "r"  # type: ignore[misc]
        raw: Any = getattr(binary, "raw", binary)
        raw.name = ("<stdin>", "<stdout>", "<stderr>")[fd]
        made.append(text)
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made  # type: ignore[misc]


def _run_child(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become `python -m memlens ARGS` on the launcher's stdio."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    _fresh_stdio()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({k: v for k, v in request["env"].items()})
    import runpy

    # As `python -m`: the working folder first on the path, argv[0] the module's file
    sys.path[0] = os.getcwd()
    sys.argv = ["-m", *request["args"]]
    runpy.run_module("memlens", run_name="__main__", alter_sys=True)


class ForkServer:
    def __init__(self, path: str, read_at_import: set[str]) -> None:
        self.read_at_import = read_at_import
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(path)
        self.listener.listen(16)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, "accept")
        self.selector.register(sys.stdin, selectors.EVENT_READ, "stdin")
        # pid -> (pidfd, the launcher's connection, or None once it went away)
        self.children: dict[int, tuple[int, socket.socket | None]] = {}
        self.running = True
        self.forked = 0
        self.refused: list[str] = []

    def _close_all(self) -> None:
        """In the child: drop every descriptor of the fork server."""
        for pidfd, conn in self.children.values():
            os.close(pidfd)
            if conn is not None:
                conn.close()
        self.selector.close()
        self.listener.close()

    def _accept(self) -> bool:
        """Serve one launcher; True in the forked child (it must go on to run memlens)."""
        conn, _ = self.listener.accept()
        conn.settimeout(30)
        try:
            request, fds = _recv(conn)
        except (OSError, ValueError):
            conn.close()
            return False
        reason = refusal(request["env"], self.read_at_import)
        if reason is None and threading.active_count() != 1:
            reason = "the fork server is not single-threaded"
        if reason is not None or len(fds) != 3:
            self.refused.append(reason or "expected 3 fds")
            for fd in fds:
                os.close(fd)
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"refused": reason or "expected 3 fds"}).encode())
            conn.close()
            return False
        self.forked += 1
        pid = os.fork()
        if pid == 0:
            conn.close()
            self._close_all()
            _run_child(request, fds)
            return True
        for fd in fds:
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        try:
            socket.send_fds(conn, [json.dumps({"pid": pid}).encode()], [pidfd])
        except OSError:  # the launcher is gone: so is the child
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            conn.close()
            self.children[pid] = (pidfd, None)
        else:
            self.children[pid] = (pidfd, conn)
            self.selector.register(conn, selectors.EVENT_READ, ("launcher", pid))
        self.selector.register(pidfd, selectors.EVENT_READ, ("child", pid))
        return False

    def _child_ended(self, pid: int) -> None:
        pidfd, conn = self.children.pop(pid)
        _, status = os.waitpid(pid, 0)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        if conn is not None:
            self.selector.unregister(conn)
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"status": status}).encode())
            conn.close()

    def _launcher_gone(self, pid: int) -> None:
        """The launcher closed its end while its child runs: it was killed; so is the child."""
        pidfd, conn = self.children[pid]
        assert conn is not None
        self.selector.unregister(conn)
        conn.close()
        self.children[pid] = (pidfd, None)
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)

    def serve(self) -> bool:
        """The loop; True in a forked child (which then runs memlens to its end)."""
        while self.running or self.children:
            for key, _ in self.selector.select():
                what = key.data
                if what == "accept":
                    if self._accept():
                        return True
                elif what == "stdin":
                    if not os.read(sys.stdin.fileno(), 1 << 16):
                        self.stop()
                elif what[0] == "child":
                    self._child_ended(what[1])
                elif what[0] == "launcher" and not key.fileobj.recv(1):  # type: ignore[union-attr]
                    self._launcher_gone(what[1])
        return False

    def stop(self) -> None:
        """pytest ended: accept no launcher, kill the children left."""
        self.running = False
        self.selector.unregister(self.listener)
        self.selector.unregister(sys.stdin)
        self.listener.close()
        for pid in list(self.children):
            pidfd, _ = self.children[pid]
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)


def main() -> None:
    path, command = sys.argv[1], sys.argv[2]
    read_at_import = preload(command)
    server = ForkServer(path, read_at_import)
    sys.stdout.write(json.dumps({"ready": True, "read_at_import": sorted(read_at_import)}))
    sys.stdout.write("\n")
    sys.stdout.flush()
    if server.serve():
        return  # the child: memlens ran (and raised SystemExit)
    # The fork server ends: what it did, for conftest.py to report
    sys.stdout.write(json.dumps({"forked": server.forked, "refused": server.refused}) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
