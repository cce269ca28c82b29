"""Every diagnostic code the engine emits (docs/reference.md "Diagnostics"), on exact ranges.

Positions are 1-based; the end column is exclusive (the character after the token), so for an
import the range covers exactly `@path`. Each import case checks both the numbers and that the
text under the range is the token itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.workspace.queries import check, check_file, show

from .conftest import TreeSpec, build_tree

Row = tuple[str, int, int, int, int, str, str]


@pytest.fixture(autouse=True)
def _no_trust_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
                 "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)


def settings(root: Path, **extra: Any) -> MemorySettings:
    """Settings with a HOME whose user trusts root (a folder no rule matches is untrusted)."""
    (root / "home" / ".gemini").mkdir(parents=True, exist_ok=True)
    rules = root / "home" / ".gemini" / "trustedFolders.json"
    if not rules.exists():
        rules.write_text(json.dumps({str(root): "TRUST_FOLDER"}))
    return MemorySettings(home=str(root / "home"), discover_gemini_extensions=False, **extra)


def diagnose(root: Path, cwd: str = "", **extra: Any) -> list[Diagnostic]:
    return check(str(root / cwd), settings(root, **extra))


def rows(root: Path, diagnostics: list[Diagnostic]) -> list[Row]:
    prefix = str(root) + "/"
    return [(d.path.removeprefix(prefix), d.line, d.col, d.end_line, d.end_col, d.severity,
             d.code) for d in diagnostics]


def covered(d: Diagnostic) -> str:
    """The text under a single-line diagnostic's range."""
    assert d.line == d.end_line
    line = Path(d.path).read_text(encoding="utf-8").split("\n")[d.line - 1]
    return line[d.col - 1 : d.end_col - 1]


@pytest.fixture
def tree(root: Path) -> Callable[[TreeSpec], Path]:
    def make(spec: TreeSpec) -> Path:
        build_tree(root, spec)
        return root

    return make


# --- imports -------------------------------------------------------------------------------

def test_import_not_found(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "intro\n  @./missing.md tail\n"})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 2, 3, 2, 16, "error", "import-not-found")]
    assert covered(found[0]) == "@./missing.md"
    # Short, as written (fits the Problems panel); the resolved path and what Gemini CLI
    # embeds instead are the detail.
    assert found[0].message == "Import not found: ./missing.md"
    detail = found[0].detail or ""
    assert detail.startswith(f"{root / 'missing.md'} does not exist. ")
    assert (f"<!-- Import failed: ./missing.md - ENOENT: no such file or directory, access "
            f"'{root / 'missing.md'}' -->") in detail


def test_import_not_found_with_crlf_line_endings(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "x\r\nsee @./gone.md\r\n"})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 2, 5, 2, 15, "error", "import-not-found")]
    assert covered(found[0]) == "@./gone.md"


def test_import_not_found_in_flat_format(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "a @./gone.md\n"})
    found = diagnose(root, import_format="flat")
    assert rows(root, found) == [("GEMINI.md", 1, 3, 1, 13, "error", "import-not-found")]


def test_imports_inside_code_are_not_diagnosed(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "`@./gone.md` and\n```\n@./gone2.md\n```\n"})
    assert diagnose(root) == []


def test_import_outside_root_traversal(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"p/.git": None, "p/GEMINI.md": "@../secret.md\n", "secret.md": "s"})
    found = diagnose(root, "p")
    assert rows(root, found) == [("p/GEMINI.md", 1, 1, 1, 14, "error", "import-outside-root")]
    assert covered(found[0]) == "@../secret.md"
    assert found[0].message == "Import outside the project root: ../secret.md"
    assert str(root / "secret.md") in (found[0].detail or "")
    assert "Path traversal attempt" in (found[0].detail or "")


def test_import_outside_root_absolute(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"p/.git": None, "out.md": "o"})
    (root / "p" / "GEMINI.md").write_text(f"hi @{root / 'out.md'}\n")
    found = diagnose(root, "p")
    token = f"@{root / 'out.md'}"
    assert rows(root, found) == [
        ("p/GEMINI.md", 1, 4, 1, 4 + len(token), "error", "import-outside-root")]
    assert covered(found[0]) == token


