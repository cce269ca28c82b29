"""GitHub Copilot CLI 1.0.102's rules that are pure text (agents/copilot/), each as its real
requests showed it (the trees kept in tests/conformance/differential/regressions_copilot.yaml
run them against the real CLI)."""

from __future__ import annotations

import pytest

from memlens.agents.copilot.instructions import glob_matches
from memlens.agents.copilot.load import _cell


@pytest.mark.parametrize(("glob", "path", "applies"), [
    ("!**/*.test.ts", "x.py", True),
    ("!**/*.test.ts", "src/a.test.ts", False),
    ("!**/*.py", "src/core/a.py", False),
    ("!**/a.py", "src/core/a.py", False),
    ("!**", "src/a.py", False),
    ("!**/*", "src/a.py", False),
    # the rest fails on the file's name alone, so the negation holds
    ("!src/**", "src/a.py", True),
    ("!src/core/a.py", "src/core/a.py", True),
    ("!*/*/*", "src/core/a.py", True),
    ("!*", "src/core/a.py", True),
    ("!*", "x.py", False),
    ("!x.py", "x.py", False),
    ("!a.py", "src/core/a.py", True),
    ("!", "x.py", True),
    ("![", "x.py", False),  # does not parse: never
    ("a.py", "src/core/a.py", True),  # a name at any depth
    ("core/a.py", "src/core/a.py", False),
])
def test_negated_globs_hold_where_the_rest_fails_on_the_path_or_the_name(
        glob: str, path: str, applies: bool) -> None:
    assert glob_matches(glob, path) is applies


@pytest.mark.parametrize(("description", "cell"), [
    ("a b\n", "a b"),  # `>` block
    ("a\nb\n", "a b"),  # `|` block
    ("a\nb\n\n\n", "a b"),  # `|+`
    ("  padded  ", "padded"),
    ("a\n\nb", "a  b"),
    ("a\r\nb", "a b"),
    (" \n lead", "lead"),
    ("x\ty", "x\ty"),
    ("\u200b x", "\u200b x"),  # not White_Space: kept
    ("a |b", "a \\|b"),
    ("", ""),
    (None, ""),
])
def test_a_description_cell_is_its_lines_joined_and_trimmed(description: str | None,
                                                            cell: str) -> None:
    assert _cell(description) == cell
