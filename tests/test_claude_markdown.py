"""agents/claude/markdown.py: Claude Code 2.1's reading of a memory file's markdown (each
case here was sent by the real agent: tests/conformance/differential/regressions_claude.yaml
runs the same texts through it)."""

from __future__ import annotations

import pytest

from memlens.agents.claude.markdown import (
    comment_spans,
    follow_claude_version,
    includes,
    split_frontmatter,
    strip_comments,
)
from memlens.agents.claude.rules import globs_match, rule_globs


@pytest.mark.parametrize(("text", "sent"), [
    ("first\n<!-- a note -->\n\n\nsecond\n", "first\nsecond\n"),  # the blank lines go too
    ("a <!-- inline --> b\n", "a <!-- inline --> b\n"),
    ("```\n<!-- in a fence -->\n```\n", "```\n<!-- in a fence -->\n```\n"),
    ("    <!-- indented code -->\n", "    <!-- indented code -->\n"),
    ("<!-- c --> after it\n", " after it\n"),
    ("one\r\n<!-- c -->\r\ntwo\r\n", "one\ntwo\n"),  # cut once: LF throughout
    ("kept\r\ncrlf\r\n", "kept\r\ncrlf\r\n"),
    ("text\n  <!-- indented -->\n  \nnext\n", "text\n  <!-- indented -->\n  \nnext\n"),
    ("  <!-- alone -->\n\nx\n", "x\n"),
])
def test_comment_blocks(text: str, sent: str) -> None:
    assert strip_comments(text) == sent


@pytest.mark.parametrize(("version", "text", "sent"), [
    # 2.1.330 continues a block quote at an indented HTML line; 2.1.332 ends it there (C8)
    ("2.1.330", "> quoted\n  <!-- after a quote -->\n  \nx\n",
     "> quoted\n  <!-- after a quote -->\n  \nx\n"),
    ("2.1.332", "> quoted\n  <!-- after a quote -->\n  \nx\n", "> quoted\n  \nx\n"),
    ("2.1.330", "> quoted\n   <!-- 3sp -->\n\nx\n", "> quoted\n   <!-- 3sp -->\n\nx\n"),
    ("2.1.332", "> quoted\n   <!-- 3sp -->\n\nx\n", "> quoted\nx\n"),
    (None, "> quoted\n   <!-- 3sp -->\n\nx\n", "> quoted\nx\n"),  # unknown: the newest
    ("2.1.400", "> quoted\n   <!-- 3sp -->\n\nx\n", "> quoted\nx\n"),
    # a paragraph goes on in both; a comment in the first column ends the quote in both
    ("2.1.332", "para\n  <!-- indented -->\n\nx\n", "para\n  <!-- indented -->\n\nx\n"),
    ("2.1.330", "> quoted\n<!-- col0 -->\n\nx\n", "> quoted\nx\n"),
])
def test_comment_blocks_per_release(version: str | None, text: str, sent: str) -> None:
    try:
        follow_claude_version(version)
        assert strip_comments(text) == sent
    finally:
        follow_claude_version(None)


def test_comment_spans_are_in_the_text_as_written() -> None:
    text = "one\r\n<!-- c -->\r\n\r\ntwo\r\n"
    [(start, end)] = comment_spans(text)
    assert text[start:end] == "<!-- c -->\r\n\r\n"


@pytest.mark.parametrize(("text", "body", "meta"), [
    ("---\n---\nbody\n", "body\n", ""),
    ("---\nk: v\n---\n\nbody\n", "body\n", "k: v\n"),
    ("\ufeff---\nk: v\n---\nbody\n", "body\n", "k: v\n"),
    ("\ufeffno frontmatter\n", "\ufeffno frontmatter\n", None),
    ("---\ntitle: a---b\n---\nbody\n", "b\n---\nbody\n", "title: a"),
    ("---\r\nk: v\r\n---\r\nbody\r\n", "body\r\n", "k: v\r\n"),
])
def test_frontmatter(text: str, body: str, meta: str | None) -> None:
    assert split_frontmatter(text) == (body, meta)


