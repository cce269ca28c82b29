"""The pre-commit hook (.pre-commit-hooks.yaml) as a user runs it: `pre-commit run` on a
scratch repository with a broken @import fails and names it; after the fix it passes. The
hook comes from this checkout as `pre-commit try-repo` takes it (its files, uncommitted changes
included, committed in a repository of their own, named with that commit in a config outside the
scratch repository). The hook's environment is built the way pre-commit builds it
(`language: python`: a virtualenv and `pip install` of that repository), offline: pip reads
PIP_NO_INDEX/PIP_FIND_LINKS from the environment, so the wheelhouse of tests/dist_support.py
stands in for the package index. try-repo itself builds that environment again on every call
(a fresh store each time); these tests share one PRE_COMMIT_HOME, as a user's machine does
after the first commit, so it is built once for the module."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from .dist_support import ROOT, copy_sources, offline_pip_env, wheelhouse

pytestmark = pytest.mark.timeout(900)
PRE_COMMIT = Path(__file__).resolve().parent.parent / ".venv" / "bin" / "pre-commit"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                   cwd=repo, check=True, capture_output=True)


@pytest.fixture(scope="module")
def hook_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    if not PRE_COMMIT.is_file() and not shutil.which("pre-commit"):
        pytest.fail("pre-commit is not installed: run scripts/bootstrap.sh (it is a dev "
                    "dependency in pyproject.toml)")
    home = tmp_path_factory.mktemp("home")
    return offline_pip_env(wheelhouse(), HOME=str(home),
                           PRE_COMMIT_HOME=str(tmp_path_factory.mktemp("pre-commit-home")),
                           PATH="/usr/local/bin:/usr/bin:/bin")


@pytest.fixture(scope="module")
def hook_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A config naming the memlens-check hook of a repository holding this checkout's files."""
    hooks = copy_sources(tmp_path_factory.mktemp("hooks") / "memlens")
    _git(hooks, "init", "-q")
    _git(hooks, "add", "-A")
    _git(hooks, "commit", "-q", "-m", "memlens as checked out")
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hooks, check=True,
                         capture_output=True, text=True).stdout.strip()
    config = tmp_path_factory.mktemp("config") / ".pre-commit-config.yaml"
    config.write_text(yaml.safe_dump({"repos": [
        {"repo": str(hooks), "rev": rev, "hooks": [{"id": "memlens-check"}]}]}))
    return config


def _run_hook(repo: Path, env: dict[str, str], config: Path,
              *extra: str) -> subprocess.CompletedProcess[str]:
    exe = str(PRE_COMMIT) if PRE_COMMIT.is_file() else "pre-commit"
    return subprocess.run([exe, "run", "--config", str(config), "memlens-check", "--verbose",
                           *extra],
                          cwd=repo, capture_output=True, text=True, env=env, timeout=900)


def test_the_hook_is_declared_for_memory_files() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "memlens-check"]
    assert hook["entry"].split()[:2] == ["memlens", "check"]
    assert hook["pass_filenames"] is False  # it checks the repository: imports cross files


def test_the_hook_fails_on_a_broken_import_then_passes_after_the_fix(
        tmp_path: Path, hook_env: dict[str, str], hook_config: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "GEMINI.md").write_text("# Project\n\n@./docs/style.md\n")
    (repo / "main.py").write_text("print('hi')\n")
    _git(repo, "add", "-A")

    broken = _run_hook(repo, hook_env, hook_config, "--all-files")
    output = broken.stdout + broken.stderr
    assert broken.returncode == 1, output
    assert "memlens check" in output and "Failed" in output
    assert "import-not-found" in output and "./docs/style.md" in output

    (repo / "docs").mkdir()
    (repo / "docs" / "style.md").write_text("Use tabs.\n")
    _git(repo, "add", "-A")
    fixed = _run_hook(repo, hook_env, hook_config, "--all-files")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Passed" in fixed.stdout


def test_the_hook_skips_a_commit_that_touches_no_memory_file(
        tmp_path: Path, hook_env: dict[str, str], hook_config: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "GEMINI.md").write_text("@./missing.md\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "memory")
    (repo / "main.py").write_text("print('hi')\n")
    _git(repo, "add", "main.py")  # only this file is staged: the hook has nothing to look at
    result = _run_hook(repo, hook_env, hook_config)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Skipped" in result.stdout
