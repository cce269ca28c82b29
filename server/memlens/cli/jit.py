"""`memlens jit [--cwd DIR] TARGET ...`: what the agent adds after its tools touch each TARGET
in turn (one session); with `--agent` and `--json`, the exact strings it sends then. Without
`--agent`: the first agent shown in the folder (in use, else with files that apply)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memlens.cli.common import (
    Parser,
    directory,
    gemini_notes,
    print_json,
    print_text,
    settings_for,
    shown_agent,
    shows_gemini,
)


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    jit = commands.add_parser("jit", parents=[common], help=summary)
    jit.add_argument("--cwd", default=".", metavar="DIR")
    jit.add_argument("targets", nargs="+", metavar="TARGET")
    jit.add_argument("--json", action="store_true")
    jit.add_argument("--read-tool", action="store_true",
                     help="the agent's read tool reads each TARGET: a missing file or a folder "
                          "fails before any memory loads (default: any tool; a folder is "
                          "listed, a missing file created)")


def run(args: argparse.Namespace) -> int:
    from memlens.agents import agent_by_id
    from memlens.workspace.queries import agent_jit_payloads, jit_entries

    cwd = directory(args.cwd)
    settings = settings_for(args, cwd, notes=False)
    # Without `--agent`: the first agent shown here (common.covered_agents), none at all:
    # nothing to load (covered_agents said so).
    if shown_agent(args, cwd, settings) is None:
        if args.json:
            print_json([])
        return 0
    if shows_gemini(args):
        gemini_notes(settings, cwd)
    if args.json and args.agent is not None:
        print_json([e.wire() for e in agent_jit_payloads(agent_by_id(args.agent_id), cwd,
                                                         args.targets, settings,
                                                         read_tool=args.read_tool)])
        return 0
    if shows_gemini(args) and not settings.jit_context:
        print("memlens: classic mode loads no memory just in time", file=sys.stderr)
    # The entries `memlens mcp` answers with too (workspace/queries.py `jit_entries`).
    entries = jit_entries(agent_by_id(args.agent_id), cwd, args.targets, settings,
                          read_tool=args.read_tool)
    if args.json:
        print_json([e.wire() for e in entries])
        return 0
    text = "".join(e.context for e in entries)
    if text:
        print_text(text + "\n")
    return 0
