"""`memlens jit [--cwd DIR] TARGET ...`: what the agent adds after its tools touch each TARGET
in turn (one session); with `--agent` and `--json`, the exact strings it sends then."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memlens.cli.common import (
    Parser,
    directory,
    print_json,
    print_text,
    settings_for,
    shows_primary,
)


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    jit = commands.add_parser("jit", parents=[common], help=summary)
    jit.add_argument("--cwd", default=".", metavar="DIR")
    jit.add_argument("targets", nargs="+", metavar="TARGET")
    jit.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from memlens.agents import agent_by_id
    from memlens.workspace.queries import agent_jit, agent_jit_payloads, jit

    cwd = directory(args.cwd)
    settings = settings_for(args, cwd)
    if args.json and args.agent is not None:
        print_json([e.wire() for e in agent_jit_payloads(agent_by_id(args.agent_id), cwd,
                                                         args.targets, settings)])
        return 0
    if not shows_primary(args):
        entries = agent_jit(agent_by_id(args.agent_id), cwd, args.targets, settings)
    else:
        if not settings.jit_context:
            print("memlens: classic mode loads no memory just in time", file=sys.stderr)
        entries = jit(cwd, args.targets, settings)
    if args.json:
        print_json([e.wire() for e in entries])
        return 0
    text = "".join(e.context for e in entries)
    if text:
        print_text(text + "\n")
    return 0
