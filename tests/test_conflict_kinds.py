"""The decision kinds (server/memlens/conflicts, docs/reference.md "Rules that disagree"):
each kind reads exactly the phrasings it documents, and nothing from its near misses — nor
does any other kind; the prose filter leaves examples out; commands are compared only with
commands of their own sort."""

from __future__ import annotations

import pytest

from memlens.conflicts.base import DecisionKind, languages
from memlens.conflicts.commands import identity
from memlens.conflicts.extract import MAX_CHARS, decisions
from memlens.conflicts.kinds import KINDS, kind_by_id
from memlens.conflicts.prose import prose_lines

PHRASINGS = [pytest.param(k, line, subject, value, id=f"{k.id}: {line}")
             for k in KINDS for line, subject, value in k.phrasings]
NEAR_MISSES = [pytest.param(k, line, id=f"{k.id}: {line}") for k in KINDS for line in k.near_misses]


@pytest.mark.parametrize(("kind", "line", "subject", "value"), PHRASINGS)
def test_each_kind_reads_its_documented_phrasings(kind: DecisionKind, line: str, subject: str,
                                                  value: str) -> None:
    found = kind.find(line)
    assert [(f.subject, f.value) for f in found] == [(subject, value)]
    assert 0 <= found[0].start < found[0].end <= len(line)


@pytest.mark.parametrize(("kind", "line"), NEAR_MISSES)
def test_no_kind_reads_a_near_miss(kind: DecisionKind, line: str) -> None:
    assert [(k.id, k.find(line)) for k in KINDS if k.find(line)] == []


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.id)
def test_each_kind_documents_phrasings_and_near_misses(kind: DecisionKind) -> None:
    assert len(kind.phrasings) >= 3 and len(kind.near_misses) >= 3
    # The module's docstring is the rule's documentation.
    assert __import__(type(kind).__module__, fromlist=["x"]).__doc__


def test_a_phrasing_read_by_one_kind_only() -> None:
    """Each documented phrasing is one decision, read by its own kind alone."""
    for kind in KINDS:
        for line, _, _ in kind.phrasings:
            others = [k.id for k in KINDS if k is not kind and k.find(line)]
            assert others == [], (kind.id, line, others)


@pytest.mark.parametrize("text", [
    "```sh\nUse npm.\n```\n",  # a fenced code block
    "~~~\nnpm install\nUse yarn.\n~~~\n",
    "> Use npm.\n",  # a quotation
    "| Tool | Use npm. |\n",  # a table
    "## Use npm.\n",  # a heading
    "<!-- Use npm. -->\n",  # a comment no reader sees
    "<!--\nUse npm.\n-->\n",
    "---\ndescription: Use npm.\n---\n",  # frontmatter
    "Someone wrote \"Use npm.\" in the old docs.\n",  # a quoted example
    "    Use npm.\n",  # an indented code block
])
def test_examples_are_not_rules(text: str) -> None:
    assert decisions(text) == []


def test_a_rule_after_a_code_block_is_read_on_its_own_line() -> None:
    text = "# Setup\n\n```\nUse yarn.\n```\n\n- Use pnpm.\n"
    [d] = decisions(text)
    assert (d.kind, d.value, d.line, d.col) == ("package-manager", "pnpm", 7, 1)
    assert d.quote == "- Use pnpm."


def test_an_unclosed_fence_hides_the_rest() -> None:
    assert decisions("```\nUse npm.\n") == []


def test_apostrophes_do_not_open_quotations() -> None:
    """"Don't ... maintainers' ..." is no quotation: blanking it would drop the negation."""
    [line] = prose_lines("Don't push; the maintainers' bot does.\n")
    assert line.text.startswith("Don't push")


def test_nested_list_items_are_prose() -> None:
    [d] = decisions("- Tools:\n    - Use pnpm.\n")
    assert d.value == "pnpm" and d.line == 2


@pytest.mark.parametrize(("command", "expected"), [
    ("pnpm test", ("js-script", "pnpm test")),
    ("npm run test -- --watch", ("js-script", "npm test")),
    ("uv run pytest -q tests/", ("python", "pytest")),
    ("python -m pytest", ("python", "pytest")),
    ("CI=1 npx vitest run", ("js", "vitest")),
    ("make test", ("make", "make test")),
    ("cargo test --all", ("rust", "cargo test")),
    ("npm install", None),  # not a script
    ("pytest && npm test", None),  # two commands
    ("./scripts/test.sh", None),  # unknown: not compared
    ("pnpm 'unterminated", None),
])
def test_command_identity(command: str, expected: tuple[str, str] | None) -> None:
    assert identity(command) == expected


