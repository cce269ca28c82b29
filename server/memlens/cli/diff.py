"""`memlens diff [BASE [HEAD]]`: what each agent sends at start, per folder, compared between
two git revisions, or a revision and the working tree (issue 14, docs/reference.md "memlens diff").

Both sides are materialised in one temporary folder outside the repository (a revision from
its objects, `git ls-tree` and `git cat-file --batch`; the working tree as the files git
lists: tracked and untracked, not ignored),
each with an empty `.git` folder at its top (the project-root marker the agents stop at), and
always removed. Memory files git ignores (CLAUDE.local.md, a personal GEMINI.md) are copied
from the working tree into every side that lacks them: like HOME, they are the same on both
sides. The engine (`memlens.workspace.effective`) loads every folder of interest in both
trees for every agent, maps the temporary roots back to the real folder, and diffs the texts.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import functools
import os
import posixpath
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memlens.files.git import run_git
from memlens.files.output import escape_controls
from memlens.files.probe import Probed

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
GIT_OUTPUT_LIMIT = 512 * 1024 * 1024  # what one git command may print (a listing, the blobs)


def _git(args: Sequence[str], cwd: str, *, check: bool = True, stdin: int | None = None,
         limit: int = GIT_OUTPUT_LIMIT) -> str:
    return _git_bytes(args, cwd, check=check, stdin=stdin, limit=limit).decode(
        "utf-8", "surrogateescape")


def _git_bytes(args: Sequence[str], cwd: str, *, check: bool = True, stdin: int | None = None,
               limit: int = GIT_OUTPUT_LIMIT) -> bytes:
    """git's output, read up to `limit` bytes (`files.probe`: past it git is killed); git is
    run by `files.git.run_git`, which lets no command the repository configures run."""
    probed = run_git(args, cwd, max_output=limit, stdin=stdin)
    _stopped(probed, args[0])
    if probed.over_cap:
        raise DiffUsageError(f"git {args[0]} printed more than {limit} bytes: not read")
    if check and probed.returncode != 0:
        message = probed.errors.decode("utf-8", "replace").strip().splitlines()
        raise DiffUsageError(f"git {args[0]} failed: {message[-1] if message else 'error'}")
    return probed.output


def _stopped(probed: Probed, command: str) -> None:
    """One line when git could not run or was stopped at its deadline."""
    if probed.failed is not None:
        raise DiffUsageError(f"cannot run git: {probed.failed}")
    if probed.timed_out:
        raise DiffUsageError(f"git {command} did not finish in time and was stopped (is one "
                             "of the repository's git files a FIFO?)")


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


# --- what an agent can read ------------------------------------------------------------------
# Folders whose every file an agent may read: settings, rules, skills, commands.
AGENT_FOLDERS = frozenset({".gemini", ".claude", ".agents", ".codex", ".cursor"})
IGNORE_FILES = frozenset({".gitignore", ".geminiignore"})


@dataclass
class _Entry:
    """One file of a side's listing: a blob of a commit, or a file of the working tree."""

    rel: str
    link: bool = False  # a symbolic link (its target is the blob's text, or readlink)
    object_id: str | None = None  # the blob, for a commit


class _Selection:
    """Which files of a tree an agent can read: memory files (every agent's names), what is in
    its folders (`.gemini`, `.claude`, `.agents`, `.codex`), ignore files, and — found by
    reading those — what they import and what their links point at. Nothing else is copied:
    the cost is that of the memory, not of the tree (every folder is still made, so folder
    budgets count the same folders)."""

    def __init__(self, names: set[str]) -> None:
        self.names = {n for n in names if "/" not in n}
        self.paths = {posixpath.normpath(n) for n in names if "/" in n}

    def wanted(self, rel: str) -> bool:
        base = posixpath.basename(rel)
        if base in self.names or base in IGNORE_FILES:
            return True
        if any(rel == p or rel.endswith("/" + p) for p in self.paths):
            return True
        return any(part in AGENT_FOLDERS for part in rel.split("/")[:-1])


def _commit_entries(commit: str, top: str) -> dict[str, _Entry]:
    """The files of `commit` (git ls-tree): regular files and links; submodules left out."""
    entries: dict[str, _Entry] = {}
    for record in _git(["ls-tree", "-r", "-z", "--full-tree", commit], top).split("\0"):
        if not record:
            continue
        meta, _, rel = record.partition("\t")
        mode, kind, object_id = meta.split(" ")
        if kind == "blob":
            entries[rel] = _Entry(rel, link=mode == "120000", object_id=object_id)
    return entries


def _working_entries(top: str) -> dict[str, _Entry]:
    """The working tree's files git lists (tracked and untracked, not ignored)."""
    entries: dict[str, _Entry] = {}
    for rel in _listed(["ls-files", "--cached", "--others", "--exclude-standard"], top):
        source = os.path.join(top, rel)
        if os.path.islink(source):
            entries[rel] = _Entry(rel, link=True)
        elif os.path.isfile(source):
            entries[rel] = _Entry(rel)
    return entries


