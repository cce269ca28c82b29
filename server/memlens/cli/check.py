"""`memlens check [PATH ...]`: every diagnostic for each folder (or file), as text, JSON,
GitHub workflow commands or SARIF; exit status 1 on any error."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from memlens.cli.common import (
    Parser,
    UsageError,
    positive,
    print_json,
    print_text,
    settings_for,
)
from memlens.files.output import display_path, escape_controls

if TYPE_CHECKING:
    from memlens.agents.base import MemoryAgent
    from memlens.protocol.memory import Diagnostic


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    check = commands.add_parser("check", parents=[common], help=summary)
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    check.add_argument("--format", choices=["text", "json", "github", "sarif"], default="text")
    check.add_argument("--max-indexed-folders", type=positive, metavar="N",
                       help="folders the walk for subfolder memory reads at most "
                            "(memlens.maxIndexedFolders, default 50,000)")


def run(args: argparse.Namespace) -> int:
    from memlens.agents import agent_by_id, primary
    from memlens.workspace.queries import check, check_file

    agent = agent_by_id(args.agent_id)
    other = agent is not primary()
    diagnostics = []
    for raw in args.paths:
        if not os.path.exists(raw):
            raise UsageError(f"no such file or directory: {raw}")
        real = os.path.realpath(raw)
        if os.path.isdir(real):
            settings = _check_settings(args, real)
            diagnostics += _profile_diagnostics(agent, real, settings)
            if not other:
                diagnostics += check(real, settings)
            else:  # its own checks (Codex: its byte budget), and hidden content even in
                # files without references (AGENTS.md)
                diagnostics += _check_agent_tree(agent, real, settings)
        elif other and not agent.has_references:
            continue
        else:
            diagnostics += check_file(real, _check_settings(args, os.path.dirname(real)))
    unique = {(d.path, d.line, d.col, d.code): d for d in diagnostics}
    ordered = sorted(unique.values(), key=lambda d: d.sort_key())
    if args.format == "json":
        print_json([d.wire() for d in ordered])
    elif args.format == "sarif":
        from memlens.reports.sarif import sarif_log

        print_json(sarif_log(ordered, [os.path.realpath(p) for p in args.paths]))
    elif args.format == "github":
        for d in ordered:
            level = {"error": "error", "warning": "warning", "info": "notice"}[d.severity]
            print_text(f"::{level} file={_gh_property(_display_path(d.path))},line={d.line},"
                       f"col={d.col},endLine={d.end_line},endColumn={d.end_col},"
                       f"title={_gh_property(d.code)}::{_gh_data(_with_detail(d))}\n")
    else:
        for d in ordered:
            # One line each (SPEC §7): the short message, then its detail.
            print_text(f"{_text_path(d.path)}:{d.line}:{d.col}: {d.severity}[{d.code}] "
                       f"{escape_controls(_with_detail(d))}\n")
        errors = sum(d.severity == "error" for d in ordered)
        warnings = sum(d.severity == "warning" for d in ordered)
        print(f"memlens: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
    return 1 if any(d.severity == "error" for d in ordered) else 0


def _check_settings(args: argparse.Namespace, cwd: str) -> Any:
    settings = settings_for(args, cwd)
    if args.max_indexed_folders is not None:
        settings = settings.model_copy(update={"max_indexed_folders": args.max_indexed_folders})
    return settings


def _check_agent_tree(agent: MemoryAgent, root: str, settings: Any) -> list[Diagnostic]:
    """Another agent's memory for `root`, checked: what it loads working there and in every
    subfolder its files put it to work in (Claude Code: each folder holding a CLAUDE.md)."""
    from memlens.agents.gemini.discovery import MemoryEngine
    from memlens.files.fsread import FileReader
    from memlens.workspace.queries import agent_hidden_check, workspace_files_named

    names = list(agent.file_names(settings))
    found = workspace_files_named(MemoryEngine(settings), [root], names)
    reader = FileReader()
    check = agent.check_workspace(settings, [root], [p for n in names for p in found[n]],
                                  reader)
    return [*check.diagnostics, *agent_hidden_check(agent, check, reader)]


def _profile_diagnostics(agent: MemoryAgent, root: str, settings: Any) -> list[Diagnostic]:
    """What the chosen profile of `agent` says about `root` (`agent-ignores-file`,
    `agent-version-unverified`)."""
    from memlens.agents import workspace_file_names
    from memlens.agents.gemini.discovery import MemoryEngine
    from memlens.files.fsread import FileReader
    from memlens.workspace.queries import profile_diagnostics, workspace_files_named

    reader = FileReader()
    names = workspace_file_names(settings)
    found = workspace_files_named(MemoryEngine(settings, reader), [root], names)
    return profile_diagnostics(settings, [root], [p for n in names for p in found[n]], reader,
                               only=agent.id)


def _with_detail(d: Diagnostic) -> str:
    """A terminal or CI log has room for the detail the Problems panel keeps apart."""
    return f"{d.message} — {d.detail}" if d.detail else d.message


def _display_path(path: str) -> str:
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else path


def _text_path(path: str) -> str:
    """A diagnostic's path for a text line: relative when inside the working folder, quoted
    when it holds a control character (output.display_path)."""
    return display_path(_display_path(path))


def _gh_data(text: str) -> str:
    """GitHub workflow-command escaping of a message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    """GitHub workflow-command escaping of a property value (also ':' and ',')."""
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")
