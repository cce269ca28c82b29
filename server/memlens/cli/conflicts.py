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
    conflicts.add_argument("--model", action="store_true",
                           help="also ask the chat's model (Gemini, your key: GEMINI_API_KEY) "
                                "about each pair of files one agent receives together; its "
                                "findings are listed apart, as its judgement (cached by "
                                "content)")


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
    readings = folder_readings(folder, settings, agents)
    answer = result(folder, agents, find_conflicts(readings))
    if args.model:
        answer.model_findings, answer.model_notes = _model_pass(readings)
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
    if answer.model_findings is not None:
        found_any = answer.model_findings
        print_text(f"\nThe model's judgement ({found_any[0].model}; not the rule set's):\n"
                   if found_any else "\nThe model found no contradiction.\n")
        for found in answer.model_findings:
            first, second = found.rules
            print_text(escape_controls(
                f"model[contradiction] {_where(first.path, folder)}:{first.line} "
                f"{first.quote!r} vs {_where(second.path, folder)}:{second.line} "
                f"{second.quote!r}: {found.explanation} ({'; '.join(found.agents)})") + "\n")
        for note in answer.model_notes or []:
            print(f"memlens: {note}", file=sys.stderr)
    labels = ", ".join(agent_by_id(a).label for a in answer.agents)
    counts = {c: sum(f.code == c for f in answer.findings)
              for c in ("instruction-conflict", "agents-disagree")}
    print(f"memlens: {counts['instruction-conflict']} instruction-conflict(s), "
          f"{counts['agents-disagree']} agents-disagree in {display_path(args.path)}"
          + (f" ({labels})" if labels else ""), file=sys.stderr)
    return 0


def _model_pass(readings: Any) -> tuple[Any, list[str]]:
    """The model's findings (agent/conflict_review.py), with the chat's settings and key."""
    from memlens.agent.config import ChatSettings
    from memlens.agent.conflict_review import review
    from memlens.agent.gemini import NoApiKey, describe

    try:
        return review(readings, ChatSettings.from_sources(), None)
    except NoApiKey as error:
        raise UsageError(str(error).replace("to chat", "for --model")) from None
    except Exception as error:  # the API's and the transport's own errors
        raise UsageError(f"--model: {describe(error)}") from None


def _where(path: str, folder: str) -> str:
    from memlens.files.output import display_path

    rel = os.path.relpath(path, folder)
    return display_path(rel if not rel.startswith("..") else path)
