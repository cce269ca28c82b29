"""GitHub Copilot CLI 1.0.102's rules that are pure text (agents/copilot/), each as its real
requests showed it (the trees kept in tests/conformance/differential/regressions_copilot.yaml
run them against the real CLI)."""

from __future__ import annotations

import posixpath
from pathlib import Path

import pytest

from memlens.agents.copilot.imports import tokens
from memlens.agents.copilot.instructions import glob_matches, parse_frontmatter, split_globs
from memlens.agents.copilot.load import (
    CopilotLoad,
    _cell,
    _read,
    display_path,
    expand_imports,
    instruction_entry,
    sent_text,
    stays_inside,
)
from memlens.files.fsread import FileReader


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
    ("!!x.txt", "src/mod.py", False),  # two negations: x.txt itself
    ("!!x.txt", "src/x.txt", True),
    ("!!!x.txt", "x.txt", False),
    ("a.py", "src/core/a.py", True),  # a name at any depth
    ("core/a.py", "src/core/a.py", False),
])
def test_negated_globs_hold_where_the_rest_fails_on_the_path_or_the_name(
        glob: str, path: str, applies: bool) -> None:
    assert glob_matches(glob, path) is applies


# Seen in Copilot CLI 1.0.102's requests (regression-copilot-4101-0534 and
# regression-copilot-globstar-braces): how a glob reads, as its globset-style parser reads it.
@pytest.mark.parametrize(("glob", "path", "applies"), [
    # `**` before `,` or `}` in braces: everything below (seed 4101 #534)
    ("{mod.py,pkg/**}", "pkg/.github/instructions/_u.instructions.md", True),
    ("{pkg/**,a}", "pkg/sub/y.txt", True),
    ("{pkg/**}", "pkg/sub/y.txt", True),
    ("{pkg/**}/y.txt", "pkg/a/b/y.txt", True),
    ("{a,{pkg/**,b}}", "pkg/a/y.txt", True),
    ("pkg/**}", "pkg/a", False),  # a `}` outside braces: the glob does not parse
    # `**/` at the start of an alternative: any folders, none too
    ("{**/y.txt,a}", "y.txt", True),
    ("{a,**/y.txt}", "pkg/sub/y.txt", True),
    ("pkg/{**/y.txt,a}", "pkg/y.txt", True),
    ("pkg/{**/y.txt,a}", "pkg/a/b/y.txt", True),
    # `**` not a whole part of the path is `*`
    ("pkg/{**,a}", "pkg/sub/y.txt", False),
    ("pkg/{**,a}", "pkg/y.txt", True),
    ("a/**b", "a/x/b", False),
    ("**.py", "src/a.py", True),  # on the name
    # only "any folders": every path
    ("**/", "pkg/y.txt", True),
    ("**/**", "pkg/y.txt", True),
    ("a/**/**", "a/b/c/d", True),
    # braces: an empty alternative is kept; a `}` with no `{` does not parse
    ("y{,.md}", "y", True),
    ("y{}", "y", True),
    ("y}.txt", "y}.txt", False),
    ("src/{a,b", "src/a", False),
    # `\\` makes the next character itself; at the end it does not parse
    ("x\\.txt", "x.txt", True),
    ("q\\*.txt", "q*.txt", True),
    ("q\\?.txt", "q*.txt", False),
    ("x.txt\\", "x.txt", False),
])
def test_a_glob_reads_as_copilot_reads_it(glob: str, path: str, applies: bool) -> None:
    assert glob_matches(glob, path) is applies


def test_a_hostile_glob_is_read_in_bounds() -> None:
    assert glob_matches("{" * 50 + "a" + "}" * 50, "a")
    assert not glob_matches("{" * 51 + "a" + "}" * 51, "a")  # nested too deep: does not parse
    assert not glob_matches("{" * 10000 + "a" + "}" * 10000, "a")
    assert glob_matches("**/" * 500 + "a", "x/a")
    assert not glob_matches("\\" * 301, "x")  # a backslash at the end