@pytest.mark.parametrize(("text", "paths"), [
    ("@docs/style.md#naming\n", ["docs/style.md"]),
    ("@docs/my\\ notes.md\n", ["docs/my notes.md"]),
    ("@docs/a.md, and @docs/a\\_b.md\n", ["docs/a.md,", "docs/a"]),
    ("~~~\n@a.md\n~~~\n\ntext\n\n    @b.md\n\nspan `@c.md` here\n", []),
    ("**@a.md**\n\n[@b.md](https://example.com)\n\n## @c.md\n\n> @d.md\n",
     ["a.md", "b.md", "c.md", "d.md"]),
    ("- x <!-- @e.md --> y\n\npara <!-- @f.md --> text\n", ["e.md"]),
    ("- a\n\n- b\n- item <!-- @a.md --> tail\n\n> q <!-- @q.md --> r\n", ["a.md"]),
    ("<!--\n@hidden.md\n-->\n<!-- c --> @after.md\n", ["after.md"]),
    ("@~/notes.md @/abs.md @./rel.md @日本.md @#x.md @@y.md\n",
     ["~/notes.md", "/abs.md", "./rel.md"]),
])
def test_includes(text: str, paths: list[str]) -> None:
    assert [i.path for i in includes(text)] == paths


@pytest.mark.parametrize(("text", "paths"), [
    # a list item takes a less indented line after a comment, or a fence's line, too ...
    ("- <!-- c -->\n(x)\n\n    @a.md\n", ["a.md"]),
    ("- - <!-- c -->\n(x)\n\n      @a.md\n", ["a.md"]),
    ("- ```\n  x\n@a.md\n", []),
    # ... and ends at one after a blank line, or at one opening a heading, a tag or a comment
    ("- a\n\n  b\nc\n\n    @a.md\n", []),
    ("- a\n  - b\n#foo\n\n    @a.md\n", []),
    ("- a\n<b>x</b>\n\n    @a.md\n", []),
    ("- item\n(x)\n\n    @a.md\n", ["a.md"]),  # a paragraph's lazy line, as in CommonMark
    ("- <!-- c -->\nVisible <!-- @a.md --> text\n", ["a.md"]),  # item text: read raw too
    ("* Style: @c.md\n<span>@a.md</span>\ntext\\\n@b.md\n", ["c.md", "a.md", "b.md"]),
])
def test_list_items_end_where_claude_code_ends_them(text: str, paths: list[str]) -> None:
    assert [i.path for i in includes(text)] == paths


@pytest.mark.parametrize(("text", "globs"), [
    ("---\npaths:\n  - \"src/**\"\n---\nx\n", ["src"]),
    ("---\npaths: **/x.txt\n---\nx\n", ["**/x.txt"]),  # YAML fails: read again quoted
    ("---\r\npaths: **/x.txt\r\n---\r\nx\r\n", None),  # CRLF: the retry quotes nothing
    ("---\npaths: !src/**/*.test.ts\n---\nx\n", None),  # an unknown tag on nothing: null
    ("---\npaths: !src/**/*.test.ts, **/x.txt\n---\nx\n", ["!src/**/*.test.ts", "**/x.txt"]),
    ("\ufeff---\npaths: sub/**\n---\nx\n", ["sub"]),
    ("---\npaths: []\n---\nx\n", None),
])
def test_rule_globs(text: str, globs: list[str] | None) -> None:
    assert rule_globs(text) == globs


@pytest.mark.parametrize(("globs", "rel", "matched"), [
    (["src/**/*.ts", "!src/**/*.test.ts"], "src/a.test.ts", False),
    (["!src/**/*.test.ts", "src/**/*.ts"], "src/a.test.ts", True),
    (["src/", "!src/**/*.test.ts"], "src/app/a.test.ts", True),  # in a matched folder
])
def test_globs_match_as_the_ignore_package(globs: list[str], rel: str, matched: bool) -> None:
    assert globs_match(globs, "/p", f"/p/{rel}") is matched
