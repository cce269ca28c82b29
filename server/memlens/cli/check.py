"""`memlens check [PATH ...]`: every diagnostic for each folder (or file), as text, JSON,
GitHub workflow commands or SARIF; exit status 1 on any diagnostic at or above `--fail-on`
(error by default).

A check is static analysis: a folder's memory files are checked whatever Gemini CLI's folder
trust (one line says when Gemini CLI would not load them). Without `--agent` it covers the
agents in use and every agent whose files the folder holds (common.covered_agents); `--budget
[AGENT=]N` adds `context-over-budget` errors."""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from memlens.cli.common import (
    Parser,
    UsageError,
    covered_agents,
    gemini_notes,
    in_use,
    nothing_note,
    positive,
    print_json,
    print_text,
    settings_for,
    shows_gemini,
)
from memlens.files.output import display_path, escape_controls

if TYPE_CHECKING:
    from memlens.agents.base import MemoryAgent
    from memlens.cli.tty import Progress
    from memlens.protocol.memory import Diagnostic


# Severities from the most severe: `--fail-on LEVEL` fails on LEVEL and every one before it.
FAIL_LEVELS = ("error", "warning", "info")
# Findings about a file, not about one agent: whichever agent's check finds one says it for all.
_ABOUT_THE_FILE = frozenset({"hidden-comment", "hidden-text"})


def fails(ordered: list[Diagnostic], fail_on: str) -> bool:
    """Whether a diagnostic at or above `fail_on` is among `ordered`."""
    failing = FAIL_LEVELS[:FAIL_LEVELS.index(fail_on) + 1]
    return any(d.severity in failing for d in ordered)


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    check = commands.add_parser("check", parents=[common], help=summary)
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    check.add_argument("--format", choices=["text", "json", "github", "sarif"], default="text")
    check.add_argument("--fail-on", choices=list(FAIL_LEVELS), default="error",
                       help="exit status 1 when a diagnostic at or above this severity is "
                            "found (default error; warning gates on warnings too, info on "
                            "anything)")
    check.add_argument("--max-indexed-folders", type=positive, metavar="N",
                       help="folders the walk for subfolder memory reads at most "
                            "(memlens.maxIndexedFolders, default 50,000)")
    check.add_argument("--budget", action="append", type=budget_spec, metavar="[AGENT=]N",
                       dest="budgets",
                       help="a token budget (each agent's own estimate, as memlens.budget): "
                            "a folder whose memory passes it is a context-over-budget error; "
                            "AGENT=N for one agent (repeatable)")


def budget_spec(value: str) -> tuple[str | None, int]:
    """`--budget N` (every agent) or `--budget AGENT=N`."""
    from memlens.agents import AGENT_IDS

    name, sep, number = value.rpartition("=")
    if sep and name not in AGENT_IDS:
        raise argparse.ArgumentTypeError(
            f"unknown agent {name!r} (one of {', '.join(AGENT_IDS)})")
    return (name or None), positive(number)


def run(args: argparse.Namespace) -> int:
    from memlens.cli.tty import Progress, colour_on, paint

    budgets = dict(args.budgets or [])
    named = [a for a in budgets if a is not None]
    if args.agent is not None and any(a != args.agent_id for a in named):
        raise UsageError(f"--budget names {', '.join(a for a in named if a != args.agent_id)}"
                         f", which --agent {args.agent_id} leaves out")
    diagnostics: list[Diagnostic] = []
    checked: list[str] = []
    with Progress("check") as progress:
        _check_paths(args, budgets, named, diagnostics, checked, progress)
    # The same finding from several agents' checks is said once. Hidden content is a fact
    # about the file: the first check's finding (Gemini CLI's, naming every agent that
    # receives it) stands for all. Any other finding is one agent's own, and agents that say
    # different things at one place (OpenCode's and pi's `agent-ignores-file` on a CLAUDE.md)
    # are each said, or one would hide the other.
    unique: dict[tuple[str, int, int, str, str], Diagnostic] = {}
    for d in diagnostics:
        said = "" if d.code in _ABOUT_THE_FILE else d.message
        unique.setdefault((d.path, d.line, d.col, d.code, said), d)
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
        # On a terminal the severities are in colour (NO_COLOR turns it off); piped, plain.
        coloured = colour_on(sys.stdout)
        for d, same in _said_once(ordered):
            # One line each (docs/reference.md "The command line"): the short message, then its
            # detail; the same finding on other files is said once, with their paths under it.
            label = f"{d.severity}[{d.code}]"
            print_text(f"{_text_path(d.path)}:{d.line}:{d.col}: "
                       f"{paint(label, d.severity) if coloured else label} "
                       f"{escape_controls(_with_detail(d))}\n")
            if same:
                print_text(f"  the same on {len(same)} more file{'s' if len(same) > 1 else ''}: "
                           + ", ".join(_text_path(o.path) for o in same) + "\n")
        print(_summary(ordered, checked), file=sys.stderr)
    return 1 if fails(ordered, args.fail_on) else 0


