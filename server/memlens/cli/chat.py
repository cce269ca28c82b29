"""`memlens chat [PROMPT]`: one turn of the editor's chat in the terminal (agent_commands.py)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memlens.cli.common import Parser, UsageError, directory, settings_for


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    chat = commands.add_parser("chat", parents=[common], help=summary)
    chat.add_argument("prompt", nargs="?")
    chat.add_argument("--json", action="store_true")
    chat.add_argument("--approval-mode", choices=["manual", "autoEdit", "deny"])


def run(args: argparse.Namespace) -> int:
    from memlens.cli.agent_commands import run_chat

    prompt = args.prompt
    if prompt is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("give a PROMPT (or pipe one on standard input)")
        prompt = sys.stdin.read()
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    cwd = directory(".")
    settings = settings_for(args, cwd)
    return run_chat(cwd, settings, prompt, as_json=args.json, approval_mode=args.approval_mode)
