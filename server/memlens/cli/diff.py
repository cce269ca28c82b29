"""`memlens diff [BASE [HEAD]]`: what each agent sends at start, per folder, compared between
two git revisions, or a revision and the working tree (issue 14, README "memlens diff").

Both sides are materialised in one temporary folder outside the repository (a revision with
`git archive`, the working tree as the files git lists: tracked and untracked, not ignored),
each with an empty `.git` folder at its top (the project-root marker the agents stop at), and
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
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memlens.files.output import escape_controls

if TYPE_CHECKING:
    from memlens.model import MemorySettings
    from memlens.protocol.context_diff import ContextChangeEntry, DiffResult
    from memlens.workspace.effective import ChosenAgent, ContextChange

WORKING_TREE = "working tree"
GITHUB_DIFF_LINES = 60  # lines of the diff a `--format github` notice carries at most


class DiffUsageError(Exception):
    """A usage problem (not a git repository, unknown revision): one line, exit 2."""


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
    diff.add_argument("--json", action="store_true")
    diff.add_argument("--home", metavar="DIR",
                      help="home folder (default: $GEMINI_CLI_HOME, else your home)")
    trust = diff.add_mutually_exclusive_group()
    trust.add_argument("--trusted", action="store_true", default=None,
                       help="trust the folder (default: Gemini CLI's folder trust)")
    trust.add_argument("--untrusted", action="store_false", dest="trusted")


# --- git -------------------------------------------------------------------------------------
def _git(args: Sequence[str], cwd: str, *, check: bool = True) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True,
                              stdin=subprocess.DEVNULL, check=False)
    except OSError as err:
        raise DiffUsageError(f"cannot run git: {err.strerror or err}") from None
    if check and proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DiffUsageError(f"git {args[0]} failed: {message[-1] if message else 'error'}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def _commit(rev: str, top: str) -> str:
    if rev.startswith("-"):
        raise DiffUsageError(f"unknown revision {rev!r}")
    out = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
               top, check=False).strip()
    if not out:
        raise DiffUsageError(f"unknown revision {rev!r} (not a commit in {top})")
    return out


def _listed(args: Sequence[str], top: str) -> list[str]:
    return [p for p in _git([*args, "-z"], top).split("\0") if p]


def _safe_member(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's `data` filter (no absolute paths, no links out of the tree, no devices); a
    member it refuses (a symlink pointing outside the repository) is left out."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


def _archive(commit: str, top: str, dest: str) -> None:
    """The revision's tree, extracted under `dest` (git archive, read as a stream)."""
    os.makedirs(dest)
    proc = subprocess.Popen(["git", "archive", "--format=tar", commit], cwd=top,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    try:
        with tarfile.open(fileobj=proc.stdout, mode="r|") as archive:
            archive.extractall(dest, filter=_safe_member)
    finally:
        proc.stdout.close()
        errors = proc.stderr.read() if proc.stderr else b""
        if proc.stderr:
            proc.stderr.close()
        code = proc.wait()
    if code != 0:
        raise DiffUsageError(f"git archive {commit[:12]} failed: "
                             f"{errors.decode('utf-8', 'replace').strip()}")


def _copy(top: str, rel: str, dest: str) -> None:
    source = os.path.join(top, rel)
    target = os.path.join(dest, rel)
    if os.path.islink(source):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.readlink(source), target)
    elif os.path.isfile(source):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)


def _working_tree(top: str, dest: str) -> None:
    """The working tree's files git lists (tracked and untracked, not ignored), copied."""
    os.makedirs(dest)
    for rel in _listed(["ls-files", "--cached", "--others", "--exclude-standard"], top):
        _copy(top, rel, dest)


def _ignored_memory(top: str, names: set[str]) -> list[str]:
    """Memory files in the working tree that git ignores (personal files: CLAUDE.local.md)."""
    return [rel for rel in _listed(["ls-files", "--others", "--ignored", "--exclude-standard"],
                                   top) if posixpath.basename(rel) in names]


@dataclass
class _Side:
    name: str  # as given: "HEAD", "main~1", "working tree"
    commit: str | None  # None: the working tree
    top: str  # its materialised top folder


def _materialise(side: _Side, top: str, ignored: list[str]) -> None:
    if side.commit is None:
        _working_tree(top, side.top)
    else:
        _archive(side.commit, top, side.top)
    for rel in ignored:
        if not os.path.lexists(os.path.join(side.top, rel)):
            _copy(top, rel, side.top)
    # The project-root marker the agents stop at (the real one is the repository's .git).
    os.makedirs(os.path.join(side.top, ".git"), exist_ok=True)


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
    return chosen((p.agent, p.name, p.installed or p.profile or None) for p in profiles)


# --- output ----------------------------------------------------------------------------------
def _relative(folder: str, root: str) -> str:
    rel = posixpath.relpath(folder, root)
    return "./" if rel == "." else rel + "/"


