"""agents/claude/markdown.py: Claude Code 2.1.330's reading of a memory file's markdown (each
case here was sent by the real agent: tests/conformance/differential/regressions_claude.yaml
runs the same texts through it)."""

from __future__ import annotations

import pytest

from memlens.agents.claude.markdown import (
    comment_spans,
    includes,
    split_frontmatter,
    strip_comments,
)
from memlens.agents.claude.rules import rule_globs


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
    # 2.1.330 continues the quote (2.1.332 ends it: KNOWN_DIFFERENCES.md)
    ("> quoted\n  <!-- after a quote -->\n  \nx\n", "> quoted\n  <!-- after a quote -->\n  \nx\n"),
])
def test_comment_blocks(text: str, sent: str) -> None:
    assert strip_comments(text) == sent


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