def test_the_table_escapes_backslash_and_bar_in_every_cell() -> None:
    entry = instruction_entry("/r/.github/instructions/a|b.instructions.md",
                              "---\napplyTo: 'x\\\\y, a|b'\ndescription: 'd\\e'\n---\nA\n",
                              ".github/instructions/a|b.instructions.md")
    load = CopilotLoad(cwd="/r", root="/r", home_folder="/h", scoped=[entry])
    assert load.table().splitlines()[-1] == (
        "| x\\\\\\\\y, a\\|b | '.github/instructions/a\\|b.instructions.md' | d\\\\e |")


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
    ("d\\e|f", "d\\\\e\\|f"),  # `\\` doubled first, then `|` escaped
    ("", ""),
    (None, ""),
])
def test_a_description_cell_is_its_lines_joined_and_trimmed(description: str | None,
                                                            cell: str) -> None:
    assert _cell(description) == cell


def _paths(text: str) -> list[str]:
    return [t.path for t in tokens(text)]


def test_no_import_inside_a_fence_of_backticks_or_tildes() -> None:
    assert _paths("```\n@a.md\n```\n~~~\n@b.md\n~~~\n@c.md\n") == ["c.md"]
    # any indentation opens one; only the same three characters close it, whatever follows
    assert _paths("\t```\n@a.md\n~~~\n@b.md\n```x\n@c.md\n") == ["c.md"]
    assert _paths("````\n@a.md\n```\n@b.md\n") == ["b.md"]
    # a line indented four spaces is no code block; `x ```` opens nothing
    assert _paths("para\n\n    @a.md\nx ```\n@b.md\n") == ["a.md", "b.md"]


def test_no_import_in_a_code_span_on_its_line() -> None:
    assert _paths("`x` @a.md `y`\n``@b.md``\n`` x @c.md ` y``\n") == ["a.md"]
    assert _paths("` @a.md\n@b.md` z\n") == ["b.md"]  # unclosed: the rest of its line


@pytest.mark.parametrize(("text", "paths"), [
    ("(@a.md)", ["a.md"]),
    ("[@a.md], {@a.md} \"@a.md\" '@a.md' <@a.md> :@a.md é@a.md /@a.md", ["a.md"] * 8),
    ("me@a.md x-@a.md _@a.md .@a.md 1@a.md %@a.md +@a.md", []),
    ("@@a.md", ["@a.md", "a.md"]),
    ("@@./a.md @@sub/a.md @@~/a.md @@@a.md @@.a.md", ["@./a.md", "@sub/a.md", "@~/a.md",
                                                      "@@a.md", "@a.md", "a.md", "@.a.md",
                                                      ".a.md"]),
    ("@a.md).", ["a.md"]),
    ("@a.md)x @b.md,x", ["a.md)x", "b.md,x"]),
    ("@a.md>x @b.md'x @d.md\"x\n@c.md`x", ["a.md", "b.md", "d.md", "c.md"]),
    ("@a.md* @b.md|", ["a.md*", "b.md|"]),
    ("@a.md\u00a0x", ["a.md"]),
])
def test_an_import_token_starts_after_punctuation_and_ends_before_quotes(
        text: str, paths: list[str]) -> None:
    assert _paths(text) == paths