def test_absolute_import_inside_root_is_fine(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"p/.git": None, "p/in.md": "i"})
    (root / "p" / "GEMINI.md").write_text(f"@{root / 'p' / 'in.md'}\n")
    assert diagnose(root, "p") == []


def test_import_outside_root_symlink_escape(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"p/.git": None, "p/GEMINI.md": "@./link/s.md\n", "out/s.md": "s"})
    os.symlink("../out", root / "p" / "link")
    found = diagnose(root, "p")
    assert rows(root, found) == [("p/GEMINI.md", 1, 1, 1, 13, "error", "import-outside-root")]
    assert covered(found[0]) == "@./link/s.md"
    assert found[0].message == "Import leaves the project root through a symlink: ./link/s.md"
    assert "symbolic link" in (found[0].detail or "")
    assert str(root / "out" / "s.md") in (found[0].detail or "")


def test_import_outside_root_without_marker_is_own_folder(
        tree: Callable[[TreeSpec], Path]) -> None:
    # No boundary marker: a file may only import from its own folder downward.
    root = tree({"p/GEMINI.md": "@../sib/x.md\n", "sib/x.md": "x"})
    found = diagnose(root, "p", memory_boundary_markers=[])
    assert rows(root, found) == [("p/GEMINI.md", 1, 1, 1, 13, "error", "import-outside-root")]


def test_import_url(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "see @https://example.com/x.md\n"})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 5, 1, 30, "error", "import-url")]
    assert covered(found[0]) == "@https://example.com/x.md"
    assert "URL" in found[0].message


def test_import_cycle_a_b_a(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "@./a.md\n", "a.md": "A\n@./b.md\n",
                 "b.md": "B\n@./a.md\n"})
    found = diagnose(root)
    assert rows(root, found) == [("b.md", 2, 1, 2, 8, "warning", "import-cycle")]
    assert covered(found[0]) == "@./a.md"
    assert "GEMINI.md → a.md → b.md → a.md" in found[0].message
    assert "File already processed" in found[0].message


def test_import_cycle_back_to_the_root(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "root\n@./a.md\n", "a.md": "A @./GEMINI.md\n"})
    found = diagnose(root)
    assert rows(root, found) == [("a.md", 1, 3, 1, 15, "warning", "import-cycle")]
    assert covered(found[0]) == "@./GEMINI.md"
    assert "GEMINI.md → a.md → GEMINI.md" in found[0].message
    assert "once more" in found[0].message  # the quirk: the root is re-imported once


def test_import_cycle_self(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "@./self.md\n", "self.md": "S @./self.md"})
    found = diagnose(root)
    assert rows(root, found) == [("self.md", 1, 3, 1, 13, "warning", "import-cycle")]


def test_import_too_deep(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "@./1.md\n", "1.md": "@./2.md", "2.md": "@./3.md",
                 "3.md": "@./4.md", "4.md": "@./5.md", "5.md": "five @./6.md", "6.md": "six"})
    found = diagnose(root)
    assert rows(root, found) == [("5.md", 1, 6, 1, 13, "warning", "import-too-deep")]
    assert covered(found[0]) == "@./6.md"
    assert "depth 5" in found[0].message
    # and the token really stays literal in the preview
    assert "five @./6.md" in show(str(root), settings(root)).content


def test_import_unreadable_directory(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "@./d\n", "d": None})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 1, 1, 5, "error", "import-unreadable")]
    assert covered(found[0]) == "@./d"
    assert found[0].message == "Import is a directory: ./d"
    assert "EISDIR: illegal operation on a directory, read" in (found[0].detail or "")


def test_import_unreadable_binary(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "@./b.bin\n"})
    (root / "b.bin").write_bytes(b"\x00\x01\xff")
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 1, 1, 9, "error", "import-unreadable")]
    assert covered(found[0]) == "@./b.bin"
    assert "binary" in found[0].message


def test_import_unreadable_invalid_utf8(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "@./u.md\n"})
    (root / "u.md").write_bytes(b"caf\xe9\n")
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 1, 1, 8, "error", "import-unreadable")]
    assert "UTF-8" in found[0].message


