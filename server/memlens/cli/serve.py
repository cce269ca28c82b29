"""`memlens serve [--tcp HOST:PORT]`: the language server, on stdio (or TCP).

Over stdio the client is the process that started the server (the editor). Over TCP anyone
who can reach the port could connect, so (as notebook servers do) each start makes a secret
token, writes it with the address to a file only the user can read (`--token-file`, else
`$XDG_RUNTIME_DIR/memlens/serve-<pid>.json`, else under `~/.cache/memlens/run`), and serves
only the client whose `initialize` carries it in `initializationOptions.memlensToken`. It
listens on a loopback address only, unless `--allow-remote` asks for another one.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import logging
import os
import secrets
import signal
import stat
import sys
from typing import Any

from memlens.cli.common import Parser, UsageError
from memlens.files.secrets import register_secret


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    serve = commands.add_parser(
        "serve", help=summary,
        description="The language server on stdio; with --tcp, on a TCP port for one client "
                    "that sends the per-start token (initializationOptions.memlensToken) "
                    "written to the token file, readable by you only.")
    serve.add_argument("--tcp", metavar="HOST:PORT",
                       help="listen on HOST:PORT (a loopback address; port 0: any free port)")
    serve.add_argument("--allow-remote", action="store_true",
                       help="with --tcp, allow an address that is not loopback (anyone who "
                            "reaches it still needs the token)")
    serve.add_argument("--token-file", metavar="PATH",
                       help="with --tcp, where to write the address and token (mode 0600; "
                            "default: $XDG_RUNTIME_DIR/memlens/serve-PID.json)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _private_folder() -> str:
    """A folder only the user can enter, for the token file."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        folder = os.path.join(runtime, "memlens")
    else:
        cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                  ".cache")
        folder = os.path.join(cache, "memlens", "run")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise UsageError(f"{folder} is not a folder of yours: pass --token-file")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(folder, 0o700)
    return folder


def _write_token_file(path: str, content: dict[str, Any]) -> None:
    """`content` as JSON in a new file at `path` that only the user can read: created with
    O_EXCL and O_NOFOLLOW (a link or a file someone else planted there is never written
    through); a regular file of the user's own there is replaced."""
    with contextlib.suppress(FileNotFoundError):
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise UsageError(f"--token-file {path} exists and is not a file of yours")
        os.unlink(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as err:
        raise UsageError(f"cannot write the token file {path}: {err.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)
        json.dump(content, handle)
        handle.write("\n")


def run(args: argparse.Namespace) -> int:
    from memlens.lsp.server import create_server

    logging.basicConfig(level=os.environ.get("MEMLENS_LOG_LEVEL", "WARNING"),
                        stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if "MEMLENS_LOG_LEVEL" not in os.environ:
        # The editor shows stderr in its output channel: pygls's protocol chatter ("Cancel
        # notification for unknown message id", a late response) is noise there, not news.
        logging.getLogger("pygls").setLevel(logging.ERROR)
    from memlens.lsp.chat import install_log_redaction

    if not args.tcp:
        if args.allow_remote or args.token_file:
            raise UsageError("--allow-remote and --token-file go with --tcp")
        server = create_server()
        install_log_redaction(server)
        return server.start_io()

    from memlens.lsp.transport import TcpOptions

    host, _, port = args.tcp.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--tcp expects HOST:PORT, got {args.tcp!r}")
    host = host.strip("[]")
    if not _is_loopback(host) and not args.allow_remote:
        raise UsageError(f"--tcp {args.tcp}: {host} is not a loopback address; anyone who "
                         "can reach it could try to connect. Use 127.0.0.1, or pass "
                         "--allow-remote to listen there anyway (the token is still required)")
    token = secrets.token_urlsafe(32)
    register_secret(token)  # redacted from the log, should anything ever quote it
    token_file = os.path.abspath(args.token_file) if args.token_file else os.path.join(
        _private_folder(), f"serve-{os.getpid()}.json")

    def listening(bound_host: str, bound_port: int) -> None:
        _write_token_file(token_file, {"host": bound_host, "port": bound_port, "token": token,
                                       "pid": os.getpid(), "option": "memlensToken"})
        print(f"memlens: serving one LSP client on {bound_host}:{bound_port}; it must send "
              f"initializationOptions.memlensToken from {token_file}", file=sys.stderr,
              flush=True)

    server = create_server()
    install_log_redaction(server)
    # A cancelled job, `timeout`, a service manager: SIGTERM ends the loop like `exit`, so the
    # token file is removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return server.start_tcp_owned(TcpOptions(host, int(port), token, token_file, listening,
                                           lambda: None))
    finally:
        with contextlib.suppress(OSError):
            os.unlink(token_file)
