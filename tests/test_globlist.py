"""The glob-list splitter Claude Code's `paths:` and Cursor's `globs` share (text/globlist.py):
one reading, the `{a,b}` group pattern the only difference between the agents."""

from __future__ import annotations

import re

import pytest

from memlens.agents.claude.rules import globs_of
from memlens.agents.cursor.rules import split_globs
from memlens.files.globs import MAX_EXPANDED
from memlens.text.globlist import split_glob_list

ANY_GROUP = re.compile(r"^([^{]*)\{([^}]*)\}(.*)$")


@pytest.mark.parametrize(("value", "globs"), [
    ("a/*.md, b/{x,y}/*.ts", ["a/*.md", "b/x/*.ts", "b/y/*.ts"]),
    (["c/**", ["d/{p,q}, e"]], ["c/**", "d/p", "d/q", "e"]),
    ("{a,b}{c,d}", ["ac", "ad", "bc", "bd"]),
    ("x},y,{z", ["x},y,{z"]),  # a stray `}` keeps the commas after it inside
    ("  ,  ", []),
    (5, []),
    (None, []),
])
def test_split_glob_list(value: object, globs: list[str]) -> None:
    assert split_glob_list(value, ANY_GROUP) == globs


def test_the_agents_differ_only_in_the_group_they_read() -> None:
    assert split_globs("a{}b,c") == ["ab", "c"]  # Cursor: an empty group is a group
    assert globs_of({"paths": "a{}b,c"}) == ["a{}b", "c"]  # Claude Code: it is text


def test_expansion_stops_at_the_bound() -> None:
    out = split_glob_list("{a,b}" * 20, ANY_GROUP)
    assert out.stopped and len(out) == MAX_EXPANDED
