"""`memlens show [PATH]`: what the agent reads working in PATH — Gemini CLI's merged memory
(`--render flat|prompt`, `--json`: ShowResult), or another agent's exact text; with `--agent`
and `--json`, that agent's files at start and on read and the strings it sends
(AgentShowResult, SPEC §7)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memlens.cli.common import (
    Parser,
    directory,
    print_json,
    print_text,
    profile_info,
    settings_for,
    shows_primary,
)


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    show = commands.add_parser("show", parents=[common], help=summary)
    show.add_argument("path", nargs="?", default=".", metavar="PATH")
    show.add_argument("--render", choices=["flat", "prompt"], default="flat")
    show.add_argument("--json", action="store_true")
    show.add_argument("--count-exact", action="store_true",
                      help="with --json: also count the tokens with the model's countTokens "
                           "(needs GEMINI_API_KEY)")


def run(args: argparse.Namespace) -> int:
    cwd = directory(args.path)
    settings = settings_for(args, cwd)
    if args.json and (args.agent is not None or not shows_primary(args)):
        return _agent_show(args, cwd, settings)
    if not shows_primary(args):
        return _agent_text(args, cwd, settings)
    from memlens.workspace.queries import show

    result = show(cwd, settings, with_diagnostics=args.json)
    if args.json and args.count_exact:
        from memlens.cli.budget_output import with_exact

        with_exact(result, cwd, settings)
    if args.json:
        print_json(result.wire())
        return 0
    text = result.content if args.render == "flat" else result.prompt + result.session_memory
    if text:
        print_text(text + "\n")
    else:
        print("memlens: no memory files loaded", file=sys.stderr)
    return 0


def _agent_show(args: argparse.Namespace, cwd: str, settings: Any) -> int:
    """`show --agent A --json` (SPEC §7): the agent's files at start and on read, and the
    exact strings it sends."""
    from memlens.agents import agent_by_id
    from memlens.workspace.queries import agent_show

    print_json(agent_show(agent_by_id(args.agent_id), cwd, settings,
                          profile_info(args, settings)).wire())
    return 0


def _agent_text(args: argparse.Namespace, cwd: str, settings: Any) -> int:
    """Another agent's text: exactly what it sends at start (cut at maxContextChars)."""
    from memlens.agents import agent_by_id
    from memlens.workspace.queries import truncate

    agent = agent_by_id(args.agent_id)
    memory = agent.load(cwd, settings)
    text, _ = truncate(memory.text, settings.max_context_chars, agent.receiver)
    if text:
        print_text(text + "\n")
    else:
        print(f"memlens: {agent.nothing_loads}", file=sys.stderr)
    return 0
