"""Claude Code's skills listing on hostile SKILL.md text (agents/claude/skill_text.py): terminal
escapes, frontmatter that is not YAML, a byte-order mark, and a budget counted in terminal
columns. Each expected line is the one Claude Code 2.1.330 sent for the same tree
(tests/conformance/skills/cases.yaml: claude-skills-escapes, -broken-yaml, -bom,
-budget-wide, -budget-narrow, run against the real agent by tests/conformance/test_skills.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memlens.agents.claude.skill_text import columns, js_trim, read_frontmatter, strip_escapes
from memlens.agents.claude.skills import load_skills

ESC = "\x1b"


def _lines(root: Path, skills: dict[str, str]) -> dict[str, str]:
    for folder, text in skills.items():
        path = root / "proj" / ".claude" / "skills" / folder / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="")
    (root / "home").mkdir(exist_ok=True)
    found = load_skills(str(root / "home"), str(root / "proj"), "2.1.330")
    return {s.folder: s.line for s in found.skills if s.offered}


def test_escapes_are_removed_not_spaced(tmp_path: Path) -> None:
    lines = _lines(tmp_path, {
        "q": '---\ndescription: "a\\e[31mb"\n---\nx\n',
        "raw": f"---\ndescription: a{ESC}[1;32mgreen{ESC}[0m end\n---\nx\n",
        "osc": '---\ndescription: "t\\e]0;title\\ax and \\e]8;;http://x\\e\\\\link\\e]8;;\\e\\\\ y"'
               "\n---\nx\n",
        "c1": '---\ndescription: "c\\x9b31md e\\e[K f\\e(B g\\eM h"\n---\nx\n',
        "body": f"---\nname: body\n---\n{ESC}[31mred{ESC}[0m first line\n",
        "when": '---\ndescription: plain\nwhen_to_use: "w\\e[4mu\\e[24m"\n---\nx\n',
        "lone": '---\ndescription: "lone \\e at end \\e"\n---\nx\n',
        "open": '---\ndescription: "csi \\e[31 open"\n---\nx\n',
        "openosc": '---\ndescription: "osc \\e]0;never closed"\n---\nx\n',
        "dcs": '---\ndescription: "dcs \\eP1;2qdata\\e\\\\ after \\x9d8;;u\\x9c c1osc"\n---\nx\n',
        "other": '---\ndescription: "e \\e\\xe9 f \\e\\e[m g \\e[?25l h \\e[1;2:3 m i"\n---\nx\n',
    })
    assert lines == {
        "q": "- q: ab", "raw": "- raw: agreen end", "osc": "- osc: tx and link y",
        "c1": "- c1: cd e f g h", "body": "- body: red first line",
        "when": "- when: plain - wu", "lone": "- lone: lone t end ", "open": "- open: csi pen",
        "openosc": "- openosc: osc ", "dcs": "- dcs: dcs  after  c1osc",
        "other": "- other: e \u00e9 f  g  h  i"}


def test_frontmatter_that_is_not_yaml(tmp_path: Path) -> None:
    lines = _lines(tmp_path, {
        "y-bracket": "---\ndescription: [a: b\n---\nbody bracket\n",
        "y-brace": "---\ndescription: {x: y\n---\nbody brace\n",
        "y-list": "---\ndescription: [a, b]\n---\nbody list\n",
        "y-dashes": "---\ndescription: a---b\nname: dashes\n---\nbody dashes\n",
        "y-quote": '---\ndescription: "unterminated\n---\nbody quote\n',
    })
    assert lines == {"y-bracket": "- y-bracket: [a: b", "y-brace": "- y-brace: {x: y",
                     "y-list": "- y-list: body list", "y-dashes": "- y-dashes: a",
                     "y-quote": "- y-quote: body quote"}


def test_byte_order_mark(tmp_path: Path) -> None:
    lines = _lines(tmp_path, {
        "bom-desc": "\ufeff---\ndescription: with a bom\n---\nD\n",
        "bom-nodesc": "\ufeff---\nname: bom-nodesc\n---\nD\n",
        "bom-crlf": "\ufeff---\r\ndescription: crlf bom\r\n---\r\nD\r\n",
        "bom-body": "\ufeffJust a body\n",
        "bom-twice": "\ufeff\ufeff---\ndescription: two boms\n---\nD\n",
    })
    assert lines == {"bom-desc": "- bom-desc: with a bom", "bom-nodesc": "- bom-nodesc: D",
                     "bom-crlf": "- bom-crlf: crlf bom", "bom-body": "- bom-body: Just a body",
                     "bom-twice": "- bom-twice: ---"}


def _budget_tree(unit: str, times: int, rest: str) -> dict[str, str]:
    return {f"s{i:02d}": f"---\ndescription: {unit * times}{rest}\n---\nx\n" for i in range(17)}


def test_budget_counts_columns_wide(tmp_path: Path) -> None:
    """By length these fit; by width (150 CJK characters each) the last does not."""
    found = load_skills(str(tmp_path / "home"), str(tmp_path / "proj"), "2.1.330")
    assert found.listing == ""
    lines = _lines(tmp_path, _budget_tree("word ", 230, "\u8a9e" * 150))
    skills = load_skills(str(tmp_path / "home"), str(tmp_path / "proj"), "2.1.330").skills
    assert [s.name_only for s in skills] == [False] * 16 + [True]
    assert len(lines) == 17


def test_budget_counts_columns_narrow(tmp_path: Path) -> None:
    """By length the last would be cut; by width (combining accents count none) all fit."""
    _lines(tmp_path, _budget_tree("wor\u0301d ", 100, "word " * 170 + "end"))
    skills = load_skills(str(tmp_path / "home"), str(tmp_path / "proj"), "2.1.330").skills
    assert not any(s.name_only for s in skills)


def _tree_773(review: str = "For\u200bmat the code.\U0001F468\u200d\U0001F469") -> dict[str, str]:
    """Differential seed 5501, tree 773 (kept as regression-claude-5501-0773): 15 project
    skills of 1,592 columns each and a short one after them."""
    unit = "word " * 209 + "\u8a9e" * 150 + "wo\u0301rd" * 60
    tree = {f"n{i:02d}": f"---\ndescription: {unit}\n---\nx\n" for i in range(15)}
    tree["review"] = f"---\ndescription: {review}\n---\n"
    return tree


def test_budget_counts_a_column_per_line_break(tmp_path: Path) -> None:
    """Claude Code 2.1.330 listed the 15 long skills and cut `review` to its name: with the
    line breaks between its 30 entries the listing is past the budget (its debug log: 30
    skills, 30,157 columns), and only 1 column is left for `review`'s description."""
    _lines(tmp_path, _tree_773())
    skills = load_skills(str(tmp_path / "home"), str(tmp_path / "proj"), "2.1.330").skills
    assert {s.shown: s.name_only for s in skills} == {
        **{f"n{i:02d}": False for i in range(15)}, "review": True}


