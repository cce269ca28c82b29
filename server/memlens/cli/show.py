"""`memlens show [PATH]`: what the agent reads working in PATH — Gemini CLI's merged memory
(`--render flat|prompt`, `--json`: ShowResult), or another agent's exact text; with `--agent`
and `--json`, that agent's files at start and on read and the strings it sends
(AgentShowResult, docs/reference.md "Which agent, which version"). Without `--agent` (and without
`--json`), one section per agent covered (common.covered_agents), each under a `==> Label (profile)
<==` line; one agent's text alone when only one is covered; `--json` without `--agent`: the first
agent covered."""

from __future__ import annotations

import argparse
from typing import Any

from memlens.cli.common import (
    Parser,
    covered_agents,
    directory,
    gemini_notes,
    nothing_note,
    print_json,
    print_text,
    profile_info,
    section_header,
    settings_for,
    shown_agent,
    shows_gemini,
)


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    show = commands.add_parser("show", parents=[common], help=summary)
    show.add_argument("path", nargs="?", default=".", metavar="PATH")
    show.add_argument("--render", choices=["flat", "prompt"], default="flat")
    show.add_argument("--json", action="store_true")
    show.add_argument("--summary", action="store_true",
                      help="only the summary: per agent, what it reads at start, later and "
                           "where, what is cut, what it does not read here")
    show.add_argument("--count-exact", action="store_true",
                      help="with --json: also count the tokens with the model's countTokens "
                           "(needs GEMINI_API_KEY)")


def run(args: argparse.Namespace) -> int:
    cwd = directory(args.path)
    settings = settings_for(args, cwd, notes=False)
    if args.summary:
        return _summary_only(args, cwd, settings)
    # One agent's JSON (its schema): `--agent`'s, else the first agent shown here.
    if args.json:
        shown = shown_agent(args, cwd, settings)
        agents = [shown] if shown else []
    else:
        agents = covered_agents(args, cwd, settings)
        if not agents:
            return 0
        if getattr(args, "agent_default", False):
            args.agent_id = agents[0]
    if "gemini" in agents:
        gemini_notes(settings, cwd)
    if args.json and (args.agent is not None or not shows_gemini(args)):
        loaded = _agent_show(args, cwd, settings)
    elif len(agents) > 1:
        from memlens.cli.summary_output import print_summary

        print_summary(args, agents, cwd, settings)  # the short answer first
        for agent_id in agents:
            print_text("\n" + section_header(agent_id, settings) + "\n")
            _section(args, agent_id, cwd, settings)
        return 0
    elif not shows_gemini(args):
        loaded = _agent_text(args.agent_id, cwd, settings)
    else:
        loaded = _gemini(args, cwd, settings)
    if not loaded and agents:  # no agent here at all: covered_agents said so
        nothing_note(args, cwd, settings)
    return 0


def _summary_only(args: argparse.Namespace, cwd: str, settings: Any) -> int:
    """`--summary`: the summary of every agent covered (`--agent`'s alone), text or JSON."""
    from memlens.cli.summary_output import print_summary

    agents = covered_agents(args, cwd, settings)
    if "gemini" in agents:
        gemini_notes(settings, cwd)
    print_summary(args, agents, cwd, settings)
    return 0


def _section(args: argparse.Namespace, agent_id: str, cwd: str, settings: Any) -> None:
    """One agent's text in a show covering several: its exact text, or why there is none."""
    from memlens.agents import agent_by_id

    if agent_id == "gemini":
        result_text = _gemini_text(args, cwd, settings)
    else:
        result_text = _agent_string(agent_id, cwd, settings)
    print_text(result_text + "\n" if result_text
               else f"({agent_by_id(agent_id).nothing_loads})\n")


def _gemini_text(args: argparse.Namespace, cwd: str, settings: Any) -> str:
    from memlens.workspace.queries import show

    result = show(cwd, settings, with_diagnostics=False)
    return result.content if args.render == "flat" else result.prompt + result.session_memory


def _gemini(args: argparse.Namespace, cwd: str, settings: Any) -> bool:
    """Gemini CLI's merged memory (text or ShowResult); whether any file loaded."""
    from memlens.workspace.queries import show

    result = show(cwd, settings, with_diagnostics=args.json)
    if args.json and args.count_exact:
        from memlens.cli.budget_output import with_exact

        with_exact(result, cwd, settings)
    if args.json:
        print_json(result.wire())
        return bool(result.files)
    text = result.content if args.render == "flat" else result.prompt + result.session_memory
    if text:
        print_text(text + "\n")
    return bool(text)


def _agent_show(args: argparse.Namespace, cwd: str, settings: Any) -> bool:
    """`show --agent A --json` (docs/reference.md "Which agent, which version"): the agent's files
    at start and on read, and the exact strings it sends."""
    from memlens.agents import agent_by_id
    from memlens.workspace.reading import agent_show

    result = agent_show(agent_by_id(args.agent_id), cwd, settings,
                        profile_info(args, settings))
    print_json(result.wire())
    return bool(result.files)


def _agent_string(agent_id: str, cwd: str, settings: Any) -> str:
    """Another agent's text: exactly what it sends at start (cut at maxContextChars; the
    answer `memlens mcp` gives too: workspace/queries.py `startup_text`)."""
    from memlens.agents import agent_by_id
    from memlens.workspace.queries import startup_text

    return startup_text(agent_by_id(agent_id), cwd, settings)


def _agent_text(agent_id: str, cwd: str, settings: Any) -> bool:
    """Another agent's text alone; whether it sends any."""
    text = _agent_string(agent_id, cwd, settings)
    if text:
        print_text(text + "\n")
    return bool(text)
