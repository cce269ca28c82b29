"""`memlens add FACT [--scope global|project]`: Gemini CLI's `save_memory` (or, with
`--memory-manager`, the memory manager agent routes the fact)."""

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


def run(args: argparse.Namespace) -> int:
    from memlens.agents.gemini.writing import EMPTY_FACT_ERROR, Scope, memory_target, save_memory

    if not args.fact.strip():
        raise UsageError(EMPTY_FACT_ERROR)
    cwd = directory(".")
    settings = settings_for(args, cwd)
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
