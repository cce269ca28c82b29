"""`memlens conflicts [PATH] [--agent A] [--json]`: every rule one agent receives together
with another that disagrees — at start-up or once a read brings a file in — with the one each
agent sees last, and the agents working in PATH that are told different things
(workspace/conflicts.py). Exit 0 (a finding is for a person to judge; `check --fail-on
warning` gates on it)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from memlens.cli.common import (
    Parser,
    UsageError,
    covered_agents,
    print_json,
    print_text,
    settings_for,
)


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    conflicts = commands.add_parser("conflicts", parents=[common], help=summary)
    conflicts.add_argument("path", nargs="?", default=".", metavar="PATH")
    conflicts.add_argument("--json", action="store_true", help="print ConflictsResult as JSON")


def run(args: argparse.Namespace) -> int:
    from memlens.agents import agent_by_id
    from memlens.files.output import display_path, escape_controls
    from memlens.workspace.conflicts import find_conflicts, folder_readings, result
    from memlens.workspace.reading import static_settings

    if not os.path.isdir(args.path):
        raise UsageError(f"not a folder: {args.path}")
    folder = os.path.realpath(args.path)
    settings = static_settings(settings_for(args, folder, notes=False))
    agents = [agent_by_id(a) for a in covered_agents(args, folder, settings)]
    answer = result(folder, agents, find_conflicts(folder_readings(folder, settings, agents)))
    if args.json:
        print_json(answer.wire())
        return 0
    for finding in answer.findings:
        rules = ", ".join(f"{r.value} ({_where(r.path, folder)}:{r.line})"
                          for r in finding.rules)
        print_text(escape_controls(f"{finding.severity}[{finding.code}] {finding.subject}: "
                                   f"{rules}") + "\n")
        for side in finding.agents:
            last = f"{_where(side.seen_last.path, folder)}:{side.seen_last.line}"
            said = (f"sees {side.seen_last.value} ({last}) last"
                    if finding.code == "instruction-conflict"
                    else f"is told {side.seen_last.value} ({last})")
            when = f"{side.label} at start-up" if side.when == "startup" else side.scope
            print_text(escape_controls(f"  {when}: {said}") + "\n")
    labels = ", ".join(agent_by_id(a).label for a in answer.agents)
    counts = {c: sum(f.code == c for f in answer.findings)
              for c in ("instruction-conflict", "agents-disagree")}
    print(f"memlens: {counts['instruction-conflict']} instruction-conflict(s), "
          f"{counts['agents-disagree']} agents-disagree in {display_path(args.path)}"
          + (f" ({labels})" if labels else ""), file=sys.stderr)
    return 0


def _where(path: str, folder: str) -> str:
    from memlens.files.output import display_path

    rel = os.path.relpath(path, folder)
    return display_path(rel if not rel.startswith("..") else path)
