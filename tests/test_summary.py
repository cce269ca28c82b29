"""The short answer first (issue 33): `show` and `list` covering several agents start with one
summary — per agent, what it sends at start, what loads later and where, what is cut, which of
its own files it does not read here — rendered from the engine's reading of the folder
(workspace/summary.py); `--summary` prints it alone (`--json`: FolderSummary). One agent's
`show` stays byte-exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import build_tree
from .test_cli import memlens


@pytest.fixture
def monorepo(root: Path) -> Path:
    """A root CLAUDE.md and AGENTS.md, a nested CLAUDE.md (Claude Code loads it on read) and
    two nested AGENTS.md (the convention reads them only when started in their folder)."""
    build_tree(root, {
        "home": None, "repo/.git": None,
        "repo/CLAUDE.md": "Use pnpm.\n",
        "repo/AGENTS.md": "Run make test.\n",
        "repo/api/CLAUDE.md": "API rules.\n", "repo/api/main.py": "print()\n",
        "repo/packages/web/AGENTS.md": "Web rules.\n",
        "repo/packages/cli/AGENTS.md": "CLI rules.\n",
    })
    return root


def _run(root: Path, *args: str) -> str:
    run = memlens(*args, cwd=root, home=root / "home", env={"MEMLENS_AGENTS": ""})
    assert run.code == 0, run.err
    return run.out


def test_list_starts_with_the_summary(monorepo: Path) -> None:
    out = _run(monorepo, "list", "repo")
    summary, *sections = out.split("\n\n==> ")
    assert summary.splitlines() == [
        "Claude Code (claude@2.1): 1 file at start, 10 chars, ~3 tokens",
        "  on read: 1 file, ~3 tokens, in api/",
        "AGENTS.md (agents): 1 file at start, 15 chars, ~4 tokens",
        "  read only when started elsewhere: 2 files in packages/cli/, packages/web/",
    ]
    assert [s.splitlines()[0] for s in sections] == ["Claude Code (claude@2.1) <==",
                                                     "AGENTS.md (agents) <=="]


def test_show_summary_alone_and_then_the_payloads(monorepo: Path) -> None:
    alone = _run(monorepo, "show", "repo", "--summary")
    assert "==>" not in alone and "Use pnpm." not in alone
    full = _run(monorepo, "show", "repo")
    assert full.startswith(alone + "\n==> Claude Code (claude@2.1) <==\n")
    assert "Use pnpm." in full and "Run make test." in full
    # One agent named: its summary alone; its `show` is still exactly its text.
    one = _run(monorepo, "show", "repo", "--agent", "claude", "--summary")
    assert one.startswith("Claude Code (claude@2.1): 1 file at start") and "AGENTS.md" not in one
    exact = _run(monorepo, "show", "repo", "--agent", "agents")
    assert exact == _run(monorepo, "show", "repo", "--agent", "agents", "--render", "flat")
    assert exact.endswith("AGENTS.md ---\nRun make test.\n") and "(agents): " not in exact


def test_summary_json(monorepo: Path) -> None:
    data = json.loads(_run(monorepo, "list", "repo", "--summary", "--json"))
    repo = str((monorepo / "repo").resolve())
    assert data["cwd"] == repo
    claude, agents = data["agents"]
    assert claude["agent"] == "claude" and claude["profile"] == "claude@2.1"
    assert claude["startup"]["files"] == 1 and claude["startup"]["tokens"] == 3
    assert claude["onRead"] == {"files": 1, "folders": [f"{repo}/api"], "tokens": 3,
                                "unmatched": 0}
    assert agents["notRead"] == [{
        "kind": "elsewhere", "paths": [f"{repo}/packages/cli/AGENTS.md",
                                       f"{repo}/packages/web/AGENTS.md"],
        "folders": [f"{repo}/packages/cli", f"{repo}/packages/web"],
        "why": agents["notRead"][0]["why"]}]
    assert "started in packages/cli/" in agents["notRead"][0]["why"]


def test_summary_names_the_cut_and_the_ignored(root: Path) -> None:
    # Codex sends at most 32 KiB of project docs: the summary says where it cuts.
    build_tree(root, {"home": None, "repo/.git": None,
                      "repo/AGENTS.md": "x" * 40_000 + "\n"})
    out = _run(root, "show", "repo", "--agent", "codex", "--summary")
    assert out.splitlines()[0].startswith("Codex (codex@")
    assert "\n  cut: AGENTS.md at line 1 (" in out


def test_a_long_folder_list_stays_one_line(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/CLAUDE.md": "root\n",
                      **{f"repo/p{n}/CLAUDE.md": f"rules {n}\n" for n in range(7)}})
    build_tree(root, {"repo/a/b/c/CLAUDE.md": "deep\n", "repo/a/d/CLAUDE.md": "d\n",
                      "repo/a/e/CLAUDE.md": "e\n", "repo/a/f/CLAUDE.md": "f\n"})
    out = _run(root, "list", "repo", "--agent", "claude", "--summary")
    # More than four folders side by side are said once under their parent; the rest by
    # name, four at most.
    assert out.splitlines()[1] == ("  on read: 11 files, ~18 tokens, in a/b/c/, a/d/, a/e/, "
                                   "a/f/ and 1 more")
    build_tree(root, {"repo/a/g/CLAUDE.md": "g\n", "repo/a/h/CLAUDE.md": "h\n"})
    out = _run(root, "list", "repo", "--agent", "claude", "--summary")
    assert out.splitlines()[1] == ("  on read: 13 files, ~20 tokens, in a/b/c/, a/ (5 folders), "
                                   "./ (7 folders)")


def test_a_symlinked_memory_file_is_one_file_with_two_names(root: Path) -> None:
    # CLAUDE.md -> AGENTS.md -> .agents/AGENTS.md (langfuse's layout): every name of the file
    # reads as what the agent reads under the other, in the matrix and the summary alike.
    build_tree(root, {"home": None, "repo/.git": None, "repo/.agents/AGENTS.md": "Rules.\n"})
    (root / "repo" / "AGENTS.md").symlink_to(".agents/AGENTS.md")
    (root / "repo" / "CLAUDE.md").symlink_to("AGENTS.md")
    matrix = json.loads(_run(root, "report", "repo", "--json-file", "-"))
    cells = {(row["relative"], agent): cell for row in matrix["rows"]
             for agent, cell in row["cells"].items()}
    assert {key: cell["state"] for key, cell in cells.items()} == {
        (name, agent): "startup" for name in (".agents/AGENTS.md", "AGENTS.md", "CLAUDE.md")
        for agent in ("claude", "agents")}
    assert cells[("AGENTS.md", "claude")]["why"].startswith(
        "the same file as CLAUDE.md (a symbolic link): ")
    summary = json.loads(_run(root, "show", "repo", "--summary", "--json"))
    assert [a["notRead"] for a in summary["agents"]] == [[], []]