def test_import_unreadable_fifo_is_never_opened(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "x @./p\n"})
    os.mkfifo(root / "p")
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 3, 1, 7, "error", "import-unreadable")]
    assert found[0].message == "Import is not a regular file: ./p"
    assert "ENXIO" in (found[0].detail or "")


def test_import_in_prose_mention(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "ask @user about it\n"})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 5, 1, 10, "warning", "import-in-prose")]
    assert covered(found[0]) == "@user"
    assert "backticks" in found[0].message


def test_import_in_prose_trailing_comma(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "see @./notes.md, then\n", "notes.md": "n"})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 5, 1, 17, "warning", "import-in-prose")]
    assert covered(found[0]) == "@./notes.md,"
    assert "trailing punctuation" in found[0].message
    assert "`@./notes.md` exists" in found[0].message


def test_trailing_comma_without_the_file_is_not_found(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "see @./notes.md, then\n"})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 5, 1, 17, "error", "import-not-found")]


def test_import_in_prose_mention_with_punctuation(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "thanks @alice, for the review\n"})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 8, 1, 15, "warning", "import-in-prose")]


def test_bom_before_an_import(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "\ufeff@./a.md\n", "a.md": "A"})
    found = diagnose(root)
    assert [(r[1], r[2], r[5], r[6]) for r in rows(root, found)] == [
        (1, 1, "warning", "import-in-prose")]
    assert "byte-order mark" in found[0].message


def test_bom_is_not_a_column(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "\ufeffsee @./gone.md\n"})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 5, 1, 15, "error", "import-not-found")]


def test_import_diamond(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "@./a.md\n@./b.md\n", "a.md": "@./d.md",
                 "b.md": "x @./d.md", "d.md": "D"})
    found = diagnose(root)
    assert rows(root, found) == [("b.md", 1, 3, 1, 10, "info", "import-diamond")]
    assert covered(found[0]) == "@./d.md"
    assert str(root / "d.md") in found[0].message
    assert "GEMINI.md → a.md" in found[0].message
    # the preview really holds D twice
    assert show(str(root), settings(root)).content.count("<!-- Imported from: ./d.md -->") == 2


def test_subfolder_files_are_checked_too(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "root\n", "sub/GEMINI.md": "@./gone.md"})
    assert rows(root, diagnose(root)) == [
        ("sub/GEMINI.md", 1, 1, 1, 11, "error", "import-not-found")]


def test_check_file_alone(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "notes/GEMINI.md": "x\n@./gone.md\n"})
    found = check_file(str(root / "notes" / "GEMINI.md"), settings(root))
    assert rows(root, found) == [("notes/GEMINI.md", 2, 1, 2, 11, "error", "import-not-found")]


# --- discovery -----------------------------------------------------------------------------

def test_search_budget_exhausted(tree: Callable[[TreeSpec], Path]) -> None:
    # BFS: w (1), w/a (2) (w/.git is git-ignored by default), then the budget is gone: w/z
    # and w/a/b are never read.
    root = tree({"w/.git": None, "w/GEMINI.md": "root", "w/a/b/c/GEMINI.md": "deep\n",
                 "w/z/GEMINI.md": "zed\n", "w/a/GEMINI.md": "a\n"})
    found = diagnose(root, "w", jit_context=False, discovery_max_dirs=2)
    assert rows(root, found) == [
        ("w/a/b/c/GEMINI.md", 1, 1, 1, 5, "warning", "search-budget-exhausted"),
        ("w/z/GEMINI.md", 1, 1, 1, 4, "warning", "search-budget-exhausted"),
    ]
    assert "after 2 folders" in found[0].message
    assert str(root / "w") in found[0].message
    loaded = show(str(root / "w"), settings(root, jit_context=False, discovery_max_dirs=2))
    assert str(root / "w" / "a" / "GEMINI.md") in loaded.files
    assert str(root / "w" / "z" / "GEMINI.md") not in loaded.files


def test_search_budget_enough_means_no_diagnostic(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"w/.git": None, "w/GEMINI.md": "root", "w/z/GEMINI.md": "zed\n"})
    assert diagnose(root, "w", jit_context=False, discovery_max_dirs=3) == []
    assert diagnose(root, "w", jit_context=False, discovery_max_dirs=-1) == []