def test_budget_a_later_shorter_skill_may_still_fit(tmp_path: Path) -> None:
    """A description that does not fit goes by name only, and the greedy goes on: a later one
    that fits what is left keeps its description."""
    tree = _tree_773()
    tree["n14"] = tree["n14"].replace("word ", "words ", 23)  # 23 columns: past what is left
    tree["review"] = "---\ndescription: ok\n---\n"
    _lines(tmp_path, tree)
    skills = load_skills(str(tmp_path / "home"), str(tmp_path / "proj"), "2.1.330").skills
    shown = {s.shown: s.name_only for s in skills}
    assert shown["n14"] is True and shown["n13"] is False
    assert shown["review"] is False


@pytest.mark.parametrize(("text", "width"), [
    ("abc", 3), ("\u8a9e\u8a9e", 4), ("e\u0301", 1), (f"{ESC}[31mred{ESC}[0m", 3),
    ("\U0001F468\u200d\U0001F469\u200d\U0001F467", 2), ("\U0001F1EB\U0001F1F7", 2),
    ("\U0001F44D\U0001F3FD", 2), ("\u2014", 1)])
def test_columns(text: str, width: int) -> None:
    assert columns(text) == width


def test_helpers_on_hostile_text() -> None:
    assert js_trim("\ufeff x \x1c") == "x \x1c"  # a BOM is white space to JavaScript, FS not
    assert strip_escapes(ESC * 10_000) == ""
    assert strip_escapes(f"{ESC}]" + "x" * 100_000) == ""
    data, body, again = read_frontmatter("---\n" + "[" * 5000 + "\n---\nb\n")
    assert (data, body, again) == ({}, "b\n", True)


def test_yaml_core_schema_scalars(tmp_path: Path) -> None:
    """What Claude Code 2.1.330 listed for each (tests/conformance/skills/cases.yaml,
    claude-skills-scalars)."""
    values = {"yes": "yes", "on": "on", "No": "No", "1e3": "1000", "0x10": "16", "010": "10",
              "0o17": "15", "1_000": "1_000", "2001-12-14": "2001-12-14", ".inf": "Infinity",
              "1.50": "1.5", "+12": "12", "TRUE": "true", "!custom x": "x",
              "!!binary aGk=": "aGk=", "12:30": "12:30", "-.5": "-0.5", "0b101": "0b101",
              "1.0e+25": "1e+25", "For\u2028mat": "For mat", "a\u0085b": "a b"}
    lines = _lines(tmp_path, {f"v{i:02d}": f"---\ndescription: {v}\n---\nbody\n"
                              for i, v in enumerate(values)})
    assert lines == {f"v{i:02d}": f"- v{i:02d}: {want}" for i, want in enumerate(values.values())}
    named = _lines(tmp_path, {"n": "---\ndescription: d\nwhen_to_use: 1e3\nname: 0x10\n---\n"})
    assert named["n"] == "- n (16): d - 1000"


def test_joiners_kept_only_inside_an_rgi_emoji(tmp_path: Path) -> None:
    """Claude Code 2.1.330 (claude-skills-emoji; differential seed 3207, tree 134)."""
    pair, family = "\U0001F468\u200d\U0001F469", "\U0001F468\u200d\U0001F469\u200d\U0001F467"
    lines = _lines(tmp_path, {
        "e1": f"---\ndescription: pair {pair} family {family} end\n---\n",
        "e2": "---\ndescription: heart \u2764\ufe0f check \u2713\ufe0f\n---\n",
    })
    assert lines["e1"] == f"- e1: pair \U0001F468 \U0001F469 family {family} end"
    assert lines["e2"] == "- e2: heart \u2764\ufe0f check \u2713 "
