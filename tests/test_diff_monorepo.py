"""`memlens diff` at home in a monorepo (issue 33): one changed root file is one change, said
once, its folders listed under it, and the whole answer fits one screen; and the command on
this repository's own history."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memlens.protocol.context_diff import DiffResult

from .conftest import build_tree
from .test_cli import PROJECT, memlens
from .test_diff_cli import git

PACKAGES = 60
SCREEN = 40  # lines: one terminal screen


@pytest.fixture
def monorepo(root: Path) -> Path:
    """A root AGENTS.md (which the root CLAUDE.md imports) and GEMINI.md, and 60 packages
    with their own AGENTS.md and CLAUDE.md; the second commit edits one root line."""
    tree: dict[str, str | None] = {
        "AGENTS.md": "# Monorepo rules\n\n- Use pnpm.\n- Run the tests before you push.\n",
        "CLAUDE.md": "@AGENTS.md\n", "GEMINI.md": "# Gemini notes\n"}
    for number in range(PACKAGES):
        tree[f"packages/pkg{number:02}/AGENTS.md"] = f"# Package {number}\n"
        tree[f"packages/pkg{number:02}/CLAUDE.md"] = f"# Package {number} for Claude\n"
        tree[f"packages/pkg{number:02}/src/index.ts"] = "export {};\n"
    build_tree(root, {"home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
                      "tmp": None})
    repo = root / "repo"
    build_tree(repo, tree)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    rules = repo / "AGENTS.md"
    rules.write_text(rules.read_text().replace("Use pnpm.", "Use pnpm 9."))
    git(repo, "commit", "-qam", "second: one root line")
    return repo


def _diff(repo: Path, *args: str) -> tuple[int, str, str]:
    out = memlens("diff", "HEAD~1", "HEAD", "--agent", "gemini@0.44+", "--agent", "claude",
                  "--agent", "codex", *args, cwd=repo, home=repo.parent / "home",
                  env={"TMPDIR": str(repo.parent / "tmp")})
    return out.code, out.out, out.err


def test_one_changed_root_line_fits_one_screen(monorepo: Path) -> None:
    code, out, _ = _diff(monorepo)
    assert code == 1
    lines = out.splitlines()
    assert len(lines) <= SCREEN, out
    assert lines[0] == ("memlens diff HEAD~1 → HEAD: 1 file changed; 1 change in what agents "
                        "send at start, for 2 of 3 agents; 61 folders compared")
    # Said once: the changed line appears once, whatever the folders it reaches.
    assert out.count("-- Use pnpm.") == 1 and out.count("+- Use pnpm 9.") == 1
    assert "  AGENTS.md  modified +1 −1  Claude Code in 1 folder, Codex in 61 folders" in lines
    codex = next(i for i, line in enumerate(lines) if line.startswith("  Codex (codex@0.169), "))
    assert lines[codex].startswith("  Codex (codex@0.169), 61 folders, ")
    assert " tokens: ./ packages/pkg00/ packages/pkg01/" in lines[codex]
    assert any(line.startswith("      … and ") and "more (--json lists every folder)" in line
               for line in lines[codex:codex + 4])
    # The JSON still has one entry per (agent, folder), and the one change naming them all.
    result = DiffResult.model_validate_json(_diff(monorepo, "--json")[1])
    assert len(result.changes) == 62
    (group,) = result.groups
    assert group.changes == list(range(62)) and group.files == ["AGENTS.md"]


def test_stat_and_github_on_the_monorepo(monorepo: Path) -> None:
    code, stat, _ = _diff(monorepo, "--stat")
    assert code == 1 and len(stat.splitlines()) == 5
    _, github, _ = _diff(monorepo, "--format", "github")
    (notice,) = github.splitlines()  # one notice, on the line that changed
    assert notice.startswith("::notice file=AGENTS.md,line=3,endLine=3,title=")
    assert "Codex (codex@0.169) in 61 folders (./, packages/pkg00/" in notice
    assert " and 41 more)" in notice


def _history() -> tuple[str, str] | None:
    """Two commits of this repository's own history between which the demo's memory
    changed (the first and the last to touch examples/demo), or None outside a clone."""
    try:
        touched = subprocess.run(["git", "log", "--format=%H", "--", "examples/demo"],
                                 cwd=PROJECT, capture_output=True, text=True, check=True,
                                 timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    return (touched[-1], touched[0]) if len(touched) >= 2 else None


def test_this_repositorys_own_history(root: Path) -> None:
    commits = _history()
    if commits is None:
        pytest.skip("not a git clone with the demo's history")
    first, last = commits
    (root / "home").mkdir()
    demo = PROJECT / "examples" / "demo"
    args = ("diff", first, last, "--agent", "gemini@0.44+", "--agent", "claude", "--agent",
            "codex")
    env = {"TMPDIR": str(root)}
    text = memlens(*args, cwd=demo, home=root / "home", env=env)
    data = memlens(*args, "--json", cwd=demo, home=root / "home", env=env)
    assert text.code == data.code and text.code in (0, 1), text.err
    result = DiffResult.model_validate_json(data.out)
    if not result.changes:
        assert text.out == ""
        return
    lines = text.out.splitlines()
    assert lines[0].startswith(f"memlens diff {first} → {last}: ")
    # Every (agent, folder) in exactly one change, and each change's lines said once.
    assert sorted(i for g in result.groups for i in g.changes) == list(range(len(result.changes)))
    blocks = text.out.split("\nchange ")[1:]
    assert len(blocks) == len(result.groups)
    for block, group in zip(blocks, result.groups, strict=True):
        diff = result.changes[group.changes[0]].diff
        assert diff.split("\n", 2)[2].rstrip("\n") in block
    # Fewer lines than one diff per (agent, folder) would print.
    assert len(lines) <= sum(len(c.diff.splitlines()) + 1 for c in result.changes) + 10


def test_a_file_too_large_to_compare_is_left_out_not_an_error(root: Path) -> None:
    """A 5 MB file the head's memory starts importing: copied on one side only, read from git
    on the other, past the 4 MB a comparison reads: left out of the files, no error."""
    build_tree(root, {"home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
                      "tmp": None, "repo/GEMINI.md": "Rules.\n",
                      "repo/docs/big.md": "x" * (5 * 1024 * 1024) + "\n"})
    repo = root / "repo"
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "first")
    (repo / "GEMINI.md").write_text("Rules.\n@./docs/big.md\n")
    out = memlens("diff", "HEAD", "--agent", "gemini@0.44+", "--json", cwd=repo,
                  home=root / "home", env={"TMPDIR": str(root / "tmp")})
    assert out.code == 1, out.err
    result = DiffResult.model_validate_json(out.out)
    assert [f.path for f in result.files] == ["GEMINI.md"]


def test_files_that_reach_no_agent_are_one_line(monorepo: Path) -> None:
    """A commit that also adds a skill's scripts (files an agent can read, not at start):
    the summary lists the memory file that changes what agents read, and says the others in
    one line (JSON keeps every file)."""
    build_tree(monorepo, {f".agents/skills/tool/scripts/step{n:02}.py": "print()\n"
                          for n in range(12)})
    rules = monorepo / "AGENTS.md"
    rules.write_text(rules.read_text().replace("Use pnpm 9.", "Use pnpm 10."))
    git(monorepo, "add", "-A")
    git(monorepo, "commit", "-qm", "third: a skill's scripts and one root line")
    code_, out, _ = _diff(monorepo, "--stat")
    assert code_ == 1
    assert "index.ts" not in out
    assert "  12 other changed files change no agent's start context" in out
    assert any(line.startswith("  AGENTS.md") for line in out.splitlines())
    _, as_json, _ = _diff(monorepo, "--json")
    assert len(DiffResult.model_validate_json(as_json).files) == 13
