"""A search replayed from an earlier search's trace in the same run (agents/gemini/search_trace.py)
finds what a walk of its own finds: the same paths in the same order, the same report. Counted,
never timed: `memlens show --mode classic` reads each folder's listing once for both its searches.
"""

from __future__ import annotations

import contextlib
import importlib
import io
from pathlib import Path

import pytest

from memlens.agents.gemini import discovery
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.agents.gemini.ignore import IgnoreFilter
from memlens.files import tree
from memlens.model import MemorySettings

from .conftest import build_tree

cli_main = importlib.import_module("memlens.cli.main")

NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")


@pytest.fixture
def repo(root: Path) -> Path:
    build_tree(root, {
        "home/.keep": "",
        "repo/.git/HEAD": "ref: refs/heads/main\n",
        "repo/.git/GEMINI.md": "inside .git\n",
        "repo/.gitignore": "build/\nsecret.md\n",
        "repo/GEMINI.md": "root\n",
        "repo/AGENTS.md": "agents\n",
        "repo/a/GEMINI.md": "a\n",
        "repo/a/b/c/GEMINI.md": "c\n",
        "repo/a/b/CLAUDE.md": "claude\n",
        "repo/build/GEMINI.md": "ignored\n",
        "repo/z/.gitignore": "GEMINI.md\n",
        "repo/z/GEMINI.md": "ignored by z's rules\n",
        "repo/z/y/GEMINI.md": "ignored too\n",
        "repo/m/n/GEMINI.md/x": "a folder named like the file\n",
    })
    return root / "repo"


def _search(repo: Path, names: str | tuple[str, ...], *, git: bool, skip: frozenset[str],
            budget: int | None, special: bool) -> tuple[list[str], discovery.SearchReport]:
    engine = MemoryEngine(MemorySettings(home=str(repo.parent / "home")))
    ignore = IgnoreFilter(str(repo), respect_git_ignore=git, respect_gemini_ignore=True)
    return engine.downward_search(str(repo), names, ignore, budget, include_special=special,
                                  skip_dirs=skip)


@pytest.mark.parametrize("git", [True, False])
@pytest.mark.parametrize("skip", [frozenset(), frozenset({".git"})])
@pytest.mark.parametrize("budget", [None, 3, 100])
@pytest.mark.parametrize("special", [True, False])
def test_a_second_search_in_a_run_finds_what_its_own_walk_finds(
        repo: Path, git: bool, skip: frozenset[str], budget: int | None, special: bool) -> None:
    alone = _search(repo, "GEMINI.md", git=git, skip=skip, budget=budget, special=special)
    whole = _search(repo, NAMES, git=git, skip=frozenset(), budget=None, special=True)[1]
    replays: list[int] = []
    real_replay = discovery._replay

    def counting(*args: object, **kwargs: object) -> object:
        replays.append(1)
        return real_replay(*args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch, tree.one_walk():
        patch.setattr(discovery, "_replay", counting)
        # first every agent's names, no skipping, as `workspace_files_named` searches
        _search(repo, NAMES, git=git, skip=frozenset(), budget=None, special=True)
        shared = _search(repo, "GEMINI.md", git=git, skip=skip, budget=budget, special=special)
    assert shared == alone
    # Replayed unless the budget stops it early, or it skips `.git` that the first entered.
    entered_git = not git
    assert bool(replays) == ((budget is None or budget >= whole.scanned)
                             and not (skip and entered_git))


def test_classic_show_replays_the_search_for_every_agents_names(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`show --mode classic`: the search for every agent's names (which agents have files
    here), then Gemini CLI's own search for GEMINI.md, read from the first one's trace."""
    monkeypatch.setenv("MEMLENS_AGENTS", "gemini@0.43.0")
    replayed: list[str] = []
    real_replay = discovery._replay

    def recording(trace: object, root: str, label: str, *args: object) -> object:
        replayed.append(label)
        return real_replay(trace, root, label, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(discovery, "_replay", recording)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_main.main(["show", str(repo), "--mode", "classic", "--max-dirs", "-1",
                              "--trusted", "--home", str(repo.parent / "home")])
    assert code == 0
    assert replayed and set(replayed) == {"GEMINI.md"}
    text = out.getvalue()
    assert f"--- Context from: {repo}/a/b/c/GEMINI.md ---" in text
    assert "/build/GEMINI.md ---" not in text and "/z/y/GEMINI.md ---" not in text
    assert "/.git/GEMINI.md ---" not in text
