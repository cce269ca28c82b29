"""Running git on a repository we did not write: the one way Memory Lens runs git (`memlens
diff`; docs/security.md "git").

A repository's own `.git/config` (it can arrive with an archive, a CI cache, a copied folder)
may name commands git runs for it: `core.fsmonitor` on any command that reads the index,
`core.hooksPath` hooks, a promisor remote's `uploadpack` or `core.sshCommand` on a lazy fetch
of a missing object, credential helpers, `ext::` transports. `run_git` switches each of these
off on the command line (`-c` outranks every configuration file), runs git with an
environment of our own (no `GIT_DIR`, `GIT_CONFIG_*` or other `GIT_*` variable is inherited:
the repository is the folder we are asked about, found from it), and runs only read-only
plumbing that applies no filter, textconv or diff driver (`ALLOWED`); bounded by
`files.probe.run_bounded`, and by a deadline (`TIMEOUTS`): a FIFO among git's files — an
`include.path` the config names, the index, HEAD — would otherwise keep git waiting for ever.
git itself is looked up in the absolute folders of PATH only: a
relative entry (`bin`, or the empty one that means ".") would find a `git` the repository
holds, since git runs in the repository.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from memlens.files.probe import Probed, run_bounded

# What git may run for us, and why each is safe: rev-parse reads refs and the config;
# ls-files reads the index and walks the work tree (the fsmonitor hook is its only command);
# ls-tree and cat-file --batch read objects, raw (no --filters, no --textconv: no clean,
# smudge or process filter, no textconv) — a missing one would be fetched lazily, which the
# environment forbids. None of them writes the index or a ref, so no hook has cause to run.
# A new command goes here only after the same check.
ALLOWED = frozenset({"rev-parse", "ls-files", "ls-tree", "cat-file"})
_FILTERING = frozenset({"--filters", "--textconv", "--path"})

# Every transport git knows, each refused by name: a repository's `protocol.<name>.allow`
# would outrank a bare `protocol.allow=never`.
_TRANSPORTS = ("file", "git", "ssh", "http", "https", "ftp", "ftps", "ext", "fd")

CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",  # a hook command run on every index read
    "core.hooksPath=/dev/null",  # no hook, whatever a command would trigger
    "core.sshCommand=false",
    "core.askPass=false",
    "core.gitProxy=",
    "credential.helper=",  # empty: forget every helper configured before
    "diff.external=",
    "core.pager=cat",
    "submodule.recurse=false",
    # A bare repository found inside a work tree (a hostile tree can hold one) is used only
    # when named: `memlens diff` needs a work tree anyway.
    "safe.bareRepository=explicit",
    "protocol.allow=never",
    *(f"protocol.{name}.allow=never" for name in _TRANSPORTS),
)

# Deadlines, a guard against a hang and never a measure of speed: rev-parse reads HEAD, refs
# and the configuration (milliseconds in any repository); listing a huge work tree or
# reading the blobs of a large commit may take minutes.
TIMEOUTS = {"rev-parse": 30.0}
TIMEOUT = 900.0

ENVIRONMENT = {
    "GIT_TERMINAL_PROMPT": "0",  # never ask for a password
    "GIT_NO_LAZY_FETCH": "1",  # a missing object is missing: no fetch from a promisor remote
    "GIT_OPTIONAL_LOCKS": "0",  # never write the index in passing
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_PAGER": "cat",
}


def git_environment() -> dict[str, str]:
    """Our environment without any `GIT_*` variable (`GIT_DIR`, `GIT_WORK_TREE`,
    `GIT_INDEX_FILE`, `GIT_CONFIG_COUNT`/`GIT_CONFIG_PARAMETERS`, `GIT_EXTERNAL_DIFF`,
    `GIT_SSH_COMMAND`, ...), plus `ENVIRONMENT`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(ENVIRONMENT)
    return env


def git_executable() -> str | None:
    """The git on the absolute folders of PATH, or None."""
    folders = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return shutil.which("git", path=os.pathsep.join(f for f in folders if os.path.isabs(f)))


def git_argv(args: Sequence[str], git: str = "git") -> list[str]:
    """The command line for `git <args>`: our configuration first. Raises ValueError for a
    command outside `ALLOWED` or one asked to filter."""
    if not args or args[0] not in ALLOWED:
        raise ValueError(f"git {args[0] if args else ''}: not a command memlens runs")
    if args[0] == "cat-file" and any(a.split("=")[0] in _FILTERING for a in args[1:]):
        raise ValueError("git cat-file: filters and textconv are never applied")
    argv = [git, "--no-pager"]
    for item in CONFIG:
        argv += ["-c", item]
    return [*argv, *args]


def run_git(args: Sequence[str], cwd: str, *, max_output: int,
            stdin: int | None = None) -> Probed:
    """`git <args>` in `cwd`, safely (module docstring), its output read up to `max_output`
    bytes; killed past its deadline (`Probed.timed_out`)."""
    git = git_executable()
    argv = git_argv(args, git or "git")  # checks the command even when git is missing
    if git is None:
        return Probed(None, b"", failed="git is not on PATH (its absolute folders)")
    return run_bounded(argv, cwd=cwd, env=git_environment(), max_output=max_output,
                       stdin=stdin, timeout=TIMEOUTS.get(args[0], TIMEOUT))
