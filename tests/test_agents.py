"""One reference scanner for both `@path` forms (Gemini CLI's imports, Claude Code's
includes), one frontmatter reader, one repository-root finder."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memlens.dialects.claude import find_includes
from memlens.frontmatter import line_closed_frontmatter
from memlens.imports import ImportToken, find_code_regions, find_imports, repository_root

from .conftest import build_tree

# What Claude Code's include scanner was before it shared Gemini CLI's: the oracle.
_CLAUDE_INCLUDE = re.compile(r"(?:^|(?<=[ \t\n\r]))@([^\s]+)")


def _regex_includes(text: str) -> list[ImportToken]:
    regions = find_code_regions(text) if "`" in text else []
    tokens = []
    for match in _CLAUDE_INCLUDE.finditer(text):
        path = match.group(1)
        if not (path[0] in "./~" or path[0].isalnum()):
            continue
        in_code = any(a <= match.start() < b for a, b in regions)
        tokens.append(ImportToken(match.start(), match.end(), path, in_code))
    return tokens


_TRICKY = "@ab~./1`\t\n\r \x0b\x0c\x1c\x85\xa0\u2003\u3000é٣-_"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_TRICKY, max_size=40))
def test_claude_includes_scan_as_they_did(text: str) -> None:
    assert find_includes(text) == _regex_includes(text)


def test_the_two_scanners_differ_only_where_the_agents_do() -> None:
    text = "@./a @~/b @1.md @é.md @c\u3000tail @d\x0bx"
    assert [t.path for t in find_imports(text)] == ["./a", "c\u3000tail", "d\x0bx"]
    assert [t.path for t in find_includes(text)] == ["./a", "~/b", "1.md", "é.md", "c", "d"]


def test_claude_path_ends_are_every_whitespace_character() -> None:
    from memlens.dialects.claude import _PATH_ENDS

    assert {c for c in map(chr, range(0x110000)) if c.isspace()} == _PATH_ENDS


def test_frontmatter_closed_by_a_line_of_its_own() -> None:
    assert line_closed_frontmatter("---\npaths: a\n---\nbody") == {"paths": "a"}
    assert line_closed_frontmatter("---\r\npaths: a\r\n---") == {"paths": "a"}
    assert line_closed_frontmatter("---\npaths: a\n---trailing\n") is None
    assert line_closed_frontmatter("---\n- a list\n---\n") is None
    assert line_closed_frontmatter("---\nkey: [unclosed\n---\n") is None


def test_repository_root(root: Path) -> None:
    build_tree(root, {"repo/.git": None, "repo/a/b": None})
    assert repository_root(str(root / "repo" / "a" / "b")) == str(root / "repo")
    assert repository_root(str(root / "repo" / ".." / "repo")) == str(root / "repo")
