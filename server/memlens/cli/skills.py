"""`memlens skills [list|inbox|accept NAME|reject NAME|extract]`: the skills Gemini CLI offers,
and the inbox of skills the agent extracted (never live until accepted).

`memlens skills list --agent A` (gemini, claude, codex): every SKILL.md that agent looks at
here, the ones it offers and the ones it drops (with why), Claude Code's found on a read below
the folder after its start-up ones ("listed on read: when Claude Code reads a file under
web/"), and with `--json` its listing exactly as it sends it at start (`workspace/skills.py`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memlens.cli.common import (
    Parser,
    UsageError,
    directory,
    print_json,
    print_text,
    settings_for,
)
from memlens.files.output import display_path, escape_controls

ACTIONS = ("list", "inbox", "accept", "reject", "extract")


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    skills = commands.add_parser("skills", parents=[common], help=summary)
    skills.add_argument("action", nargs="?", default="list")
    skills.add_argument("name", nargs="?")
    skills.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    from memlens.agents.gemini import inbox
    from memlens.agents.gemini.skills import discover_skills
    from memlens.agents.gemini.trust import decide_trust
    from memlens.protocol.skills import InboxEntry, SkillEntry

    action = args.action
    if action not in ACTIONS:
        raise UsageError(f"unknown skills action {action!r} ({', '.join(ACTIONS)})")
    cwd = directory(".")
    settings = settings_for(args, cwd)
    home = settings.home
    # Workspace skills load only in a trusted folder (Gemini CLI's folder trust).
    trusted, _ = decide_trust(cwd, home, explicit=settings.trusted,
                              folder_trust_enabled=settings.folder_trust_enabled)
    if action == "list" and getattr(args, "agent", None) is not None:
        return _agent_list(args, cwd, home, trusted)
    if action == "list":
        skills = [SkillEntry(**s.to_dict(), tier=tier)
                  for s, tier in discover_skills(home, cwd, trusted)]
        if args.json:
            print_json([s.wire() for s in skills])
        else:
            for item in skills:
                print_text(f"{escape_controls(item.name)} ({item.tier}) — "
                           f"{escape_controls(item.description)}\n"
                           f"  {display_path(item.location)}\n")
        return 0
    if action == "inbox":
        items = inbox.list_inbox(home, cwd)
        if args.json:
            print_json([InboxEntry(name=i.name, path=i.path, description=i.description,
                                   problems=i.problems).wire() for i in items])
        else:
            for i in items:
                status = f"{len(i.problems)} problem(s)" if i.problems else "ready to accept"
                print_text(f"{escape_controls(i.name)} — {escape_controls(i.description)} "
                           f"[{status}]\n  {display_path(i.path)}\n")
            if not items:
                print("memlens: the skills inbox is empty", file=sys.stderr)
        return 0
    if action in ("accept", "reject"):
        if not args.name:
            raise UsageError(f"'memlens skills {action}' needs a skill NAME")
        try:
            if action == "accept":
                target = inbox.accept(home, cwd, args.name)
                print_text(f"Accepted {escape_controls(args.name)}: {display_path(target)}\n")
            else:
                inbox.reject(home, cwd, args.name)
                print_text(f"Rejected {escape_controls(args.name)}\n")
        except inbox.InboxError as err:
            raise UsageError(str(err)) from err
        return 0
    from memlens.cli.agent_commands import run_extraction

    return run_extraction(cwd, settings, as_json=args.json)


def _agent_list(args: argparse.Namespace, cwd: str, home: str, trusted: bool) -> int:
    from memlens.agent_versions import profile_for
    from memlens.workspace.queries import broad_folder
    from memlens.workspace.skills import SKILL_AGENTS, agent_skills

    agent = args.agent_id
    if agent not in SKILL_AGENTS:
        raise UsageError(f"memlens knows no skills listing for {agent!r} "
                         f"({', '.join(SKILL_AGENTS)} have one)")
    settings = settings_for(args, cwd)
    # the release a pin names (`codex@0.169` is 0.169.0), else the detected one
    version = settings.agent_version(agent)
    if version is None and args.agent and args.agent[0] == agent:
        version = profile_for(agent, args.agent[1]).release
    # Not below a folder refused as too broad: the skills found on a read need a walk of it.
    result = agent_skills(agent, home, cwd, trusted=trusted, version=version,
                          below=broad_folder(cwd, settings) is None)
    if args.json:
        print_json(result.wire())
        return 0
    for item in result.skills:
        by_name = ", by name only" if item.name_only else ""
        if item.on_read is not None:
            state = (f"listed on read{by_name}: {item.on_read}" if item.offered
                     else f"not offered {item.on_read}: {item.reason}")
        else:
            state = f"offered{by_name}" if item.offered else f"not offered: {item.reason}"
        # A skill it never loads has no description to show.
        described = f" — {escape_controls(item.description)}" if item.description else ""
        print_text(f"{escape_controls(item.name)} ({item.tier}, {state}){described}\n"
                   f"  {display_path(item.location)}\n")
    if not result.skills:
        print(f"memlens: {result.label} finds no skills here", file=sys.stderr)
    return 0