def test_commands_of_different_sorts_are_not_compared() -> None:
    """`npm test` (a script) and `jest` (the tool it may run) get different subjects."""
    test = kind_by_id("test-command")
    [script] = test.find("Run tests with `npm test`.")
    [tool] = test.find("Run tests with `jest`.")
    [python] = test.find("Run tests with `pytest`.")
    assert len({script.subject, tool.subject, python.subject}) == 3


def test_values_that_agree() -> None:
    pm = kind_by_id("package-manager")
    assert pm.disagree("pnpm", "npm") and pm.disagree("npm", "!npm")
    assert not pm.disagree("pnpm", "!npm") and not pm.disagree("!npm", "!yarn")
    version = kind_by_id("runtime-version")
    assert not version.disagree("3", "3.12") and version.disagree("3.11", "3.12")
    assert pm.describe("!npm") == "never npm"


def test_go_the_verb_is_no_language() -> None:
    assert languages("go to the docs") == set()
    assert languages("Go code uses tabs") == {"Go"}


def test_every_decision_has_its_line_and_columns() -> None:
    text = "# Rules\n\nAlways use pnpm.\nNever push.\nIndent with 2 spaces.\n"
    found = [(d.kind, d.subject, d.value, d.line, d.col, d.end_col) for d in decisions(text)]
    assert found == [
        ("package-manager", "package manager (JavaScript)", "pnpm", 3, 1, 16),
        ("do-or-never", "push", "never", 4, 1, 11),
        ("indentation", "indentation", "2 spaces", 5, 1, 21),
    ]


def test_hostile_text_is_bounded() -> None:
    """A huge line or file costs little: long lines are skipped, files read to a limit."""
    assert decisions("Use pnpm " + "x" * 100_000 + "\n") == []
    assert len(decisions("a" * 50_000 + "\nUse npm.\n")) == 1
    # Past the characters read of one file (MAX_CHARS), nothing more is read.
    assert decisions("x\n" * (MAX_CHARS // 2) + "Use npm.\n") == []


def test_the_line_filter_reads_the_case_folded_line_as_ignoring_case_would() -> None:
    """The filter before the kinds matches the case-folded line with a pattern that ignores
    no case: it lets through exactly the lines that pattern with IGNORECASE would, in
    capitals too and with letters that fold to ASCII ones (U+017F long s, U+212A Kelvin)."""
    import re

    from memlens.conflicts.extract import _WORTH_READING

    ignoring_case = re.compile(_WORTH_READING.pattern, re.IGNORECASE)
    lines = [line for k in KINDS for line in (*(p[0] for p in k.phrasings), *k.near_misses)]
    lines += [line.upper() for line in lines] + ["Indent with 2 ſpaces", "\u212aeep it", "Zzz"]
    assert [bool(_WORTH_READING.search(line.casefold())) for line in lines] == \
        [bool(ignoring_case.search(line)) for line in lines]
    assert all(_WORTH_READING.search(p[0].casefold()) for k in KINDS for p in k.phrasings)


def test_a_texts_decisions_are_read_once_and_each_caller_gets_its_own_list(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.conflicts import extract

    reads: list[str] = []
    real = extract._read_decisions
    monkeypatch.setattr(extract, "_read_decisions",
                        lambda text: reads.append(text) or real(text))
    text = "- Use pnpm.\n- Indent with 2 spaces.\n#kept-once\n"
    first = decisions(text)
    first.clear()
    again = decisions(text)
    assert [d.value for d in again] == ["pnpm", "2 spaces"]
    assert reads == [text]
    changed = decisions(text.replace("pnpm", "yarn"))
    assert [d.value for d in changed] == ["yarn", "2 spaces"] and len(reads) == 2


def test_the_decisions_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.conflicts import extract

    monkeypatch.setattr(extract, "_KEPT_TEXTS", 3)
    for i in range(10):
        decisions(f"- Use pnpm. #{i} bounded\n")
    assert len(extract._kept) <= 3