def test_a_file_imported_twice_in_one_document_is_the_skipped_marker(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("A @a.md @b.md\n")
    (tmp_path / "a.md").write_text("a @c.md\n")
    (tmp_path / "b.md").write_text("b @c.md\n")
    (tmp_path / "c.md").write_text("C\n")
    (tmp_path / "l.md").symlink_to("c.md")
    top = str(tmp_path / "CLAUDE.md")
    (tmp_path / "CLAUDE.md").write_text("@AGENTS.md @l.md\n")
    text = expand_imports(top, "@AGENTS.md @l.md\n", FileReader(), [top])
    c = str(tmp_path / "c.md")
    assert text.count(f'<imported_custom_instruction source="{c}">') == 1
    assert text.count(f'<imported_custom_instruction source="{c}" skipped="already-loaded" />') == 2


def test_a_text_sent_drops_invisible_characters_then_is_nfc() -> None:
    assert sent_text("a\u200bb") == "ab"
    assert sent_text("cafe\u0301 \u212b") == "caf\u00e9 \u00c5"
    assert sent_text("e\u200b\u0301") == "\u00e9"  # dropped first, then composed
    assert sent_text("\ufb01") == "\ufb01"  # NFC, not NFKC
    dropped = "\u00ad\u180e\u200b\u200c\u200e\u200f\u202a\u202e\u2060\u2064\u2066\u2069\ufeff"
    assert sent_text(f"x{dropped}\U000e0001\U000e0020\U000e007fy") == "xy"
    kept = "\u200d\ufe0f\u2065\u034f\U000e0000\U000e0100\u00a0"
    assert sent_text(kept) == kept


def test_the_description_is_read_as_written_and_the_body_sent_normalised() -> None:
    entry = instruction_entry("/r/.github/instructions/a.instructions.md",
                              '---\napplyTo: "**"\ndescription: "e\u0301\u200b"\n---\nb\u200b\n',
                              "a")
    assert entry.front is not None and entry.front.description == "e\u0301\u200b"
    assert entry.text == '---\napplyTo: "**"\ndescription: "\u00e9"\n---\nb\n'


def test_a_linked_file_is_named_by_its_target(tmp_path: Path) -> None:
    (tmp_path / "repo/shared").mkdir(parents=True)
    (tmp_path / "repo/shared/ts.md").write_text("x\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out/o.md").write_text("x\n")
    (tmp_path / "repo/a.md").symlink_to("shared/ts.md")
    (tmp_path / "repo/o.md").symlink_to("../out/o.md")
    root = str(tmp_path / "repo")
    assert display_path(str(tmp_path / "repo/a.md"), root) == "shared/ts.md"
    assert display_path(str(tmp_path / "repo/o.md"), root) == "../out/o.md"
    assert display_path(str(tmp_path / "repo/o.md"), None) == str(tmp_path / "out/o.md")
    assert stays_inside(str(tmp_path / "repo/a.md"), root)
    assert not stays_inside(str(tmp_path / "repo/o.md"), root)


@pytest.mark.parametrize(("line", "globs", "excluded"), [
    ("applyTo: !*", [], False),  # a tag with nothing after it: empty, the file applies always
    ("applyTo: !**/*.md", [], False),
    ("applyTo: !foo x.txt", ["x.txt"], False),
    ("applyTo: !foo [x.txt]", ["x.txt"], False),
    ("applyTo: !!binary eA==", ["eA=="], False),
    ("applyTo: !e!x x.txt", ["!e!x x.txt"], False),  # an undefined handle: the line is read
    ('applyTo: "x"\nexcludeAgent: !foo coding-agent', ["x"], True),
])
def test_a_yaml_tag_is_read_as_if_it_were_not_there(line: str, globs: list[str],
                                                    excluded: bool) -> None:
    front = parse_frontmatter(f"---\n{line}\n---\nbody\n")
    assert (front.globs, front.excluded) == (globs, excluded)


def test_other_yaml_readers_still_refuse_unknown_tags() -> None:
    from ruamel.yaml import YAML
    from ruamel.yaml.constructor import ConstructorError

    parse_frontmatter("---\napplyTo: !x y\n---\n")
    with pytest.raises(ConstructorError):
        YAML(typ="safe", pure=True).load("a: !x b")


def test_imports_are_found_before_the_text_is_normalised(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("A\n")
    (tmp_path / "b.md").write_text("B\n\u200b")
    (tmp_path / "AGENTS.md").write_text("@a.md\u200b and @b.md\n")
    text = _read(FileReader(), str(tmp_path / "AGENTS.md"))
    assert text == (f'@a.md and @b.md\n\n<imported_custom_instruction source="{tmp_path}/b.md">'
                    '\nB\n\n</imported_custom_instruction>\n')


def test_the_on_read_listing_leaves_out_a_link_leading_out_of_the_repository(
        tmp_path: Path) -> None:
    from memlens.agents.base import WorkspaceCheck
    from memlens.agents.copilot.agent import CopilotAgent
    from memlens.model import MemorySettings

    repo = tmp_path / "repo"
    (repo / ".git/objects").mkdir(parents=True)
    (repo / ".git/refs").mkdir()
    (repo / ".git/HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "out.md").write_text("outside\n")
    (repo / "docs").mkdir()
    (repo / "docs/ai.md").write_text("inside\n")
    (repo / "sub").mkdir()
    (repo / "sub/AGENTS.md").symlink_to("../../out.md")
    (repo / "sub/CLAUDE.md").symlink_to("../docs/ai.md")
    agent, settings = CopilotAgent(), MemorySettings(home=str(tmp_path / "home"))
    memory = agent.load(str(repo), settings)
    rows = agent.on_read_files(memory, settings, FileReader(), WorkspaceCheck(found=[]))
    assert [r.path for r in rows] == [str(repo / "sub/CLAUDE.md")]


def test_an_import_of_a_file_that_is_not_utf8_stays_as_written(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_bytes(b"a\xffb\n")
    (tmp_path / "AGENTS.md").write_text("@bad.md\n")
    assert _read(FileReader(), str(tmp_path / "AGENTS.md")) == "@bad.md\n"


@pytest.mark.parametrize(("value", "globs"), [
    ("**/*, a\\,b", ["**/*", "a\\,b"]),  # seed 4201 #21: `\\,` splits nothing
    ("*.md, src\\, **/*", ["*.md", "src\\, **/*"]),  # seed 4201 #15
    ("a\\{,x.txt", ["a\\{", "x.txt"]),  # an escaped `{` opens no braces
    ("q.txt, {a\\},x.txt}", ["q.txt", "{a\\},x.txt}"]),  # an escaped `}` closes none
    ("a\\\\,x.txt", ["a\\\\", "x.txt"]),  # `\\\\` is one pair: the comma after it splits
    ("q.txt, [\\],x.txt", ["q.txt", "[\\]", "x.txt"]),  # in a class `\\` is itself
    ("x.txt\\", ["x.txt\\"]),
])
def test_a_backslash_keeps_the_next_character_in_its_glob(value: str, globs: list[str]) -> None:
    assert split_globs(value) == globs
    assert parse_frontmatter(f"---\napplyTo: '{value}'\n---\n").raw_apply_to == ", ".join(globs)


def test_a_glob_line_that_is_no_yaml_keeps_an_escaped_comma() -> None:
    front = parse_frontmatter('---\napplyTo: "*.md, src\\, **/*"\n---\nU\n')
    assert front.yaml_error is not None  # `\\,` is no escape in double quotes
    assert front.globs == ["*.md", "src\\, **/*"]
    assert not any(glob_matches(g, "x.txt") for g in front.globs)


@pytest.mark.parametrize(("lines", "globs", "description"), [
    ("applyTo: {a,{pkg/**,b}}", [], None),  # a flow mapping with a mapping key: no globs
    ('applyTo: "x"\ndescription: B\n{a: 1}: 2\n[{a: 1}]: 3', ["x"], "B"),
    ('applyTo: "x"\ndescription: D\n{a: 1}: x\n{a: 2}: y', ["x"], "D"),
    # equal mapping keys, in any order, are a duplicate: the line is read, not the description
    ('applyTo: "x"\ndescription: C\n{a: 1, b: 2}: x\n{b: 2, a: 1}: y', ["x"], None),
    ('applyTo: "x"\ndescription: E\n{a: [1]}: 2\n{a: [1]}: 3', ["x"], None),
])
def test_a_mapping_may_be_a_key(lines: str, globs: list[str], description: str | None) -> None:
    front = parse_frontmatter(f"---\n{lines}\n---\nbody\n")
    assert (front.globs, front.description) == (globs, description)


@pytest.mark.parametrize(("lines", "globs", "excluded"), [
    ('applyTo: [5, "**/y.txt"]', ["**/y.txt"], False),
    ("applyTo: [{a: b}]", [], False),
    ('applyTo: [y.txt, ["*.md"], true, null, 1.5]', ["y.txt"], False),
    ('applyTo: "x"\nexcludeAgent: [5, coding-agent]', ["x"], True),
    ('applyTo: "x"\nexcludeAgent: [[coding-agent]]', ["x"], False),
])
def test_only_the_strings_of_a_list_count(lines: str, globs: list[str], excluded: bool) -> None:
    front = parse_frontmatter(f"---\n{lines}\n---\nbody\n")
    assert (front.globs, front.excluded) == (globs, excluded)


def test_a_key_repeating_an_alias_is_bounded() -> None:
    levels = ["&a [" + ", ".join(["x"] * 10) + "]"]
    levels += [f"&{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]" for i in range(8)]
    front = parse_frontmatter("---\n? [" + ", ".join(levels) + "]\n: 1\napplyTo: x\n---\n")
    assert front.yaml_error is not None  # 10^9 items to compare: read as no YAML
    assert front.globs == ["x"]
    recursive = parse_frontmatter("---\n? &a [*a]\n: 1\n? &b {k: *b}\n: 2\napplyTo: x\n---\n")
    assert recursive.globs == ["x"]
    # the bound is the whole block's: many keys, each of some 960 items
    def key(i: int) -> str:
        return (f"? [{i}, &a{i} [" + ", ".join(["x"] * 30) + "], ["
                + ", ".join([f"*a{i}"] * 30) + "]]\n: 1\n")

    many = "".join(key(i) for i in range(20))
    front = parse_frontmatter(f"---\n{many}description: D\napplyTo: x\n---\n")
    assert (front.yaml_error is not None, front.description) == (True, None)
    few = "".join(key(i) for i in range(5))
    assert parse_frontmatter(f"---\n{few}description: D\n---\n").description == "D"


@pytest.mark.parametrize(("lines", "globs", "always"), [
    ('applyTo: ["q.txt, y.txt"]', ["q.txt, y.txt"], False),  # one glob: not split
    ('applyTo: [" y.txt "]', [" y.txt "], False),  # nor trimmed
    ('applyTo: ["", "*.md"]', ["", "*.md"], False),
    ('applyTo: [""]', [""], False),  # a glob that matches nothing: not always
    ("applyTo: []", [], True),
    ('applyTo: " , "', [], True),  # a string is split, its blanks dropped
    ('applyTo: ["**", 5]', ["**"], True),
])
def test_a_list_item_is_a_glob_as_written(lines: str, globs: list[str], always: bool) -> None:
    front = parse_frontmatter(f"---\n{lines}\n---\nbody\n")
    assert (front.globs, front.always) == (globs, always)
    assert front.raw_apply_to == ", ".join(globs)
    assert not any(glob_matches(g, "pkg/y.txt") for g in globs if g != "**")


@pytest.mark.parametrize(("value", "excluded"), [
    ('"coding-agent"', True),
    ('["code-review", "coding-agent"]', True),
    ('[" coding-agent "]', False),  # not trimmed
    ('" coding-agent "', False),
    ('"coding-agent, code-review"', False),  # not split
    ('"Coding-Agent"', False),
])
def test_exclude_agent_names_the_cli_exactly(value: str, excluded: bool) -> None:
    assert parse_frontmatter(f"---\nexcludeAgent: {value}\n---\n").excluded is excluded


@pytest.mark.parametrize(("lines", "globs", "description"), [
    # `<<` merges nothing: no applyTo here, so the file applies always
    ('base: &b {applyTo: "**/y.txt"}\n<<: *b\ndescription: A', [], "A"),
    ('applyTo: "x"\n<<: {b: 1}\n<<: {c: 1}\ndescription: A', ["x"], None),  # `<<` twice
    ('applyTo: "x"\ndescription: B\ntrue: x\n1: y', ["x"], "B"),
    ('applyTo: "x"\ndescription: C\n1.0: x\n1: y', ["x"], "C"),
    ('applyTo: "x"\ndescription: C\n[1.0]: x\n[1]: y', ["x"], "C"),
    ('applyTo: "x"\ndescription: D\n0x1: x\n1: y', ["x"], None),  # one integer twice
    ('applyTo: "x"\ndescription: E\n~: x\nnull: y', ["x"], None),
    ('applyTo: "x"\ndescription: G\n.nan: x\n.NaN: y', ["x"], None),
])
def test_keys_are_compared_with_their_types(lines: str, globs: list[str],
                                            description: str | None) -> None:
    front = parse_frontmatter(f"---\n{lines}\n---\nbody\n")
    assert (front.globs, front.description) == (globs, description)


@pytest.mark.parametrize(("value", "text"), [
    ("1_000", True), ("1_0.5", True), ("0x_1", True), ("0b_1", True),  # `_`: text
    ("012", True), ("-012", True), ("00", True),  # a leading zero: text
    ("2001-12-14", True), ("2001-12-14t21:59:43.10-05:00", True),  # no dates
    ("1:20", True), ("inf", True), ("-.NaN", True), ("0X1", True), ("yes", True),
    ("0", False), ("-0", False), ("-0x1", False), ("0o17", False), ("01.5", False),
    (".5e3", False), ("1e+3", False), ("+1.", False), ("+.inf", False), ("True", False),
    ("Null", False), ('".5e3"', True),
])
def test_a_plain_scalar_is_text_or_not_as_the_cli_reads_it(value: str, text: bool) -> None:
    front = parse_frontmatter(f"---\napplyTo: {value}\ndescription: {value}\n---\n")
    assert (front.description is not None, bool(front.globs)) == (text, text)


def test_imports_stay_in_their_root(tmp_path: Path) -> None:
    from memlens.agents.copilot.load import load_copilot

    repo, home = tmp_path / "repo", tmp_path / "home"
    (repo / ".git").mkdir(parents=True)
    (repo / ".github").mkdir()
    (repo / "sub").mkdir()
    (home / ".copilot").mkdir(parents=True)
    (tmp_path / "out.md").write_text("OUT\n")
    (repo / "sub" / "in.md").write_text("IN @../../out.md\n")
    (repo / "link.md").symlink_to(tmp_path / "out.md")
    (repo / "AGENTS.md").write_text("A @../out.md\nB @link.md\nC @sub/in.md\n")
    (repo / ".github" / "copilot-instructions.md").write_text("G @../sub/in.md\n")
    (home / ".copilot" / "n.md").write_text("N\n")
    (home / ".copilot" / "copilot-instructions.md").write_text("H @n.md @../../out.md\n")
    texts = {posixpath.basename(posixpath.dirname(f.path)) + "/" + posixpath.basename(f.path):
             f.text for f in load_copilot(str(repo), str(home)).blocks}
    assert "OUT" not in "".join(texts.values())  # outside its root: stays as written
    assert texts["repo/AGENTS.md"].startswith("A @../out.md\nB @link.md\nC @sub/in.md\n\n<imp")
    assert "IN @../../out.md" in texts[".github/copilot-instructions.md"]
    assert texts[".copilot/copilot-instructions.md"].startswith(
        f'H @n.md\n\n<imported_custom_instruction source="{home}/.copilot/n.md">\nN\n')


def test_a_link_to_a_file_sent_at_start_is_not_sent_again(tmp_path: Path) -> None:
    from memlens.agents.copilot.load import load_copilot

    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("NOTES\n")
    (tmp_path / "AGENTS.md").write_text("    @./docs/notes.md\n")  # seed 4201 #773
    (tmp_path / "GEMINI.md").symlink_to("AGENTS.md")  # expands nothing: another text
    load = load_copilot(str(tmp_path), str(tmp_path / "home"))
    assert [posixpath.basename(b.path) for b in load.blocks] == ["AGENTS.md"]
    assert "<imported_custom_instruction" in load.blocks[0].text
    assert load.duplicates == [str(tmp_path / "GEMINI.md")]
