"""What the shared walk costs per folder (files/tree.py, agents/gemini/ignore.py), counted,
never timed: the ignore rules run RE2 only on a path that can match them, each folder's own
verdict is asked once, and a folder's entries are read from the type the listing gave.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from memlens.agents.gemini import ignore as ignore_module
from memlens.agents.gemini.ignore import IgnoreFilter, _compile, _test_one
from memlens.files import globs, tree

from .conftest import build_tree


def _repository(root: Path) -> Path:
    files = {"repo/.git/HEAD": "ref: refs/heads/main\n"}
    for a in range(4):
        for b in range(4):
            files[f"repo/pkg{a}/mod{b}/src/file.py"] = ""
    build_tree(root, files)
    return root / "repo"


def test_a_path_without_the_rules_text_costs_no_regular_expression(root: Path) -> None:
    repo = _repository(root)
    ignore = IgnoreFilter(str(repo), respect_git_ignore=True, respect_gemini_ignore=True)
    before = globs.operations
    verdicts = [ignore.ignored(f"{repo}/pkg{a}/mod{b}/src") for a in range(4) for b in range(4)]
    assert not any(verdicts)
    # `.git` is the only rule: no path here holds ".git", so RE2 is never asked
    assert globs.operations == before
    assert ignore.ignored(f"{repo}/.git")
    assert ignore.ignored(f"{repo}/pkg0/.GIT")  # as before: case-insensitive


def test_each_folder_is_tested_once_as_a_folder(root: Path, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    repo = _repository(root)
    (repo / ".gitignore").write_text("*.log\n!keep.log\nbuild*/\n")
    asked: list[str] = []
    real = ignore_module._test_one

    def counting(rules: list[ignore_module._Rule], path: str) -> bool:
        asked.append(path)
        return real(rules, path)

    monkeypatch.setattr(ignore_module, "_test_one", counting)
    ignore = IgnoreFilter(str(repo), respect_git_ignore=True, respect_gemini_ignore=True)
    for a in range(4):
        for b in range(4):
            ignore.ignored(f"{repo}/pkg{a}/mod{b}/src/file.py")
    folders = [p for p in asked if p.endswith("/")]
    assert folders and len(folders) == len(set(folders))


PIECES = ["a", "b", "A", ".git", "x.log", "build", "*", "**", "?", "/", "!", "[ab]", "\\*",
          " ", "é", "K", "ſ", "{a,b}", "-", "_"]


def _random_pattern(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 5)))


def _random_path(rng: random.Random) -> str:
    names = ["a", "b", "A", ".git", "x.log", "build", "é", "\u212a", "\u017f", "ab", "B-1",
             "x_y", "k", "s"]
    return "/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) + rng.choice(["", "/"])


def test_ruling_a_path_out_by_its_text_never_changes_a_verdict() -> None:
    rng = random.Random(31)
    for _ in range(400):
        patterns = [_random_pattern(rng) for _ in range(rng.randint(1, 4))]
        rules = _compile(patterns)
        plain = [rule._replace(needs=None) for rule in rules]
        for _ in range(10):
            path = _random_path(rng)
            assert _test_one(rules, path) == _test_one(plain, path), (patterns, path)


def test_a_listing_reads_types_from_the_folder_listing(root: Path) -> None:
    build_tree(root, {"top/sub/x.md": "", "top/file.md": ""})
    os.symlink("sub", root / "top" / "link")
    os.symlink("missing", root / "top" / "broken")
    listed = tree.read_listing(str(root / "top"))
    assert dict(listed.entries) == {"sub": tree.DIR, "file.md": tree.FILE,
                                    "link": tree.LINK_DIR, "broken": tree.LINK}
    assert listed.kinds == dict(listed.entries)
    assert listed.has_file("file.md") and listed.has_file("broken")
    assert not listed.has_file("sub") and not listed.has_file("link")
    assert not listed.has_file("absent")


def test_a_run_climbs_each_folder_once_for_the_repository_root(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.files.roots import repository_root

    repo = _repository(root)
    asked: list[str] = []
    real = os.path.exists

    def counting(path: str) -> bool:
        asked.append(path)
        return real(path)

    monkeypatch.setattr(os.path, "exists", counting)
    starts = [f"{repo}/pkg{a}/mod{b}/src" for a in range(4) for b in range(4)]
    with tree.one_walk():
        assert {repository_root(start) for start in starts} == {str(repo)}
    assert len(asked) == len(set(asked))  # each folder's `.git` looked for once
    asked.clear()
    assert repository_root(starts[0]) == str(repo)  # outside a run: afresh
    assert asked


def test_a_rule_above_many_folders_is_parsed_once_per_run(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.agents.claude import startup

    build_tree(root, {"home/.keep": "", "repo/.git/HEAD": "",
                      "repo/.claude/rules/docs.md": "---\npaths: [\"docs/**\"]\n---\nShort.\n",
                      "repo/a/CLAUDE.md": "A\n", "repo/b/CLAUDE.md": "B\n"})
    parsed: list[str] = []
    real = startup.read_frontmatter

    def counting(content: str) -> tuple[dict[str, object] | None, str | None]:
        parsed.append(content)
        return real(content)

    monkeypatch.setattr(startup, "read_frontmatter", counting)
    folders = [str(root / "repo" / "a"), str(root / "repo" / "b")]
    with tree.one_walk():
        checked = startup.check_claude_folders(str(root / "home"), folders)
    assert len(parsed) == 1
    assert str(root / "repo" / ".claude" / "rules" / "docs.md") in checked.sources
    alone = startup.check_claude_folders(str(root / "home"), folders)  # no run: no memo
    assert (checked.sources, checked.diagnostics) == (alone.sources, alone.diagnostics)


@pytest.mark.parametrize("gitignore", ["*.log\n!keep.log\nbuild*/\n", "a\\\\b\n/pkg1\n!pkg1/x\n",
                                       "**/src\n!pkg0/mod0/src/\n", ""])
def test_a_folders_entries_asked_together_get_the_verdicts_asked_alone(
        root: Path, gitignore: str) -> None:
    repo = _repository(root)
    (repo / ".gitignore").write_text(gitignore)
    (repo / "pkg0" / ".gitignore").write_text("mod1\n*.py\n")
    names = ["src", "x.log", "keep.log", "build1", "a\\b", "b\\", ".git", "file.py", "x"]
    folders = [str(repo)] + [f"{repo}/pkg{a}/mod{b}" for a in range(3) for b in range(3)]
    together = IgnoreFilter(str(repo), respect_git_ignore=True, respect_gemini_ignore=True)
    for folder in folders:
        alone = IgnoreFilter(str(repo), respect_git_ignore=True, respect_gemini_ignore=True)
        expected = [alone.ignored(f"{folder}/{name}") for name in names]
        assert together.ignored_entries(folder, names) == expected, folder


def test_a_file_above_many_folders_has_its_includes_read_once_per_run(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.agents.claude import includes, startup

    build_tree(root, {"home/.keep": "", "repo/.git/HEAD": "",
                      "repo/CLAUDE.md": "Read @AGENTS.md first.\n", "repo/AGENTS.md": "Rules\n",
                      "repo/a/CLAUDE.md": "A\n", "repo/b/CLAUDE.md": "B\n"})
    scanned: list[str] = []
    real = includes.markdown_includes

    def counting(text: str) -> list[object]:
        scanned.append(text)
        return real(text)  # type: ignore[return-value]

    monkeypatch.setattr(includes, "markdown_includes", counting)
    folders = [str(root / "repo" / "a"), str(root / "repo" / "b")]
    with tree.one_walk():
        checked = startup.check_claude_folders(str(root / "home"), folders)
    assert scanned.count("Read @AGENTS.md first.\n") == 1
    alone = startup.check_claude_folders(str(root / "home"), folders)  # no run: no memo
    assert (checked.sources, checked.diagnostics) == (alone.sources, alone.diagnostics)
    assert scanned.count("Read @AGENTS.md first.\n") == 3
