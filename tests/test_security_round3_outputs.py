"""Issue 30 (hostile input, round three), items 6, 8 and 11, against the real command line:

- 6: an output path (`report --html/--markdown/--json-file`) that is not a regular file — a
  FIFO a CI step reads, a character device, a symbolic link a repository placed, a folder —
  is written in place or refused, never replaced (`files.output.write_output`); `-` is stdout.
  The real /dev/null is never used: a FIFO and a device node made in tmp stand in for it.
- 8: file names in `report --markdown` (the GitHub job summary) render no link, image,
  heading, HTML, mention or line break, and never add a cell or a row (checked by rendering
  with markdown-it, GFM tables on); SARIF messages make no embedded link of them.
- 11: `memlens diff` runs no command a repository's `.git/config` names: core.fsmonitor,
  hooks, textconv and diff drivers, clean/smudge filters, credential helpers, a promisor
  remote's uploadpack on a lazy fetch; GIT_DIR from the environment is not followed
  (`files.git.run_git`).

Each test failed on the code before the fix (docs/security.md, issue 30 round three)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .conftest import build_tree
from .test_cli import Run, memlens


def _home(root: Path) -> Path:
    home = root / "home"
    home.mkdir(exist_ok=True)
    return home


def _report(root: Path, folder: Path, *args: str, cwd: Path | None = None) -> Run:
    return memlens("report", str(folder), "--trusted", *args, cwd=cwd or root, home=_home(root),
                   env={"MEMLENS_AGENTS": "gemini@0.44+"})


@pytest.fixture
def project(root: Path) -> Path:
    build_tree(root, {"proj/GEMINI.md": "# Rules\nBe brief.\n"})
    return root / "proj"


# --- 11: git runs no command the repository configures --------------------------------------------
def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com",
                    "-c", "init.defaultBranch=main", *args], cwd=repo, env=env, check=True,
                   capture_output=True)


def _repository(root: Path) -> Path:
    build_tree(root, {"repo/GEMINI.md": "# Rules v1\n", "repo/api/GEMINI.md": "# API\n",
                      "tmp": None})
    repo = root / "repo"
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    (repo / "GEMINI.md").write_text("# Rules v2\n")
    _git(repo, "commit", "-qam", "two")
    return repo


def _arm(repo: Path, markers: Path) -> None:
    """Every configuration that runs a command, each touching its own marker — set after the
    commits, so only what memlens runs could touch one."""
    markers.mkdir()
    hooks = repo / ".git" / "evil-hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "reference-transaction", "post-checkout",
                 "pre-auto-gc", "post-rewrite"):
        script = hooks / hook
        script.write_text(f"#!/bin/sh\ntouch '{markers}/hook-{hook}'\n")
        script.chmod(0o755)
    (repo / ".gitattributes").write_text("* diff=evil filter=evil merge=evil\n")

    def touch(what: str, then: str = "false") -> str:
        return f"touch '{markers}/{what}'; {then}"

    config = {
        "core.fsmonitor": touch("fsmonitor"),
        "core.hooksPath": str(hooks),
        "core.pager": touch("pager", "cat"),
        "core.sshCommand": touch("ssh"),
        "core.askPass": touch("askpass"),
        "credential.helper": "!" + touch("credential"),
        "diff.external": touch("external"),
        "diff.evil.textconv": touch("textconv", "cat"),
        "diff.evil.command": touch("diffcommand"),
        "filter.evil.clean": touch("clean", "cat"),
        "filter.evil.smudge": touch("smudge", "cat"),
        "filter.evil.process": touch("process"),
        "merge.evil.driver": touch("merge"),
        "gpg.program": touch("gpg"),
        "log.showSignature": "true",
        "core.untrackedCache": "true",
    }
    for key, value in config.items():
        _git(repo, "config", key, value)


def _diff(repo: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    home = _home(repo.parent)
    return memlens("diff", *args, "--agent", "gemini@0.44+", "--trusted", cwd=repo, home=home,
                   env={"TMPDIR": str(repo.parent / "tmp"), **(env or {})})


def test_diff_runs_no_command_the_repository_configures(root: Path) -> None:
    repo = _repository(root)
    markers = root / "markers"
    _arm(repo, markers)
    (repo / "api" / "GEMINI.md").write_text("# API v2\n")  # a change in the working tree
    (repo / "new.md").write_text("untracked\n")
    for args in ((), ("HEAD~1",), ("HEAD~1", "HEAD")):
        run = _diff(repo, *args)
        assert run.code == 1, run.err  # it ran, and found the changes
    assert sorted(os.listdir(markers)) == []


def test_diff_never_fetches_a_missing_object_from_a_promisor_remote(root: Path) -> None:
    """A partial clone whose `remote.origin.uploadpack` is a command: reading a missing blob
    made git fetch it lazily, running that command. Now one line says to fetch (exit 2)."""
    repo = _repository(root)
    markers = root / "markers"
    markers.mkdir()
    blob = subprocess.run(["git", "rev-parse", "HEAD~1:GEMINI.md"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    for key, value in {"core.repositoryformatversion": "1",
                       "extensions.partialClone": "origin",
                       "remote.origin.url": str(root / "nowhere"),
                       "remote.origin.promisor": "true",
                       "remote.origin.uploadpack": f"touch '{markers}/uploadpack'; false",
                       "protocol.file.allow": "always"}.items():
        _git(repo, "config", key, value)
    run = _diff(repo, "HEAD~1", "HEAD")
    assert os.listdir(markers) == []
    assert run.code == 2
    assert "this clone does not have the contents of its memory files" in run.err


def test_diff_reads_the_repository_it_is_run_in_not_git_dir_from_the_environment(
        root: Path) -> None:
    """GIT_DIR (or GIT_WORK_TREE, GIT_INDEX_FILE, GIT_CONFIG_*) in the environment does not
    send git to another repository and its configuration."""
    repo = _repository(root)
    other = root / "other"
    other.mkdir()
    _git(other, "init", "-q")
    markers = root / "markers"
    markers.mkdir()
    _git(other, "config", "core.fsmonitor", f"touch '{markers}/other'; false")
    run = _diff(repo, "HEAD~1", "HEAD", "--json", env={
        "GIT_DIR": str(other / ".git"), "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": f"touch '{markers}/env'; false"})
    assert os.listdir(markers) == []
    assert run.code == 1, run.err
    assert json.loads(run.out)["repository"] == str(repo)


def test_only_read_only_plumbing_goes_through_the_git_runner() -> None:
    from memlens.files.git import git_argv

    argv = git_argv(["ls-files", "-z"])
    assert argv[:2] == ["git", "--no-pager"] and argv[-2:] == ["ls-files", "-z"]
    assert "core.fsmonitor=false" in argv
    for refused in (["show", "HEAD:GEMINI.md"], ["diff"], ["cat-file", "--filters", "x"],
                    ["cat-file", "--textconv", "x"], ["checkout", "."], []):
        with pytest.raises(ValueError):
            git_argv(refused)