def test_search_budget_ignores_what_geminiignore_hides(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"w/.git": None, "w/GEMINI.md": "root", "w/a/b/GEMINI.md": "deep",
                 "w/.geminiignore": "a\n"})
    assert diagnose(root, "w", jit_context=False, discovery_max_dirs=2) == []


def test_search_budget_is_classic_only(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"w/.git": None, "w/GEMINI.md": "root", "w/a/b/c/GEMINI.md": "deep\n"})
    assert diagnose(root, "w", jit_context=True, discovery_max_dirs=1) == []


def test_read_above_root_parent_of_git_root(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"GEMINI.md": "parent memory\nmore\n", "repo/.git": None,
                 "repo/GEMINI.md": "repo"})
    found = diagnose(root, "repo", jit_context=False)
    assert rows(root, found) == [("GEMINI.md", 1, 1, 1, 14, "warning", "read-above-root")]
    assert f"parent of the repository root {root / 'repo'}" in found[0].message
    # the quirk is real: the file is loaded, before the repository's own
    loaded = show(str(root / "repo"), settings(root, jit_context=False))
    assert loaded.files == [str(root / "GEMINI.md"), str(root / "repo" / "GEMINI.md")]


def test_read_above_root_is_classic_only(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({"GEMINI.md": "parent memory\n", "repo/.git": None, "repo/GEMINI.md": "repo"})
    assert diagnose(root, "repo", jit_context=True) == []
    assert show(str(root / "repo"), settings(root)).files == [str(root / "repo" / "GEMINI.md")]


def test_read_above_root_without_a_repository(tree: Callable[[TreeSpec], Path]) -> None:
    # No .git anywhere: the classic walk climbs to dirname(HOME) = root.
    root = tree({"GEMINI.md": "top\n", "a/GEMINI.md": "mid\n", "a/b/GEMINI.md": "cwd\n"})
    found = diagnose(root, "a/b", jit_context=False)
    assert rows(root, found) == [
        ("GEMINI.md", 1, 1, 1, 4, "warning", "read-above-root"),
        ("a/GEMINI.md", 1, 1, 1, 4, "warning", "read-above-root"),
    ]
    assert "no boundary marker (.git)" in found[0].message


def test_file_too_large(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "first line\n" + "x" * 1_000_000})
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 1, 1, 11, "warning", "file-too-large")]
    assert "1,000,011 bytes" in found[0].message


def test_file_too_large_threshold_is_a_setting(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "first line\n" + "x" * 200})
    assert diagnose(root) == []
    assert [r[6] for r in rows(root, diagnose(root, large_file_bytes=100))] == ["file-too-large"]


def test_context_truncated(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "first line\n@./a.md\n", "a.md": "y" * 500})
    found = diagnose(root, max_context_chars=100)
    assert rows(root, found) == [("GEMINI.md", 1, 1, 1, 11, "warning", "context-truncated")]
    assert "(100)" in found[0].message
    result = show(str(root), settings(root, max_context_chars=100))
    assert result.truncated
    assert "[Memory Lens: preview truncated at 100 characters" in result.content
    assert "y" * 500 not in result.content


def test_file_unreadable_binary_memory_file(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None})
    (root / "GEMINI.md").write_bytes(b"ok\x00\xff\nmore\n")
    found = diagnose(root)
    assert rows(root, found) == [("GEMINI.md", 1, 1, 1, 5, "error", "file-unreadable")]


def test_diagnostics_are_sorted_and_unique(tree: Callable[[TreeSpec], Path]) -> None:
    root = tree({".git": None, "GEMINI.md": "@./z.md @user\n@./a.md\n", "a.md": "@./gone.md",
                 "sub/GEMINI.md": "@https://x.y/z"})
    found = diagnose(root)
    keys = [d.sort_key() for d in found]
    assert keys == sorted(keys)
    assert len({(d.path, d.line, d.col, d.code) for d in found}) == len(found)
    assert rows(root, found) == [
        ("GEMINI.md", 1, 1, 1, 8, "error", "import-not-found"),
        ("GEMINI.md", 1, 9, 1, 14, "warning", "import-in-prose"),
        ("a.md", 1, 1, 1, 11, "error", "import-not-found"),
        ("sub/GEMINI.md", 1, 1, 1, 15, "error", "import-url"),
    ]
