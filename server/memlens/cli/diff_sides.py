"""The two sides of `memlens diff` on disk: a revision (from git's objects: `git ls-tree` and
`git cat-file --batch`) or the working tree (the files git lists: tracked and untracked, not
ignored), each materialised under one temporary folder outside the repository with only the
files an agent can read, and that folder always removed (on exit, SIGTERM, or by the next
run). git runs through `files.git.run_git`; its output is bounded."""

from __future__ import annotations

import contextlib
import fcntl
import os
import posixpath
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memlens.files.git import run_git
from memlens.files.probe import Probed

if TYPE_CHECKING:
    from memlens.workspace.effective import ChosenAgent


class DiffUsageError(Exception):
    """A usage problem (not a git repository, unknown revision): one line, exit 2."""


@dataclass
class Side:
    """One side of the comparison: a revision, or the working tree."""

    name: str  # as given: "HEAD", "main~1", "working tree"
    commit: str | None  # None: the working tree
    top: str  # its materialised top folder


# --- git -------------------------------------------------------------------------------------
GIT_OUTPUT_LIMIT = 512 * 1024 * 1024  # what one git command may print (a listing, the blobs)


def git_text(args: Sequence[str], cwd: str, *, check: bool = True, stdin: int | None = None,
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


def commit_of(rev: str, top: str) -> str:
    if rev.startswith("-"):
        raise DiffUsageError(f"unknown revision {rev!r}")
    out = git_text(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
               top, check=False).strip()
    if not out:
        raise DiffUsageError(f"unknown revision {rev!r} (not a commit in {top})")
    return out


def _listed(args: Sequence[str], top: str) -> list[str]:
    return [p for p in git_text([*args, "-z"], top).split("\0") if p]


# --- what an agent can read ------------------------------------------------------------------
# Folders whose every file an agent may read: settings, rules, skills, commands.
AGENT_FOLDERS = frozenset({".gemini", ".claude", ".agents", ".codex", ".cursor"})
IGNORE_FILES = frozenset({".gitignore", ".geminiignore"})


@dataclass
class Entry:
    """One file of a side's listing: a blob of a commit, or a file of the working tree."""

    rel: str
    link: bool = False  # a symbolic link (its target is the blob's text, or readlink)
    object_id: str | None = None  # the blob, for a commit


class Selection:
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


def _commit_entries(commit: str, top: str) -> dict[str, Entry]:
    """The files of `commit` (git ls-tree): regular files and links; submodules left out."""
    entries: dict[str, Entry] = {}
    for record in git_text(["ls-tree", "-r", "-z", "--full-tree", commit], top).split("\0"):
        if not record:
            continue
        meta, _, rel = record.partition("\t")
        mode, kind, object_id = meta.split(" ")
        if kind == "blob":
            entries[rel] = Entry(rel, link=mode == "120000", object_id=object_id)
    return entries


def _working_entries(top: str) -> dict[str, Entry]:
    """The working tree's files git lists (tracked and untracked, not ignored)."""
    entries: dict[str, Entry] = {}
    for rel in _listed(["ls-files", "--cached", "--others", "--exclude-standard"], top):
        source = os.path.join(top, rel)
        if os.path.islink(source):
            entries[rel] = Entry(rel, link=True)
        elif os.path.isfile(source):
            entries[rel] = Entry(rel)
    return entries


def listing(side: Side, top: str) -> dict[str, Entry]:
    """The files of a side: its commit's, or the working tree's that git lists."""
    return _working_entries(top) if side.commit is None else _commit_entries(side.commit, top)


def _blobs(side_name: str, top: str, wanted: list[Entry]) -> dict[str, bytes]:
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
    read (`Selection`), with the references they make followed to a fixed point."""

    def __init__(self, side: Side, top: str, dest: str, selection: Selection,
                 agents: list[ChosenAgent], home: str) -> None:
        self.side, self.top, self.dest = side, top, dest
        self.selection, self.agents, self.home = selection, agents, home
        self.entries = listing(side, top)
        self.done: set[str] = set()

    def run(self) -> None:
        os.makedirs(self.dest)
        for folder in sorted({posixpath.dirname(rel) for rel in self.entries} - {""}):
            os.makedirs(os.path.join(self.dest, folder), exist_ok=True)
        pending = [e for rel, e in self.entries.items() if self.selection.wanted(rel)]
        while pending:
            pending = self._place(pending)

    def _place(self, batch: list[Entry]) -> list[Entry]:
        batch = [e for e in batch if e.rel not in self.done]
        self.done |= {e.rel for e in batch}
        contents = (_blobs(self.side.name, self.top, batch) if self.side.commit is not None
                    else {})
        found: list[Entry] = []
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

    def _under(self, rel: str) -> list[Entry]:
        """The listed files at or under `rel` (what a link inside the repository reaches)."""
        if rel.startswith("../") or rel == "..":
            return []
        return [e for r, e in self.entries.items()
                if (r == rel or r.startswith(rel.rstrip("/") + "/")) and r not in self.done]

    def _references(self, rel: str, copied: str) -> list[Entry]:
        """The listed files the copied file imports or includes, for any chosen agent."""
        try:
            with open(copied, "rb") as handle:
                data = handle.read(4 * 1024 * 1024)
        except OSError:
            return []
        if b"@" not in data or b"\0" in data:
            return []
        text = data.decode("utf-8", "replace")
        found: list[Entry] = []
        for chosen_agent in self.agents:
            agent = chosen_agent.agent
            for token in agent.find_references(text):
                resolved = agent.resolve_reference(copied, token.path, self.home)
                inside = posixpath.relpath(posixpath.normpath(resolved), self.dest)
                entry = self.entries.get(inside)
                if entry is not None and inside not in self.done:
                    found.append(entry)
        return found


def ignored_memory(top: str, names: set[str]) -> list[str]:
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


def materialise(side: Side, top: str, ignored: list[str], selection: Selection,
                 agents: list[ChosenAgent], home: str) -> dict[str, Entry]:
    """Write `side` under `side.top`; its listing (every file of the side, copied or not)."""
    materialiser = _Materialiser(side, top, side.top, selection, agents, home)
    materialiser.run()
    for rel in ignored:
        if not os.path.lexists(os.path.join(side.top, rel)):
            _copy_ignored(top, rel, side.top)
    # The project-root marker the agents stop at (the real one is the repository's .git).
    os.makedirs(os.path.join(side.top, ".git"), exist_ok=True)
    return materialiser.entries


# --- the temporary folder: removed on exit, on SIGTERM / SIGINT, and by the next run --------
TEMP_PREFIX = "memlens-diff-"
LOCK_NAME = ".memlens-diff.lock"


@contextlib.contextmanager
def temporary_folder() -> Iterator[str]:
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