def _check_paths(args: argparse.Namespace, budgets: dict[str | None, int], named: list[str],
                 diagnostics: list[Diagnostic], checked: list[str], progress: Progress) -> None:
    """Every PATH's diagnostics into `diagnostics`, the agents checked into `checked`."""
    from memlens.agents import agent_by_id
    from memlens.workspace.agents_here import owner
    from memlens.workspace.queries import check_file

    for raw in args.paths:
        if not os.path.exists(raw):
            raise UsageError(f"no such file or directory: {raw}")
        real = os.path.realpath(raw)
        progress.step(f"reading {display_path(raw)}")
        if os.path.isdir(real):
            settings = _check_settings(args, real)
            agents = list(dict.fromkeys([*covered_agents(args, real, settings), *named]))
            checked += agents
            if "gemini" in agents:
                gemini_notes(settings, real, checking=True)
            settings = _static(settings)
            # What a profile says (`agent-ignores-file`...) concerns the agents in use, as in
            # the editor; an agent covered only for its files gets its memory checked.
            agents_in_use = in_use(args, settings)
            for number, agent_id in enumerate(agents, 1):
                agent = agent_by_id(agent_id)
                progress.step(f"{agent.label} in {display_path(raw)} ({number} of "
                              f"{len(agents)} agents)")
                found = _check_folder(agent, real, settings, profile=agent_id in agents_in_use,
                                      receivers=agents)
                limit = budgets.get(agent_id, budgets.get(None))
                if limit is not None:
                    found += _over_budget(agent, real, settings, limit)
                # Gemini CLI's first: of equal findings the first wins, and its hidden
                # content check names every agent checked here that reads a file.
                if agent.rendered_by_index:
                    diagnostics[0:0] = found
                else:
                    diagnostics += found
                if args.agent is not None and not found and _loads_nothing(agent, real,
                                                                            settings):
                    nothing_note(args, real, settings)
            # Rules the agents receive together that disagree, and agents told different
            # things (workspace/conflicts.py; the report lists the same).
            diagnostics += _conflicts(real, settings, agents)
        elif args.agent_id != "gemini" and not agent_by_id(args.agent_id).has_references:
            continue
        else:
            settings = _check_settings(args, os.path.dirname(real))
            checked.append(args.agent_id)
            # Gemini CLI's trust note where Gemini CLI is shown: asked for, in use, or the
            # file is one of its own.
            if shows_gemini(args) and (not args.agent_default
                                        or "gemini" in in_use(args, settings)
                                        or owner(real, settings) == "gemini"):
                gemini_notes(settings, os.path.dirname(real), checking=True)
            diagnostics += check_file(real, _static(settings))


def _summary(ordered: list[Diagnostic], checked: list[str]) -> str:
    """`memlens: 1 error(s), 2 warning(s), 3 info(s) (Gemini CLI, Claude Code)`: every
    severity counted, and the agents whose memory was checked."""
    from memlens.agents import agent_by_id

    counts = {s: sum(d.severity == s for d in ordered) for s in ("error", "warning", "info")}
    labels = ", ".join(agent_by_id(a).label for a in dict.fromkeys(checked))
    return (f"memlens: {counts['error']} error(s), {counts['warning']} warning(s), "
            f"{counts['info']} info(s)" + (f" ({labels})" if labels else ""))


def _check_settings(args: argparse.Namespace, cwd: str) -> Any:
    settings = settings_for(args, cwd, notes=False)
    if args.max_indexed_folders is not None:
        settings = settings.model_copy(update={"max_indexed_folders": args.max_indexed_folders})
    return settings


def _static(settings: Any) -> Any:
    from memlens.workspace.reading import static_settings

    return static_settings(settings)


def _check_folder(agent: MemoryAgent, root: str, settings: Any, *, profile: bool,
                  receivers: list[str]) -> list[Diagnostic]:
    """One agent's diagnostics for `root` (workspace/reading.py `agent_check`: the report
    lists the same); a hidden-content finding names the agents of `receivers` (the agents
    checked there) that receive the file."""
    from memlens.workspace.reading import agent_check

    return agent_check(agent, root, settings, profile=profile, receivers=receivers)


def _conflicts(root: str, settings: Any, agent_ids: list[str]) -> list[Diagnostic]:
    from memlens.agents import agent_by_id
    from memlens.workspace.conflicts import diagnostics, find_conflicts, folder_readings

    readings = folder_readings(root, settings, [agent_by_id(a) for a in agent_ids])
    return diagnostics(find_conflicts(readings), root)


def _loads_nothing(agent: MemoryAgent, root: str, settings: Any) -> bool:
    return not any(f.content is not None for f in agent.load(root, settings).files)


def _over_budget(agent: MemoryAgent, root: str, settings: Any, limit: int) -> list[Diagnostic]:
    """`context-over-budget` (an error: `--budget` gates CI) when what `agent` loads at start
    working in `root` passes `limit` tokens by its own estimate; on line 1 of the folder's
    first memory file (inside the folder and outside HOME, else the first it loads)."""
    from memlens.files.nodecompat import is_subpath
    from memlens.reports.budgets import context_budget, over_budget

    files = [f for f in agent.load(root, settings).files
             if f.content is not None and f.when == "startup"]
    inside = [f.path for f in files if is_subpath(root, f.path)
              and not is_subpath(settings.home, f.path)]
    first = next(iter(inside or [f.path for f in files]), None)
    budget = context_budget(agent.id, [(f.path, f.label, f.content) for f in files])
    found = over_budget(budget, limit, first, agent.label, source="--budget",
                        severity="error")
    return [found] if found else []


def _said_once(ordered: list[Diagnostic]) -> list[tuple[Diagnostic, list[Diagnostic]]]:
    """Each finding once, at its first file, with the other files it is word for word the same
    on (the nested AGENTS.md files one agent never reads: one reason, said once). Only text
    output folds them; JSON, SARIF and GitHub annotations keep one entry per file."""
    groups: dict[tuple[str, str, str, str | None], tuple[Diagnostic, list[Diagnostic]]] = {}
    for d in ordered:
        key = (d.severity, d.code, d.message, d.detail)
        if key in groups:
            groups[key][1].append(d)
        else:
            groups[key] = (d, [])
    return list(groups.values())


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
