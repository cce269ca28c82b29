"""One walk per root, shared by every agent (files/tree.py): a CLI run lists each folder of the
workspace once, whichever agents walk it, and every answer is what separate walks give.

Counting, never timing: `os.scandir` is wrapped to count the listings of each folder.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import weakref
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlens.agents import AGENT_IDS
from memlens.files import tree

from .conftest import build_tree

EVERY_AGENT = ",".join(AGENT_IDS)
# The module (the package `memlens.cli` exports its `main` function under the same name).
cli_main = importlib.import_module("memlens.cli.main")


@pytest.fixture
def workspace(root: Path) -> Path:
    """A repository with every agent's files, nested folders and ignored ones."""
    build_tree(root, {
        "home/.keep": "",
        "proj/.git/HEAD": "ref: refs/heads/main\n",
        "proj/.gitignore": "build/\n",
        "proj/GEMINI.md": "Gemini rules\n",
        "proj/CLAUDE.md": "Claude rules\n@AGENTS.md\n",
        "proj/AGENTS.md": "Shared rules\n",
        "proj/.cursorrules": "legacy rule\n",
        "proj/.cursor/rules/ts.mdc": "---\nglobs: **/*.ts\n---\nStrict TypeScript.\n",
        "proj/.cursor/rules/none.mdc": "---\nglobs: **/*.nothing\n---\nNever.\n",
        "proj/.github/copilot-instructions.md": "Copilot rules\n",
        "proj/.github/instructions/py.instructions.md":
            "---\napplyTo: \"**/*.py\"\n---\nPython rules\n",
        "proj/.github/instructions/go.instructions.md":
            "---\napplyTo: \"**/*.go\"\n---\nGo rules\n",
        "proj/.claude/rules/src.md": "---\npaths: [\"src/**\"]\n---\nSource rule\n",
        "proj/.agents/rules/style.md": "Antigravity style\n",
        "proj/src/app.ts": "export {}\n",
        "proj/src/tool.py": "print()\n",
        "proj/src/api/AGENTS.md": "API rules\n",
        "proj/src/api/CLAUDE.md": "API Claude rules\n",
        "proj/src/api/GEMINI.md": "API Gemini rules\n",
        "proj/src/api/.cursor/rules/api.mdc": "---\nalwaysApply: true\n---\nAPI rule\n",
        "proj/src/web/stray.mdc": "---\nglobs: \"*.css\"\n---\nstray\n",
        "proj/src/web/deep/er/GEMINI.md": "deep\n",
        "proj/build/GEMINI.md": "ignored by .gitignore\n",
        "proj/node_modules/pkg/AGENTS.md": "a dependency's\n",
    })
    return root


@contextlib.contextmanager
def counted_listings(under: Path) -> Iterator[Counter[str]]:
    """Count each `os.scandir` of a folder under `under`, whoever calls it."""
    counts: Counter[str] = Counter()
    real_scandir = os.scandir
    prefix = str(under)

    def scandir(path: str | os.PathLike[str] = ".") -> object:
        name = os.fspath(path)
        if isinstance(name, str) and name.startswith(prefix):
            counts[os.path.normpath(name)] += 1
        return real_scandir(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "scandir", scandir)
        yield counts


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli_main.main(list(args))
    return code, out.getvalue()


def check_every_agent(workspace: Path) -> tuple[int, str]:
    return run("check", str(workspace / "proj"), "--home", str(workspace / "home"),
               "--format", "json")


@pytest.fixture(autouse=True)
def every_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLENS_AGENTS", EVERY_AGENT)


def test_check_with_every_agent_lists_each_folder_once(workspace: Path) -> None:
    with counted_listings(workspace / "proj") as counts:
        code, out = check_every_agent(workspace)
    assert code in (0, 1), out
    root = str(workspace / "proj")
    assert counts[root] == 1  # one walk of the root, for every agent
    assert {folder: n for folder, n in counts.items() if n > 1} == {}
    # Every folder a walk enters was listed (the ignored `build/` too: Cursor's and Copilot's
    # walks do not read .gitignore), and only once.
    assert os.path.join(root, "src", "web", "deep", "er") in counts
    assert os.path.join(root, "build") in counts


@pytest.mark.parametrize("command", [
    ["check", "{proj}", "--format", "json"],
    ["check", "{proj}", "--format", "json", "--agent", "cursor"],
    ["check", "{proj}", "--format", "json", "--agent", "copilot"],
    ["show", "{proj}", "--agent", "cursor", "--json"],
    ["show", "{proj}", "--agent", "copilot", "--json"],
    ["show", "{proj}", "--agent", "claude", "--json"],
    ["show", "{proj}", "--json"],
    ["list", "{proj}"],
    ["report", "{proj}", "--json"],
])
def test_answers_are_those_of_separate_walks(workspace: Path, command: list[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    args = [a.format(proj=workspace / "proj") for a in command]
    args += ["--home", str(workspace / "home")]
    shared = run(*args)
    assert tree.folders_listed() == 0  # the run's listings end with it
    monkeypatch.setattr(cli_main, "one_walk", contextlib.nullcontext)
    separate = run(*args)
    assert shared == separate
    if "json" in args or "--json" in args:
        json.loads(shared[1])


def test_outside_a_run_every_walk_reads_the_disk(workspace: Path) -> None:
    """The language server's walks are never served from a listing kept earlier."""
    from memlens.files.walk import walk

    root = str(workspace / "proj")
    with counted_listings(workspace / "proj") as counts:
        list(walk(root))
        list(walk(root))
    assert counts[root] == 2
    with counted_listings(workspace / "proj") as counts, tree.one_walk():
        list(walk(root))
        list(walk(root))
        assert tree.folders_listed() == len(counts)
    assert counts[root] == 1


def test_a_read_only_command_runs_with_few_collections(workspace: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside `check` the cycle collector runs once per `_COLLECT_EVERY` new objects and skips
    what was loaded before (frozen); after it, the process's own pace is back."""
    check_module = importlib.import_module("memlens.cli.check")
    real_run = check_module.run
    seen: list[tuple[int, bool]] = []

    def spying(args: object) -> int:
        seen.append((gc.get_threshold()[0], gc.get_freeze_count() > 0))
        return int(real_run(args))

    monkeypatch.setattr(check_module, "run", spying)
    before = gc.get_threshold(), gc.get_freeze_count()
    code, out = check_every_agent(workspace)
    assert code in (0, 1), out
    assert seen == [(cli_main._COLLECT_EVERY, True)]
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_a_runs_listings_are_freed_when_it_ends(root: Path) -> None:
    """A folder that cannot be listed raises the same error each time it is asked, and
    nothing of it ties the run into a reference cycle: the run (every folder's listing) is
    freed as it ends, with the cycle collector off."""
    build_tree(root, {"a/b.txt": ""})
    asked = []
    gc.disable()
    try:
        with tree.one_walk():
            run = weakref.ref(tree._RUN.get())  # type: ignore[arg-type]
            assert [name for name, _ in tree.listing(str(root / "a")).entries] == ["b.txt"]
            for _ in range(3):
                try:
                    tree.listing(str(root / "missing"))
                except FileNotFoundError as err:
                    asked.append((err.errno, err.filename, err.__traceback__ is not None))
            assert tree.folders_listed() == 2  # the missing folder was asked of the disk once
        assert run() is None
    finally:
        gc.enable()
    assert asked == [(2, str(root / "missing"), True)] * 3
