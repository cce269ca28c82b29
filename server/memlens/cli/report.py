"""`memlens report [PATH]`: every memory and instruction file × every agent (when each agent
reads it, and why or why not), each agent's context at start-up, the diagnostics and the
hidden-content findings — as JSON (stdout, or `--json FILE`), one self-contained HTML page
(`--html FILE`) and a Markdown table for a CI job summary (`--markdown FILE`, `-` for stdout;
in GitHub Actions, `--markdown "$GITHUB_STEP_SUMMARY"` appends to the job's summary)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from memlens.cli.common import Parser, UsageError, print_json, settings_for


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    report = commands.add_parser("report", parents=[common], help=summary)
    report.add_argument("path", nargs="?", default=".", metavar="PATH")
    report.add_argument("--html", metavar="FILE", help="write the report as one HTML page")
    report.add_argument("--markdown", metavar="FILE",
                        help="write (append, for $GITHUB_STEP_SUMMARY) the matrix as Markdown; "
                             "- for stdout")
    report.add_argument("--json", action="store_true",
                        help="print the JSON too when writing --html or --markdown")
    report.add_argument("--json-file", dest="json_file", metavar="FILE",
                        help="write the JSON to FILE instead of stdout")


def run(args: argparse.Namespace) -> int:
    from memlens import __version__
    from memlens.agents.gemini.writing import atomic_write
    from memlens.reports.report import html_report, markdown_summary
    from memlens.workspace.matrix import agent_matrix

    if not os.path.isdir(args.path):
        raise UsageError(f"not a folder: {args.path}")
    folder = os.path.realpath(args.path)
    # `--agent X` narrows the report to that agent; by default every agent worth a column.
    agents = [args.agent_id] if getattr(args, "agent", None) else None
    result = agent_matrix(folder, settings_for(args, folder), agents=agents)
    wrote = False
    if args.html:
        atomic_write(os.path.abspath(args.html), html_report(result, __version__))
        print(f"memlens: wrote {args.html}", file=sys.stderr)
        wrote = True
    if args.markdown:
        text = markdown_summary(result)
        if args.markdown == "-":
            sys.stdout.write(text)
        else:
            # Appended: GitHub's job summary file gathers every step's output.
            with open(args.markdown, "a", encoding="utf-8") as handle:
                handle.write(text)
            print(f"memlens: wrote {args.markdown}", file=sys.stderr)
        wrote = True
    if args.json_file:
        atomic_write(os.path.abspath(args.json_file), result.model_dump_json(by_alias=True,
                                                                            indent=1) + "\n")
        wrote = True
    if not wrote or args.json:
        print_json(result.wire())
    return 0