def _entry(change: ContextChange, agent: ChosenAgent, root: str) -> ContextChangeEntry:
    from memlens.protocol.context_diff import ContextChangeEntry

    return ContextChangeEntry(agent=change.agent, agent_label=change.agent_label,
                              profile=agent.name, folder=change.folder,
                              relative_folder=posixpath.relpath(change.folder, root),
                              diff=change.diff, added=change.added, removed=change.removed)


def _gh_data(text: str) -> str:
    """GitHub workflow-command escaping of a message (as `check --format github`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    """GitHub workflow-command escaping of a property value (also ':' and ',')."""
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


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


def _print_github(result: DiffResult, agents: dict[str, ChosenAgent],
                  settings: MemorySettings) -> None:
    for entry in result.changes:
        agent = agents[entry.agent]
        folder = _relative(entry.folder, result.root)
        lines = entry.diff.splitlines()
        shown = "\n".join(lines[:GITHUB_DIFF_LINES])
        if len(lines) > GITHUB_DIFF_LINES:
            shown += f"\n… {len(lines) - GITHUB_DIFF_LINES} more line(s): run memlens diff"
        message = (f"What {entry.agent_label} ({entry.profile}) sends at start working in "
                   f"{folder} changes between {result.base} and {result.head}: "
                   f"+{entry.added} −{entry.removed} line(s)\n{shown}")
        title = f"{entry.agent_label} context changed in {folder}"
        where = _annotated_file(entry, agent, result.repository, settings)
        sys.stdout.write(f"::notice file={_gh_property(where)},"
                         f"title={_gh_property(title)}::{_gh_data(message)}\n")


def _print_text(result: DiffResult) -> None:
    for entry in result.changes:
        folder = _relative(entry.folder, result.root)
        sys.stdout.write(f"memlens diff {entry.profile} {escape_controls(folder)}: what "
                         f"{entry.agent_label} sends at start working in "
                         f"{escape_controls(folder)} ({result.base} → {result.head})\n")
        sys.stdout.write(escape_controls(entry.diff, keep="\n\t"))


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


def _compare(args: argparse.Namespace, workdir: str) -> tuple[DiffResult, dict[str, Any],
                                                             MemorySettings]:
    from memlens.agents.gemini.discovery import MemoryEngine
    from memlens.agents.gemini.settings import load_settings
    from memlens.agents.gemini.trust import decide_trust
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
    inside = _git(["rev-parse", "--is-inside-work-tree"], workdir, check=False).strip()
    if inside != "true":
        raise DiffUsageError(f"not a git repository (or not its work tree): {workdir}")
    top = os.path.realpath(_git(["rev-parse", "--show-toplevel"], workdir).strip())
    prefix = _git(["rev-parse", "--show-prefix"], workdir).strip().rstrip("/")
    root = posixpath.join(top, prefix) if prefix else top
    base_name = args.base or "HEAD"
    base = _Side(base_name, _commit(base_name, top), "")
    head = _Side(args.head or WORKING_TREE, _commit(args.head, top) if args.head else None, "")
    agents = _agents(list(args.diff_agents or []))

    real_settings = load_settings(root, home=args.home)
    trusted, _ = decide_trust(root, real_settings.home, explicit=args.trusted,
                              folder_trust_enabled=real_settings.folder_trust_enabled)
    temp = os.path.realpath(tempfile.mkdtemp(prefix="memlens-diff-"))
    try:
        if temp == top or temp.startswith(top.rstrip("/") + "/"):
            raise DiffUsageError(f"the temporary folder {temp} is inside the repository: set "
                                 "TMPDIR to a folder outside it")
        ignored = _ignored_memory(top, set(names_of(real_settings)) | {"CLAUDE.local.md"})
        contexts = []
        all_folders: set[str] = set()
        sides = []
        for number, side in enumerate((base, head)):
            side.top = os.path.join(temp, str(number))
            _materialise(side, top, ignored)
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
            folders = [side_root, *(posixpath.join(side_root, f) for f in relative)]
            context = effective_context(agents, folders, functools.partial(_same, settings))
            # The tree's top is the repository's (files above the folder compared count too).
            contexts.append(map_context(context, side.top, top))
    finally:
        shutil.rmtree(temp, ignore_errors=True)

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
    return result, by_id, real_settings


def run(args: argparse.Namespace) -> int:
    """`memlens diff`: exit 1 when anything changed, 0 when nothing did."""
    from memlens.cli.common import UsageError, print_json

    try:
        result, agents, settings = _compare(args, os.getcwd())
    except DiffUsageError as err:
        raise UsageError(str(err)) from None
    if args.json:
        print_json(result.wire())
    elif args.diff_format == "github":
        _print_github(result, agents, settings)
    else:
        _print_text(result)
    if not args.json:
        print(_summary_line(result), file=sys.stderr)
    return 1 if result.changed else 0
