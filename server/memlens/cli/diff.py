"""`memlens diff [BASE [HEAD]]`: what each agent sends at start, per folder, compared between
two git revisions, or a revision and the working tree (issue 14, docs/reference.md "memlens diff").

Both sides are materialised in one temporary folder outside the repository (`diff_sides.py`:
a revision from its objects, the working tree as the files git lists), each with an empty
`.git` folder at its top (the project-root marker the agents stop at), and
always removed. Memory files git ignores (CLAUDE.local.md, a personal GEMINI.md) are copied
from the working tree into every side that lacks them: like HOME, they are the same on both
sides. The engine (`memlens.workspace.effective`) loads every folder of interest in both
trees for every agent, maps the temporary roots back to the real folder, and diffs the texts.
"""

from __future__ import annotations

import argparse
import functools
import os
import posixpath
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memlens.cli.diff_sides import (
    DiffUsageError,
    Entry,
    Selection,
    Side,
    commit_of,
    git_text,
    ignored_memory,
    listing,
    materialise,
    temporary_folder,
)

if TYPE_CHECKING:
    from memlens.cli.diff_files import FileDelta
    from memlens.cli.tty import Progress
    from memlens.model import MemorySettings
    from memlens.protocol.context_diff import ContextChangeEntry, DiffResult
    from memlens.workspace.effective import ChosenAgent, ContextChange

WORKING_TREE = "working tree"


def add_parser(commands: Any, common: Any, summary: str) -> None:
    """Register `memlens diff` on the CLI's subcommands."""
    diff = commands.add_parser(
        "diff", help=summary,
        description="Compare what each agent sends at start, in every folder of interest, "
                    "between BASE and HEAD (git revisions). No revision: HEAD against the "
                    "working tree; one: BASE against the working tree. Exit status 1 when "
                    "anything changed, 0 when nothing did, 2 on a usage error.")
    diff.add_argument("base", nargs="?", default=None, metavar="BASE")
    diff.add_argument("head", nargs="?", default=None, metavar="HEAD")
    diff.add_argument("--agent", action="append", dest="diff_agents", metavar="NAME[@VERSION]",
                      help="compare for this agent only (repeatable; default: "
                           "$MEMLENS_AGENTS, else the detected agents, else gemini@0.44+)")
    diff.add_argument("--format", dest="diff_format", choices=["text", "github"],
                      default="text")
    diff.add_argument("--stat", action="store_true",
                      help="just the summary: each agent's folders and tokens, and one line "
                           "per changed file")
    diff.add_argument("--json", action="store_true")
    diff.add_argument("--home", metavar="DIR",
                      help="home folder (default: $GEMINI_CLI_HOME, else your home)")
    trust = diff.add_mutually_exclusive_group()
    trust.add_argument("--trusted", action="store_true", default=None,
                       help="trust the folder (default: Gemini CLI's folder trust)")
    trust.add_argument("--untrusted", action="store_false", dest="trusted")


# --- agents ----------------------------------------------------------------------------------
def _agents(pins: list[str]) -> list[ChosenAgent]:
    from memlens.agent_versions import chosen_agents, detect_installed
    from memlens.workspace.effective import chosen

    if not pins:
        env = os.environ.get("MEMLENS_AGENTS", "")
        pins = [p.strip() for p in env.split(",") if p.strip()]
    needs_detection = not pins or any("@" not in p for p in pins)
    try:
        profiles = chosen_agents(pins, detect_installed() if needs_detection else {})
    except ValueError as err:
        raise DiffUsageError(str(err)) from None
    return chosen((p.agent, p.name, p.release or p.profile or None) for p in profiles)


def _with_agents_of_files(agents: list[ChosenAgent], sides: Sequence[Side], top: str,
                          prefix: str, settings: MemorySettings) -> list[ChosenAgent]:
    """`agents`, then every agent whose memory files either side holds in the folder compared
    (workspace/agents_here.py; an AGENTS.md is Codex's here: a commit adding one changes what
    Codex sends, even when only Gemini CLI is in use)."""
    from memlens.agent_versions import profile_for
    from memlens.workspace.agents_here import agents_to_cover, owners
    from memlens.workspace.effective import chosen

    rels: set[str] = set()
    for side in sides:
        rels |= {rel for rel in listing(side, top) if not prefix or rel.startswith(prefix + "/")}
    ids = owners((posixpath.join(top, rel) for rel in rels), settings)
    if any("/.claude/rules/" in "/" + rel for rel in rels):
        ids.append("claude")
    if any("/.cursor/rules/" in "/" + rel for rel in rels):
        ids.append("cursor")
    if any(f"/{d}/{sub}/" in "/" + rel for rel in rels for d in (".agents", ".agent")
           for sub in ("rules", "workflows")):
        ids.append("antigravity")
    # The AGENTS.md convention sends nothing (no payloads): Codex is who sends an AGENTS.md.
    ids = ["codex" if a == "agents" else a for a in ids]
    have = [a.id for a in agents]
    extra = [profile_for(a, None) for a in agents_to_cover(have, ids) if a not in have]
    return [*agents, *chosen((p.agent, p.name, p.release or p.profile or None)
                             for p in extra)]


