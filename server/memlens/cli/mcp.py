"""`memlens mcp`: the Model Context Protocol server on stdio (docs/mcp.md), for the workspace
folders the client gives as roots, else the folder it is started in."""

from __future__ import annotations

import argparse
import os
from typing import Any

from memlens.cli.common import Parser


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    commands.add_parser(
        "mcp", help=summary,
        description="The Model Context Protocol server on stdio: read-only tools agents_here, "
                    "what_agent_reads, explain_file and rules_for, and each agent's merged "
                    "context as a resource, for the client's roots (else the working folder).")


def run(args: argparse.Namespace) -> int:
    from memlens.mcp.server import serve

    serve(os.getcwd())
    return 0