def _blobs(side_name: str, top: str, wanted: list[_Entry]) -> dict[str, bytes]:
    """The contents of `wanted` blobs (git cat-file --batch, bounded). A blob the clone does
    not have (a partial or shallow clone) is one clear line."""
    if not wanted:
        return {}
    with tempfile.TemporaryFile() as ids:
        ids.write("".join(f"{e.object_id}\n" for e in wanted).encode("ascii"))
        ids.seek(0)
        probed = run_git(["cat-file", "--batch"], top, max_output=GIT_OUTPUT_LIMIT,
                         stdin=ids.fileno())
    _stopped(probed, "cat-file")
    if probed.over_cap:
        raise DiffUsageError(f"{side_name}: its memory files hold more than "
                             f"{GIT_OUTPUT_LIMIT} bytes: not read")
    missing = (f"{side_name}: this clone does not have the contents of its memory files (a "
               "partial or shallow clone, offline?): fetch them (git fetch --refetch, or "
               "--unshallow) and run memlens diff again")
    if probed.returncode != 0:
        raise DiffUsageError(missing)
    out = probed.output
    contents: dict[str, bytes] = {}
    offset = 0
    for entry in wanted:
        line_end = out.find(b"\n", offset)
        header = out[offset:line_end].decode("ascii", "replace").split()
        if line_end < 0 or len(header) != 3:
            raise DiffUsageError(missing)
        size = int(header[2])
        contents[entry.rel] = out[line_end + 1:line_end + 1 + size]
        offset = line_end + 1 + size + 1
    return contents


def _link_target(top: str, rel: str, written: str) -> str:
    """What a link at `rel` should point at in the copy, so that it means what it meant: a
    target inside the repository stays as written (it is copied too); one outside is made
    absolute (resolved against the link's real folder, not the temporary one)."""
    if os.path.isabs(written):
        return written
    absolute = posixpath.normpath(posixpath.join(top, posixpath.dirname(rel), written))
    if absolute == top or absolute.startswith(top.rstrip("/") + "/"):
        return written
    return absolute


class _Materialiser:
    """One side's tree under `dest`: every folder of the listing, and the files an agent can
    read (`_Selection`), with the references they make followed to a fixed point."""

    def __init__(self, side: _Side, top: str, dest: str, selection: _Selection,
                 agents: list[ChosenAgent], home: str) -> None:
        self.side, self.top, self.dest = side, top, dest
        self.selection, self.agents, self.home = selection, agents, home
        self.entries = (_working_entries(top) if side.commit is None
                        else _commit_entries(side.commit, top))
        self.done: set[str] = set()

    def run(self) -> None:
        os.makedirs(self.dest)
        for folder in sorted({posixpath.dirname(rel) for rel in self.entries} - {""}):
            os.makedirs(os.path.join(self.dest, folder), exist_ok=True)
        pending = [e for rel, e in self.entries.items() if self.selection.wanted(rel)]
        while pending:
            pending = self._place(pending)

    def _place(self, batch: list[_Entry]) -> list[_Entry]:
        batch = [e for e in batch if e.rel not in self.done]
        self.done |= {e.rel for e in batch}
        contents = (_blobs(self.side.name, self.top, batch) if self.side.commit is not None
                    else {})
        found: list[_Entry] = []
        for entry in batch:
            target = os.path.join(self.dest, entry.rel)
            if entry.link:
                written = (contents[entry.rel].decode("utf-8", "surrogateescape")
                           if self.side.commit is not None
                           else os.readlink(os.path.join(self.top, entry.rel)))
                os.symlink(_link_target(self.top, entry.rel, written), target)
                found += self._under(posixpath.normpath(posixpath.join(
                    posixpath.dirname(entry.rel), written)))
                continue
            if self.side.commit is not None:
                with open(target, "wb") as handle:
                    handle.write(contents[entry.rel])
            else:
                try:
                    shutil.copyfile(os.path.join(self.top, entry.rel), target)
                except OSError:
                    continue  # gone since git listed it, or unreadable: as if absent
            found += self._references(entry.rel, target)
        return found

    def _under(self, rel: str) -> list[_Entry]:
        """The listed files at or under `rel` (what a link inside the repository reaches)."""
        if rel.startswith("../") or rel == "..":
            return []
        return [e for r, e in self.entries.items()
                if (r == rel or r.startswith(rel.rstrip("/") + "/")) and r not in self.done]

    def _references(self, rel: str, copied: str) -> list[_Entry]:
        """The listed files the copied file imports or includes, for any chosen agent."""
        try:
            with open(copied, "rb") as handle:
                data = handle.read(4 * 1024 * 1024)
        except OSError:
            return []
        if b"@" not in data or b"\0" in data:
            return []
        text = data.decode("utf-8", "replace")
        found: list[_Entry] = []
        for chosen_agent in self.agents:
            agent = chosen_agent.agent
            for token in agent.find_references(text):
                resolved = agent.resolve_reference(copied, token.path, self.home)
                inside = posixpath.relpath(posixpath.normpath(resolved), self.dest)
                entry = self.entries.get(inside)
                if entry is not None and inside not in self.done:
                    found.append(entry)
        return found


