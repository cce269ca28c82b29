"""The command the LSP tests start instead of `python -m memlens ARGS`, with the same effect:
`python -I -S fork_launch.py SOCKET ARGS`.

It hands its stdin, stdout and stderr, working folder, environment and ARGS to the fork
server listening on SOCKET (fork_server.py), whose forked child runs `python -m memlens ARGS`
on them; it then keeps nothing of them, forwards the signals it receives to that child, and
ends as the child ended (its exit status, or the same signal). When the fork server cannot
take it (not running, or this environment differs where the preloaded imports read it), it
runs the real command itself (exec).
Standard library only, without `site` (-S): it starts in a few milliseconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2, signal.SIGALRM, signal.SIGCONT, signal.SIGWINCH)


def real_command(args: list[str]) -> None:
    os.execv(sys.executable, [sys.executable, "-m", "memlens", *args])


def _detach_stdio() -> None:
    """The child holds our stdin, stdout and stderr now; an EOF must not wait for us."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def main() -> None:
    path, args = sys.argv[1], sys.argv[2:]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        conn.connect(path)
    except OSError:
        real_command(args)
    request = {"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 1)
    answer = json.loads(data) if data else {"refused": "the fork server went away"}
    if "refused" in answer:
        conn.close()
        real_command(args)
    pidfd = fds[0]
    _detach_stdio()

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(pidfd, signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)
    data = conn.recv(1 << 16)  # a signal runs its handler; the wait goes on
    if not data:  # the fork server ended before the child did (pytest is ending)
        os._exit(1)
    status = json.loads(data)["status"]
    if os.WIFSIGNALED(status):
        ended_by = os.WTERMSIG(status)
        if ended_by != signal.SIGKILL:
            signal.signal(ended_by, signal.SIG_DFL)
        os.kill(os.getpid(), ended_by)
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
