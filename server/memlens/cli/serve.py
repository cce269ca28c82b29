"""`memlens serve [--tcp HOST:PORT]`: the language server, on stdio (or TCP)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from memlens.cli.common import Parser, UsageError


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    serve = commands.add_parser("serve", help=summary)
    serve.add_argument("--tcp", metavar="HOST:PORT")


def run(args: argparse.Namespace) -> int:
    from memlens.lsp.server import create_server

    logging.basicConfig(level=os.environ.get("MEMLENS_LOG_LEVEL", "WARNING"),
                        stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    if "MEMLENS_LOG_LEVEL" not in os.environ:
        # The editor shows stderr in its output channel: pygls's protocol chatter ("Cancel
        # notification for unknown message id", a late response) is noise there, not news.
        logging.getLogger("pygls").setLevel(logging.ERROR)
    from memlens.lsp.chat import install_log_redaction

    server = create_server()
    install_log_redaction(server)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise UsageError(f"--tcp expects HOST:PORT, got {args.tcp!r}")
        server.start_tcp(host, int(port))
        return 0
    return server.start_io()