# --- output ----------------------------------------------------------------------------------
def _relative(folder: str, root: str) -> str:
    rel = posixpath.relpath(folder, root)
    return "./" if rel == "." else rel + "/"


def _entry(change: ContextChange, agent: ChosenAgent, root: str) -> ContextChangeEntry:
    from memlens.protocol.context_diff import ContextChangeEntry
    from memlens.reports.budgets import estimate_tokens

    return ContextChangeEntry(agent=change.agent, agent_label=change.agent_label,
                              profile=agent.name, folder=change.folder,
                              relative_folder=posixpath.relpath(change.folder, root),
                              diff=change.diff, added=change.added, removed=change.removed,
                              tokens_before=estimate_tokens(change.agent, change.before),
                              tokens_after=estimate_tokens(change.agent, change.after))


def _annotated_file(entry: ContextChangeEntry, agent: ChosenAgent, top: str,
                    settings: MemorySettings) -> str:
    """The file a notice sits on, relative to the repository: the agent's own memory file in
    the folder, else any memory file there, else the folder."""
    from memlens.workspace.effective import memory_file_names

    own = list(agent.agent.file_names(settings))
    for name in [*own, *(n for n in memory_file_names(settings) if n not in own)]:
        for candidate in (posixpath.join(entry.folder, name),
                          posixpath.join(entry.folder, ".claude", name)):
            if os.path.isfile(candidate):
                return posixpath.relpath(candidate, top)
    return posixpath.relpath(entry.folder, top)


def _summary_line(result: DiffResult) -> str:
    if not result.changes:
        return (f"memlens: no change in what {', '.join(result.agents)} send(s) at start in "
                f"{len(result.folders)} folder(s) between {result.base} and {result.head}")
    from memlens.workspace.effective import ContextChange, summary

    changes = [ContextChange(e.agent, e.agent_label, e.folder, "", "", "", e.added, e.removed)
               for e in result.changes]
    return f"memlens: {summary(changes, f'{result.base} → {result.head}')}"


# --- the command -----------------------------------------------------------------------------
def _same(settings: MemorySettings, _folder: str) -> MemorySettings:
    return settings  # one tree, one workspace folder: its settings serve every folder


