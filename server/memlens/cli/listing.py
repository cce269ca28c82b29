"""`memlens list [PATH]`: the files the agent reads, in load order — Gemini CLI's tier, chars
and token estimate per file (`--count-exact`: the model's own count), or another agent's own
labels (`--agent A`)."""

from __future__ import annotations

import argparse
from typing import Any

from memlens.cli.common import (
    Parser,
    directory,
    print_json,
    print_text,
    settings_for,
    shows_primary,
)
from memlens.files.output import display_path, escape_controls


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    listing = commands.add_parser("list", parents=[common], help=summary)
    listing.add_argument("path", nargs="?", default=".", metavar="PATH")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--count-exact", action="store_true",
                         help="also count the tokens with the model's countTokens "
                              "(needs GEMINI_API_KEY)")


def run(args: argparse.Namespace) -> int:
    cwd = directory(args.path)
    settings = settings_for(args, cwd)
    if not shows_primary(args):
        return _agent_list(args, cwd, settings)
    from memlens.cli.budget_output import tokens_cell
    from memlens.workspace.queries import list_files

    result = list_files(cwd, settings)
    if args.count_exact:
        from memlens.cli.budget_output import with_exact

        with_exact(result, cwd, settings)
    if args.json:
        print_json(result.wire())
        return 0
    for f in result.files:
        chars = "-" if f.chars is None else str(f.chars)
        print_text(f"{f.tier:<17} {chars:>9} {tokens_cell(f.tokens):>8}  "
                   f"{display_path(f.path)}\n")
    if result.exact_tokens is not None:
        print_text(f"{'exact':<17} {'':>9} {result.exact_tokens:>8}  ({result.exact_model})\n")
    return 0


def _agent_list(args: argparse.Namespace, cwd: str, settings: Any) -> int:
    from memlens.agents import agent_by_id
    from memlens.protocol.memory import AgentListedFile, AgentListResult

    agent = agent_by_id(args.agent_id)
    memory = agent.load(cwd, settings)
    if args.json:
        print_json(AgentListResult(cwd=cwd, agent=agent.id, files=[
            AgentListedFile(path=f.path, tier=f.label, chars=f.chars)
            for f in memory.listing]).compact())
        return 0
    for f in memory.listing:
        size = "" if f.chars is None else f"{f.chars:>9}  "
        print_text(f"{escape_controls(f.label):<{agent.list_label_width}} {size}"
                   f"{display_path(f.path)}\n")
    return 0
