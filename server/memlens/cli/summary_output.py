"""The summary `memlens show` and `memlens list` print first when they cover several agents,
and alone with `--summary` (docs/reference.md "The summary"): one line per agent, then one
indented line for each thing a user needs before the detail — what loads later and where, what
is cut, which of its files it does not read here. Rendered from workspace/summary.py."""

from __future__ import annotations

import argparse
import posixpath
from typing import Any

from memlens.cli.common import print_json, print_text, profile_name
from memlens.files.output import display_path, escape_controls
from memlens.protocol.summary import AgentSummary, FolderSummary, LaterFiles, NotReadGroup

# A folder list longer than this ends "and N more" (the summary stays one screen).
MAX_FOLDERS = 4
_NOT_READ = {"elsewhere": "read only when started elsewhere", "ignored": "ignored",
             "blank": "blank, not sent", "untrusted": "not read (folder not trusted)",
             "other": "not read"}


def summary_of(agent_ids: list[str], cwd: str, settings: Any) -> FolderSummary:
    from memlens.workspace.summary import folder_summary

    return folder_summary(agent_ids, cwd, settings,
                          {a: profile_name(a, settings) for a in agent_ids})


def print_summary(args: argparse.Namespace, agent_ids: list[str], cwd: str,
                  settings: Any) -> None:
    """The summary of `cwd` for `agent_ids`: JSON with `--json`, else text."""
    summary = summary_of(agent_ids, cwd, settings)
    if args.json:
        print_json(summary.wire())
    else:
        print_text(summary_text(summary, settings.home))


def summary_text(summary: FolderSummary, home: str) -> str:
    return "".join(_agent_lines(a, summary.cwd, home) for a in summary.agents)


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def _folder(path: str, cwd: str, home: str) -> str:
    """A folder as the user reads it: relative to the folder asked about (`./` for itself),
    `~/…` in HOME, else absolute."""
    if path == cwd:
        return "./"
    if path.startswith(cwd.rstrip("/") + "/"):
        return posixpath.relpath(path, cwd) + "/"
    if home and path.startswith(home.rstrip("/") + "/"):
        return "~/" + posixpath.relpath(path, home) + "/"
    return path + "/"


def _folders(folders: list[str], cwd: str, home: str) -> str:
    """The first folders, `and N more`; more than `MAX_FOLDERS` folders side by side are said
    once under their parent (`.agents/skills/ (17 folders)`: a skill folder each)."""
    parents: dict[str, int] = {}
    for folder in folders:
        parent = posixpath.dirname(folder)
        parents[parent] = parents.get(parent, 0) + 1
    cells: list[str] = []
    said: set[str] = set()
    for folder in folders:
        parent = posixpath.dirname(folder)
        if parents[parent] <= MAX_FOLDERS or parent == folder:
            cells.append(display_path(_folder(folder, cwd, home)))
        elif parent not in said:
            said.add(parent)
            cells.append(f"{display_path(_folder(parent, cwd, home))} "
                         f"({parents[parent]:,} folders)")
    more = len(cells) - MAX_FOLDERS
    return ", ".join(cells[:MAX_FOLDERS]) + (f" and {more:,} more" if more > 0 else "")


def _later(word: str, later: LaterFiles, cwd: str, home: str) -> str:
    line = f"  {word}: {_plural(later.files, 'file')}, ~{later.tokens:,} tokens, in " \
           f"{_folders(later.folders, cwd, home)}"
    if later.unmatched:
        line += f" ({later.unmatched:,} match no file today)"
    return line + "\n"


def _not_read(group: NotReadGroup, cwd: str, home: str) -> str:
    line = f"  {_NOT_READ[group.kind]}: {_plural(len(group.paths), 'file')} in " \
           f"{_folders(group.folders, cwd, home)}"
    if group.kind in ("ignored", "untrusted", "other"):
        line += f" ({escape_controls(group.why)})"
    return line + "\n"


def _agent_lines(agent: AgentSummary, cwd: str, home: str) -> str:
    start = agent.startup
    lines = [f"{agent.label} ({agent.profile}): "
             + (f"{_plural(start.files, 'file')} at start, {start.chars:,} chars, "
                f"~{start.tokens:,} tokens\n" if start.files else "nothing at start\n")]
    if agent.on_read.files:
        lines.append(_later("on read", agent.on_read, cwd, home))
    if agent.on_demand.files:
        lines.append(_later("on demand", agent.on_demand, cwd, home))
    if agent.listed.files:
        lines.append(_later("listed on read, not sent", agent.listed, cwd, home))
    for cut in agent.cut:
        lines.append(f"  cut: {display_path(_folder(cut.path, cwd, home).rstrip('/'))} at "
                     f"line {cut.line} ({escape_controls(cut.message)})\n")
    lines += [_not_read(g, cwd, home) for g in agent.not_read]
    return "".join(lines)