def _ignored_memory(top: str, names: set[str]) -> list[str]:
    """Memory files in the working tree that git ignores (personal files: CLAUDE.local.md)."""
    return [rel for rel in _listed(["ls-files", "--others", "--ignored", "--exclude-standard"],
                                   top) if posixpath.basename(rel) in names]


def _copy_ignored(top: str, rel: str, dest: str) -> None:
    source = os.path.join(top, rel)
    target = os.path.join(dest, rel)
    if os.path.islink(source):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(_link_target(top, rel, os.readlink(source)), target)
    elif os.path.isfile(source):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)


@dataclass
class _Side:
    name: str  # as given: "HEAD", "main~1", "working tree"
    commit: str | None  # None: the working tree
    top: str  # its materialised top folder


def _materialise(side: _Side, top: str, ignored: list[str], selection: _Selection,
                 agents: list[ChosenAgent], home: str) -> None:
    _Materialiser(side, top, side.top, selection, agents, home).run()
    for rel in ignored:
        if not os.path.lexists(os.path.join(side.top, rel)):
            _copy_ignored(top, rel, side.top)
    # The project-root marker the agents stop at (the real one is the repository's .git).
    os.makedirs(os.path.join(side.top, ".git"), exist_ok=True)


# --- the temporary folder: removed on exit, on SIGTERM / SIGINT, and by the next run --------
TEMP_PREFIX = "memlens-diff-"
LOCK_NAME = ".memlens-diff.lock"


@contextlib.contextmanager
def _temporary_folder() -> Iterator[str]:
    """A new temporary folder, locked (flock) while this run uses it and removed after it.
    SIGTERM (a cancelled CI job, `timeout`) ends the run like Ctrl-C, so it is removed then
    too; one a killed run left (SIGKILL) is unlocked, and the next run removes it."""
    _remove_stale(tempfile.gettempdir())
    temp = os.path.realpath(tempfile.mkdtemp(prefix=TEMP_PREFIX))
    lock = os.open(os.path.join(temp, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield temp
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(temp, ignore_errors=True)
        os.close(lock)


def _terminated(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds like Ctrl-C: every `finally` runs


def _remove_stale(folder: str) -> None:
    """Remove the temporary folders of earlier runs that are no longer running: ours (same
    owner), whose lock nobody holds."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith(TEMP_PREFIX)]
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(path, LOCK_NAME), os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # a run in progress
        try:
            shutil.rmtree(path, ignore_errors=True)
        finally:
            os.close(fd)


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


def _with_agents_of_files(agents: list[ChosenAgent], sides: Sequence[_Side], top: str,
                          prefix: str, settings: MemorySettings) -> list[ChosenAgent]:
    """`agents`, then every agent whose memory files either side holds in the folder compared
    (workspace/agents_here.py; an AGENTS.md is Codex's here: a commit adding one changes what
    Codex sends, even when only Gemini CLI is in use)."""
    from memlens.agent_versions import profile_for
    from memlens.workspace.agents_here import agents_to_cover, owners
    from memlens.workspace.effective import chosen

    rels: set[str] = set()
    for side in sides:
        entries = (_working_entries(top) if side.commit is None
                   else _commit_entries(side.commit, top))
        rels |= {rel for rel in entries if not prefix or rel.startswith(prefix + "/")}
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
    return [*agents, *chosen((p.agent, p.name, p.installed or p.profile or None)
                             for p in extra)]


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
    if not args.diff_agents:
        agents = _with_agents_of_files(agents, (base, head), top, prefix, real_settings)
    trusted, _ = decide_trust(root, real_settings.home, explicit=args.trusted,
                              folder_trust_enabled=real_settings.folder_trust_enabled)
    with _temporary_folder() as temp:
        if temp == top or temp.startswith(top.rstrip("/") + "/"):
            raise DiffUsageError(f"the temporary folder {temp} is inside the repository: set "
                                 "TMPDIR to a folder outside it")
        ignored = _ignored_memory(top, set(names_of(real_settings)) | {"CLAUDE.local.md"})
        readable = set(names_of(real_settings)) | {"CLAUDE.local.md", "AGENTS.override.md"}
        for chosen_agent in agents:
            readable |= set(chosen_agent.agent.file_names(real_settings))
        selection = _Selection(readable)
        contexts = []
        all_folders: set[str] = set()
        sides = []
        for number, side in enumerate((base, head)):
            side.top = os.path.join(temp, str(number))
            _materialise(side, top, ignored, selection, agents, real_settings.home)
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