def _compare(args: argparse.Namespace, workdir: str, progress: Progress
             ) -> tuple[DiffResult, list[ChosenAgent], list[FileDelta], MemorySettings]:
    from memlens.agents.gemini.discovery import MemoryEngine
    from memlens.agents.gemini.settings import load_settings
    from memlens.agents.gemini.trust import decide_trust
    from memlens.cli.diff_files import changed_files
    from memlens.cli.diff_output import group_changes
    from memlens.protocol.context_diff import DiffResult
    from memlens.workspace.effective import (
        diff,
        effective_context,
        folders_of_interest,
        map_context,
    )
    from memlens.workspace.effective import memory_file_names as names_of
    from memlens.workspace.queries import workspace_files_named

    if args.home is not None and not os.path.isdir(args.home):
        raise DiffUsageError(f"home folder not found: {args.home}")
    inside = git_text(["rev-parse", "--is-inside-work-tree"], workdir, check=False).strip()
    if inside != "true":
        raise DiffUsageError(f"not a git repository (or not its work tree): {workdir}")
    top = os.path.realpath(git_text(["rev-parse", "--show-toplevel"], workdir).strip())
    prefix = git_text(["rev-parse", "--show-prefix"], workdir).strip().rstrip("/")
    root = posixpath.join(top, prefix) if prefix else top
    base_name = args.base or "HEAD"
    base = Side(base_name, commit_of(base_name, top), "")
    head = Side(args.head or WORKING_TREE, commit_of(args.head, top) if args.head else None, "")
    agents = _agents(list(args.diff_agents or []))

    real_settings = load_settings(root, home=args.home)
    if not args.diff_agents:
        agents = _with_agents_of_files(agents, (base, head), top, prefix, real_settings)
    trusted, _ = decide_trust(root, real_settings.home, explicit=args.trusted,
                              folder_trust_enabled=real_settings.folder_trust_enabled)
    with temporary_folder() as temp:
        if temp == top or temp.startswith(top.rstrip("/") + "/"):
            raise DiffUsageError(f"the temporary folder {temp} is inside the repository: set "
                                 "TMPDIR to a folder outside it")
        ignored = ignored_memory(top, set(names_of(real_settings)) | {"CLAUDE.local.md"})
        readable = set(names_of(real_settings)) | {"CLAUDE.local.md", "AGENTS.override.md"}
        for chosen_agent in agents:
            readable |= set(chosen_agent.agent.file_names(real_settings))
        selection = Selection(readable)
        contexts = []
        all_folders: set[str] = set()
        sides = []
        listings: list[tuple[Side, dict[str, Entry]]] = []
        for number, side in enumerate((base, head)):
            side.top = os.path.join(temp, str(number))
            progress.step(f"copying what the agents can read at {side.name}")
            entries = materialise(side, top, ignored, selection, agents, real_settings.home)
            listings.append((side, entries))
            side_root = posixpath.join(side.top, prefix) if prefix else side.top
            if not os.path.isdir(side_root):
                os.makedirs(side_root)
            settings = load_settings(side_root, home=args.home, cli={"trusted": trusted})
            found = workspace_files_named(MemoryEngine(settings), [side_root],
                                          names_of(settings))
            files = [p for paths in found.values() for p in paths]
            all_folders |= {posixpath.relpath(f, side_root)
                            for f in folders_of_interest([side_root], files)}
            sides.append((side, side_root, settings))
        relative = sorted(all_folders - {"."})
        for side, side_root, settings in sides:
            progress.step(f"what {len(agents)} agent(s) send in {len(relative) + 1} "
                          f"folder(s) at {side.name}")
            folders = [side_root, *(posixpath.join(side_root, f) for f in relative)]
            context = effective_context(agents, folders, functools.partial(_same, settings))
            # The tree's top is the repository's (files above the folder compared count too).
            contexts.append(map_context(context, side.top, top))
        progress.step("comparing the files")
        deltas = changed_files(listings, top)

    def names(key: tuple[str, str]) -> tuple[str, str]:
        folder = _relative(key[1], root)
        return f"{base.name}:{folder}", f"{head.name}:{folder}"

    by_id = {a.id: a for a in agents}
    changes = diff(contexts[0], contexts[1], [a.id for a in agents], names)
    result = DiffResult(repository=top, root=root, base=base.name, head=head.name,
                        base_commit=base.commit or "", head_commit=head.commit,
                        agents=[a.name for a in agents], folders=[".", *relative],
                        changes=[_entry(c, by_id[c.agent], root) for c in changes],
                        changed=bool(changes))
    result.groups = group_changes(result, deltas)
    # The files in the folder compared, above it, or that a change comes from.
    traced = {f for g in result.groups for f in g.files}
    deltas = [d for d in deltas if d.change.path in traced or _in_scope(d.change.path, prefix)]
    result.files = [d.change for d in deltas]
    return result, agents, deltas, real_settings


def _in_scope(path: str, prefix: str) -> bool:
    """`path` (relative to the repository's top) is in the folder compared or above it."""
    folder = posixpath.dirname(path)
    return (not prefix or path.startswith(prefix + "/")
            or prefix == folder or prefix.startswith(folder + "/") or not folder)


def run(args: argparse.Namespace) -> int:
    """`memlens diff`: exit 1 when anything changed, 0 when nothing did."""
    from memlens.cli.common import UsageError, print_json
    from memlens.cli.diff_output import render_github, render_text
    from memlens.cli.tty import Progress

    try:
        with Progress("diff") as progress:
            result, agents, deltas, settings = _compare(args, os.getcwd(), progress)
    except DiffUsageError as err:
        raise UsageError(str(err)) from None
    if args.json:
        print_json(result.wire())
    elif args.diff_format == "github":
        by_id = {a.id: a for a in agents}
        fallback = {}
        for number, group in enumerate(result.groups):
            first = result.changes[group.changes[0]]
            fallback[number] = _annotated_file(first, by_id[first.agent], result.repository,
                                               settings)
        sys.stdout.write(render_github(result, deltas, fallback))
    else:
        sys.stdout.write(render_text(result, agents, stat=args.stat))
    if not args.json:
        print(_summary_line(result), file=sys.stderr)
    return 1 if result.changed else 0
