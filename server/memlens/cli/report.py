"""`memlens report [PATH]`: every memory and instruction file × every agent (when each agent
reads it, and why or why not), each agent's context at start-up, the diagnostics and the
hidden-content findings — as JSON (stdout, or `--json-file FILE`), one self-contained HTML
page (`--html FILE`) and a Markdown table for a CI job summary (`--markdown FILE`; in GitHub
Actions, `--markdown "$GITHUB_STEP_SUMMARY"` appends to the job's summary). `-` is stdout for
each; every file is written by `files.output.write_output`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from memlens.cli.common import Parser, UsageError, gemini_notes, print_json, settings_for


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    report = commands.add_parser("report", parents=[common], help=summary)
    report.add_argument("path", nargs="?", default=".", metavar="PATH")
    report.add_argument("--html", metavar="FILE",
                        help="write the report as one HTML page; - for stdout")
    report.add_argument("--markdown", metavar="FILE",
                        help="write (append, for $GITHUB_STEP_SUMMARY) the matrix as Markdown; "
                             "- for stdout")
    report.add_argument("--json", action="store_true",
                        help="print the JSON too when writing --html or --markdown")
    report.add_argument("--json-file", dest="json_file", metavar="FILE",
                        help="write the JSON to FILE instead of stdout; - for stdout")


def _write(option: str, target: str, text: str, *, append: bool = False) -> None:
    """One output option's file, through `files.output.write_output` (a device or FIFO is
    written in place, never replaced; a folder or a link to a file is refused: exit 2)."""
    from memlens.files.output import STDOUT, OutputError, display_path, write_output

    try:
        write_output(target, text, append=append)
    except OutputError as err:
        raise UsageError(f"{option}: {err}") from None
    if target != STDOUT:
        print(f"memlens: wrote {display_path(target)}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from memlens import __version__
    from memlens.cli.tty import Progress
    from memlens.files.output import display_path, json_safe, valid_utf8
    from memlens.reports.report import html_report, markdown_summary
    from memlens.workspace.matrix import agent_matrix

    if not os.path.isdir(args.path):
        raise UsageError(f"not a folder: {args.path}")
    folder = os.path.realpath(args.path)
    # `--agent X` narrows the report to that agent; by default every agent worth a column.
    agents = [args.agent_id] if getattr(args, "agent", None) else None
    settings = settings_for(args, folder, notes=False)
    with Progress("report") as progress:
        progress.step(f"every memory file × every agent in {display_path(folder)}")
        result = agent_matrix(folder, settings, agents=agents)
    if any(a.id == "gemini" for a in result.agents):  # its trust note where it is shown
        gemini_notes(settings, folder)
    if args.html:
        # A name that is not UTF-8 shows as U+FFFD, as a browser would show its bytes.
        _write("--html", args.html, valid_utf8(html_report(result, __version__)))
    if args.markdown:
        # Appended to a file: GitHub's job summary file gathers every step's output.
        _write("--markdown", args.markdown, markdown_summary(result), append=True)
    if args.json_file:
        # The same JSON as on stdout (`print_json`): valid UTF-8 whatever the names.
        _write("--json-file", args.json_file,
               json.dumps(json_safe(result.wire()), ensure_ascii=False, indent=1) + "\n")
    if not (args.html or args.markdown or args.json_file) or args.json:
        print_json(result.wire())
    return 0
