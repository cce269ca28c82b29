"""`memlens add FACT [--scope global|project]`: Gemini CLI's `save_memory` (or, with
`--memory-manager`, the memory manager agent routes the fact). With `--agent claude`: a topic
file in Claude Code's auto-memory folder and its pointer line in MEMORY.md
(agents/claude/memory_writing.py); a folder the repository's own settings chose is written only
with `--allow-repository-memory-folder` (exit 2 and one line naming it otherwise)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memlens.cli.common import Parser, UsageError, directory, print_text, settings_for


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    add = commands.add_parser("add", parents=[common], help=summary)
    add.add_argument("fact")
    add.add_argument("--scope", choices=["global", "project"], default=None,
                     help="where to save (default global)")
    add.add_argument("--json", action="store_true")
    add.add_argument("--memory-manager", action="store_true",
                     help="let the memory manager agent route the fact (needs a Gemini key)")
    claude = add.add_argument_group("with --agent claude (a topic file in its auto memory)")
    claude.add_argument("--type", choices=["user", "feedback", "project", "reference"],
                        dest="memory_type", help="the memory's type (default project)")
    claude.add_argument("--name", help="its name: a kebab-case slug, also the file's name "
                                       "(default: made from the fact's first words)")
    claude.add_argument("--description",
                        help="its one-line description (default: the fact's first line)")
    claude.add_argument("--allow-repository-memory-folder", action="store_true",
                        dest="allow_repository_folder",
                        help="write even when the repository's own .claude/settings.json or "
                             "settings.local.json chose the memory folder (autoMemoryDirectory)")


def run(args: argparse.Namespace) -> int:
    from memlens.agents.gemini.writing import EMPTY_FACT_ERROR, Scope, memory_target, save_memory

    if not args.fact.strip():
        raise UsageError(EMPTY_FACT_ERROR)
    cwd = directory(".")
    settings = settings_for(args, cwd)
    agent = getattr(args, "agent_id", "gemini")
    if agent == "claude":
        return _add_for_claude(args, settings.home, cwd)
    if agent != "gemini":
        raise UsageError(f"memlens add saves memory for Gemini CLI and Claude Code; {agent} "
                         "has no memory it writes")
    if args.memory_type or args.name or args.description or args.allow_repository_folder:
        raise UsageError("--type, --name, --description and --allow-repository-memory-folder "
                         "are for --agent claude")
    if args.memory_manager or settings.memory_manager:
        from memlens.cli.agent_commands import run_managed_add

        return run_managed_add(cwd, settings, args.fact, args.scope)
    scope: Scope = "project" if args.scope == "project" else "global"
    path = memory_target(settings.home, settings.context_file_names, cwd, scope)
    outcome = save_memory(args.fact, path, scope, home=settings.home)
    if args.json:
        print_text(outcome.llm_content + "\n")
    elif outcome.success:
        print_text(outcome.return_display + "\n")
    else:
        print(outcome.return_display, file=sys.stderr)
    return 0 if outcome.success else 1


def _add_for_claude(args: argparse.Namespace, home: str, cwd: str) -> int:
    from memlens.agents.claude.memory_writing import (
        MemoryRefused,
        RepositoryFolder,
        plan_memory,
        write_memory,
    )
    from memlens.cli.common import print_json

    if args.scope is not None or args.memory_manager:
        raise UsageError("--scope and --memory-manager are Gemini CLI's: Claude Code's memory "
                         "goes to its auto-memory folder")
    try:
        plan = plan_memory(home, cwd, args.fact, kind=args.memory_type, name=args.name,
                           description=args.description,
                           confirmed=args.allow_repository_folder)
        write_memory(plan)
    except RepositoryFolder as err:
        message = (f"{err} Run again with --allow-repository-memory-folder to write there.")
        if args.json:
            print_json({"success": False, "error": message, "folder": err.folder,
                        "chosenBy": "repository", "chosenIn": err.settings})
        else:
            print(f"memlens: {message}", file=sys.stderr)
        return 2
    except MemoryRefused as err:
        if args.json:
            print_json({"success": False, "error": str(err)})
        else:
            print(f"memlens: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        message = f"could not save the memory: {err}"
        if args.json:
            print_json({"success": False, "error": message})
        else:
            print(f"memlens: {message}", file=sys.stderr)
        return 1
    if args.json:
        print_json({"success": True, "path": plan.topic_path, "index": plan.index_path,
                    "name": plan.name, "type": plan.type, "description": plan.description,
                    "pointer": plan.pointer, "folder": plan.folder,
                    "chosenBy": plan.chosen_by, "chosenIn": plan.chosen_in})
    else:
        print_text(plan.summary() + "\n")
    return 0
