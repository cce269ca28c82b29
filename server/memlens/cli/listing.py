"""`memlens list [PATH]`: the files each agent reads, in load order — under a header line, its
tier (Gemini CLI's) or its own label (another agent's), chars, and the agent's own token
estimate per file (`--count-exact`: the model's own count for Gemini CLI). Without `--agent`,
one section per agent covered (common.covered_agents); `--json`: the first agent covered."""

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
    section_header,
    settings_for,
    shown_agent,
)
from memlens.files.output import display_path, escape_controls


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    listing = commands.add_parser("list", parents=[common], help=summary)
    listing.add_argument("path", nargs="?", default=".", metavar="PATH")
    listing.add_argument("--json", action="store_true")
    listing.add_argument("--summary", action="store_true",
                         help="only the summary: per agent, what it reads at start, later and "
                              "where, what is cut, what it does not read here")
    listing.add_argument("--count-exact", action="store_true",
                         help="also count the tokens with the model's countTokens "
                              "(needs GEMINI_API_KEY)")


def run(args: argparse.Namespace) -> int:
    cwd = directory(args.path)
    settings = settings_for(args, cwd, notes=False)
    # One agent's JSON: `--agent`'s, else the first agent shown here (none: an empty answer
    # in Gemini CLI's schema, as `apply_agent` left `agent_id`, no notes).
    agents = covered_agents(args, cwd, settings)
    gemini_shown = "gemini" in agents
    if args.summary or (len(agents) > 1 and not args.json):
        from memlens.cli.summary_output import print_summary

        if gemini_shown:
            gemini_notes(settings, cwd)
        print_summary(args, agents, cwd, settings)  # the short answer first
        if args.summary:
            return 0
        gemini_shown = False  # its notes are said
    if args.json:
        shown = shown_agent(args, cwd, settings)
        agents = [shown or args.agent_id]
        gemini_shown = shown == "gemini"
    if gemini_shown:
        gemini_notes(settings, cwd)
    if getattr(args, "agent_default", False) and agents:
        args.agent_id = agents[0]  # the agent a lone section's "nothing loads" names
    listed = False
    for agent_id in agents:
        if len(agents) > 1:
            print_text("\n" + section_header(agent_id, settings) + "\n")
        alone = len(agents) == 1
        if agent_id == "gemini":
            listed |= _gemini_list(args, cwd, settings, alone=alone)
        else:
            listed |= _agent_list(args, agent_id, cwd, settings, alone=alone)
    if not listed and len(agents) == 1 and not args.json:
        nothing_note(args, cwd, settings)
    return 0


def _table(rows: list[tuple[str, str, str, str]]) -> str:
    """The columns `tier  chars  tokens  path`, under a header line, each as wide as its
    longest cell (a long label such as `rule (paths: …)` widens its column)."""
    rows = [("tier", "chars", "tokens", "path"), *rows]
    tier = max(len(r[0]) for r in rows)
    chars = max(len(r[1]) for r in rows)
    tokens = max(len(r[2]) for r in rows)
    return "".join(f"{r[0]:<{tier}}  {r[1]:>{chars}}  {r[2]:>{tokens}}  {r[3]}\n" for r in rows)


def _gemini_list(args: argparse.Namespace, cwd: str, settings: Any, *, alone: bool) -> bool:
    """Gemini CLI's files; whether it lists any."""
    from memlens.cli.budget_output import tokens_cell
    from memlens.workspace.queries import list_files

    result = list_files(cwd, settings)
    if args.count_exact:
        from memlens.cli.budget_output import with_exact

        with_exact(result, cwd, settings)
    if args.json:
        print_json(result.wire())
        return bool(result.files)
    rows: list[tuple[str, str, str, str]] = [
        (f.tier, "-" if f.chars is None else str(f.chars), tokens_cell(f.tokens),
         display_path(f.path)) for f in result.files]
    if result.exact_tokens is not None:
        rows.append(("exact", "", str(result.exact_tokens), f"({result.exact_model})"))
    _print_rows(rows, "gemini", alone=alone)
    return bool(result.files)


def _print_rows(rows: list[tuple[str, str, str, str]], agent_id: str, *, alone: bool
                ) -> None:
    """The table; an agent with nothing to list says so in its section (alone, on stderr:
    `nothing_note`)."""
    if rows:
        print_text(_table(rows))
    elif not alone:
        from memlens.agents import agent_by_id

        print_text(f"({agent_by_id(agent_id).nothing_loads})\n")


def _agent_list(args: argparse.Namespace, agent_id: str, cwd: str, settings: Any, *,
                alone: bool) -> bool:
    from memlens.agents import agent_by_id
    from memlens.cli.budget_output import tokens_cell
    from memlens.workspace.reading import agent_listing

    result = agent_listing(agent_by_id(agent_id), cwd, settings)
    if args.json:
        print_json(result.compact())
        return bool(result.files)
    _print_rows([(escape_controls(f.tier), "-" if f.chars is None else str(f.chars),
                  tokens_cell(f.tokens), display_path(f.path))
                 for f in result.files], agent_id, alone=alone)
    return bool(result.files)
