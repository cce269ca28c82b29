"""OpenCode 1.18's rules (agents/opencode), each on a small tree: what it sends at start and
after a read, as its requests to a recording model showed (tests/conformance/test_opencode.py
runs the real agent on the same rules)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memlens.agents import agent_by_id
from memlens.agents.opencode.globs import glob_files, glob_regex
from memlens.agents.opencode.load import OpenCodeSession, load_opencode
from memlens.files.fsread import FileReader
from memlens.files.globs import full_match
from memlens.model import MemorySettings
from memlens.verify.scrub import scrub_tree


def make(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.mkdir(exist_ok=True)
        else:
            path.write_text(text, encoding="utf-8")


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".git").mkdir(parents=True)
    home.mkdir()
    return ws, home


@pytest.fixture(autouse=True)
def _no_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENCODE_DISABLE_CLAUDE_CODE", "OPENCODE_DISABLE_CLAUDE_CODE_PROMPT",
                 "OPENCODE_DISABLE_PROJECT_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def sent(cwd: Path, home: Path) -> str:
    return load_opencode(str(cwd), str(home)).render()


def test_global_own_file_before_claude_code_and_empty_one_still_wins(tree: tuple[Path, Path]
                                                                      ) -> None:
    ws, home = tree
    make(home, {".claude/CLAUDE.md": "HOME claude\n"})
    assert sent(ws, home) == f"Instructions from: {home}/.claude/CLAUDE.md\nHOME claude\n"
    make(home, {".config/opencode/AGENTS.md": ""})
    assert sent(ws, home) == ""  # it exists, so it wins; empty, so nothing is sent


def test_first_name_in_the_chain_wins_nearest_first(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    make(ws, {"CLAUDE.md": "C root\n", "a/CLAUDE.md": "C a\n", "a/b/AGENTS.md": "A b\n",
              "a/b/CONTEXT.md": "X b\n"})
    assert sent(ws / "a" / "b", home) == f"Instructions from: {ws}/a/b/AGENTS.md\nA b\n"
    make(ws, {"AGENTS.md": "A root\n"})
    assert sent(ws / "a" / "b", home) == (f"Instructions from: {ws}/a/b/AGENTS.md\nA b\n\n"
                                          f"Instructions from: {ws}/AGENTS.md\nA root\n")
    assert sent(ws / "a", home) == f"Instructions from: {ws}/AGENTS.md\nA root\n"


def test_bom_dropped_crlf_kept_blank_sent(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    make(ws, {"CLAUDE.md": "\ufeffbom\r\n", "sub/CLAUDE.md": "   \n"})
    assert sent(ws / "sub", home) == (f"Instructions from: {ws}/sub/CLAUDE.md\n   \n\n"
                                      f"Instructions from: {ws}/CLAUDE.md\nbom\r\n")


def test_disable_claude_code(tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    make(home, {".claude/CLAUDE.md": "HOME claude\n"})
    make(ws, {"CLAUDE.md": "C\n", "CONTEXT.md": "X\n"})
    monkeypatch.setenv("OPENCODE_DISABLE_CLAUDE_CODE", "1")
    assert sent(ws, home) == f"Instructions from: {ws}/CONTEXT.md\nX\n"


def test_outside_a_repository_the_chain_climbs_to_the_root(tmp_path: Path) -> None:
    make(tmp_path, {"AGENTS.md": "above\n", "ws/a/AGENTS.md": "A a\n"})
    text = load_opencode(str(tmp_path / "ws" / "a"), str(tmp_path / "nohome")).render()
    assert text.startswith(f"Instructions from: {tmp_path}/ws/a/AGENTS.md\nA a\n\n")
    assert f"Instructions from: {tmp_path}/AGENTS.md\nabove\n" in text


def test_instructions_merged_global_then_project_globbed_up(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    make(home, {".config/opencode/opencode.jsonc": '// mine\n{"instructions": ["g.md",],}\n'})
    make(ws, {"opencode.json": json.dumps({"instructions": ["r1.md", "g.md"]}),
              "sub/opencode.json": json.dumps({"instructions": ["r2.md"]}),
              "g.md": "g\n", "r1.md": "ws r1\n", "sub/r1.md": "sub r1\n", "sub/r2.md": "r2\n"})
    assert sent(ws / "sub", home) == "\n".join([
        f"Instructions from: {ws}/g.md\ng\n", f"Instructions from: {ws}/sub/r1.md\nsub r1\n",
        f"Instructions from: {ws}/r1.md\nws r1\n", f"Instructions from: {ws}/sub/r2.md\nr2\n"])


def test_project_instructions_never_read_outside(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    secret = home / ".ssh" / "id"
    make(home, {".ssh/id": "SECRET\n"})
    make(ws.parent, {"outside.md": "outside\n"})
    os.symlink(str(ws.parent), str(ws / "up"))
    make(ws, {"opencode.json": json.dumps({"instructions": [
        "~/.ssh/id", str(secret), "../outside.md", "up/outside.md", "https://x.invalid/a.md"]})})
    load = load_opencode(str(ws), str(home))
    assert "SECRET" not in load.render() and "outside" not in load.render()
    codes = [d.code for d in load.diagnostics]
    assert codes.count("opencode-instructions-outside") >= 3
    assert "opencode-instructions-remote" in codes


def test_invalid_instructions_refuse_the_start(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    make(ws, {"opencode.json": '{"instructions": "x.md"}', "AGENTS.md": "A\n"})
    load = load_opencode(str(ws), str(home))
    assert load.refused and load.render() == ""
    assert [d.code for d in load.diagnostics] == ["opencode-config-invalid"]


def test_on_read_each_folder_first_name_nearest_first_up_to_cwd(tree: tuple[Path, Path]
                                                                ) -> None:
    ws, home = tree
    make(ws, {"a/b/AGENTS.md": "A b\n", "a/b/c/CLAUDE.md": "C c\n", "a/b/c/d/CONTEXT.md": "X d\n",
              "a/b/c/d/y.txt": "y\n"})
    load = load_opencode(str(ws / "a" / "b"), str(home))
    session = OpenCodeSession(load, FileReader())
    first = session.read(str(ws / "a/b/c/d/y.txt"))
    assert first.payload() == (f"<system-reminder>\nInstructions from: {ws}/a/b/c/d/CONTEXT.md\n"
                               f"X d\n\n\nInstructions from: {ws}/a/b/c/CLAUDE.md\nC c\n\n"
                               "</system-reminder>")
    assert session.read(str(ws / "a/b/c/d/y.txt")).payload() == ""  # once per session


def test_on_read_a_sibling_sharing_the_working_folders_name_counts(tree: tuple[Path, Path]
                                                                   ) -> None:
    ws, home = tree
    make(ws, {"sub/AGENTS.md": "A sub\n", "subother/AGENTS.md": "A other\n",
              "subother/x.txt": "x\n", "elsewhere/AGENTS.md": "E\n", "elsewhere/x.txt": "x\n"})
    session = OpenCodeSession(load_opencode(str(ws / "sub"), str(home)), FileReader())
    assert "A other" in session.read(str(ws / "subother/x.txt")).payload()
    assert session.read(str(ws / "elsewhere/x.txt")).payload() == ""


def test_on_read_a_folder_named_agents_md_hides_claude_md(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    make(ws, {"c/AGENTS.md": None, "c/CLAUDE.md": "C c\n", "c/x.txt": "x\n"})
    session = OpenCodeSession(load_opencode(str(ws), str(home)), FileReader())
    assert session.read(str(ws / "c/x.txt")).payload() == ""


def test_glob_order_is_the_reverse_of_the_folder_listing(tmp_path: Path) -> None:
    make(tmp_path, {"docs/b.md": "b", "docs/a.md": "a", "docs/c.txt": "c"})
    listed = [e.name for e in os.scandir(tmp_path / "docs") if e.name.endswith(".md")]
    found = glob_files("docs/*.md", str(tmp_path), str(tmp_path)).files
    assert [os.path.basename(p) for p in found] == listed[::-1]


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("*.md", "a.md", True), ("*.md", "d/a.md", False), ("**/*.md", "d/e/a.md", True),
    ("**/*.md", "a.md", True), ("{a,b}.md", "b.md", True), ("[ab].md", "c.md", False),
    ("?.md", ".md", False), ("*.md", ".hidden.md", True),
])
def test_glob_dialect(pattern: str, path: str, matches: bool) -> None:
    regex = glob_regex(pattern)
    assert regex is not None
    assert full_match(regex, path) is matches


def test_glob_walk_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.agents.opencode import globs

    monkeypatch.setattr(globs, "MAX_ENTRIES", 50)
    for i in range(100):
        make(tmp_path, {f"d{i}/x.md": "x"})
    result = glob_files("**/x.md", str(tmp_path), str(tmp_path))
    assert result.cut and len(result.files) < 100


def test_root_claude_md_not_read_beside_agents_md(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    make(ws, {"AGENTS.md": "A\n", "CLAUDE.md": "C\n", "sub/CLAUDE.md": "C sub\n",
              "sub/CONTEXT.md": "X sub\n"})
    agent = agent_by_id("opencode")
    settings = MemorySettings(home=str(home))
    found = [str(ws / "AGENTS.md"), str(ws / "CLAUDE.md"), str(ws / "sub/CLAUDE.md"),
             str(ws / "sub/CONTEXT.md")]
    ignored = {d.path for d in agent.ignored_files(settings, [str(ws)], found, FileReader())}
    assert ignored == {str(ws / "CLAUDE.md"), str(ws / "sub/CONTEXT.md")}
    why = agent.why_not_read(str(ws / "sub/CLAUDE.md"), str(ws / "sub"), settings)
    assert why is not None and "AGENTS.md" in why


def test_duplicates_across_the_chain(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    make(ws, {"AGENTS.md": "same\n", "sub/AGENTS.md": "same\n"})
    memory = agent_by_id("opencode").load(str(ws / "sub"), MemorySettings(home=str(home)))
    assert [d.code for d in memory.diagnostics] == ["opencode-duplicate-instructions"]


def test_verify_scrub_keeps_only_instructions_that_stay_inside(tmp_path: Path) -> None:
    make(tmp_path, {"opencode.json": json.dumps({
        "instructions": ["docs/*.md", "~/x", "/etc/passwd", "../up.md", "https://a.invalid"],
        "mcp": {"x": {"command": ["rm", "-rf", "/"]}}, "plugin": ["evil"]}),
        ".opencode/plugin/p.ts": "run()", "sub/.opencode/tool/t.ts": "run()"})
    scrub_tree(tmp_path)
    assert json.loads((tmp_path / "opencode.json").read_text()) == {"instructions": ["docs/*.md"]}
    assert not (tmp_path / ".opencode").exists()
    assert not (tmp_path / "sub" / ".opencode").exists()


def test_outside_a_repository_globs_climb_but_never_into_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make(tmp_path, {"ws/notes.md": "ws notes\n", "ws/src/opencode.json": json.dumps(
        {"instructions": ["notes.md"]}), "home/notes.md": "home notes\n"})
    text = load_opencode(str(tmp_path / "ws" / "src"), str(home)).render()
    assert text == f"Instructions from: {tmp_path}/ws/notes.md\nws notes\n"
    make(home, {"proj/opencode.json": json.dumps({"instructions": ["notes.md"]})})
    assert load_opencode(str(home / "proj"), str(home)).render() == ""  # HOME is not globbed


def test_a_nested_agents_md_drops_the_root_claude_md_there(tree: tuple[Path, Path]) -> None:
    ws, home = tree
    make(ws, {"CLAUDE.md": "C root\n", "a/b/AGENTS.md": "A b\n"})
    settings = MemorySettings(home=str(home))
    assert "C root" in sent(ws, home) and "C root" not in sent(ws / "a" / "b", home)
    # OpenCode's check says so whoever is in use: who sees it is the editor's and check's
    # choice of the agents shown (tests/test_shown_findings.py).
    check = agent_by_id("opencode").check_workspace(
        settings, [str(ws)], [str(ws / "CLAUDE.md"), str(ws / "a/b/AGENTS.md")], FileReader())
    dropped = [d for d in check.diagnostics if d.code == "opencode-name-dropped"]
    assert [(d.path, "a/b/" in d.message) for d in dropped] == [(str(ws / "CLAUDE.md"), True)]


def test_homes_own_dot_opencode_config_is_read_after_the_projects(
        tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = tree
    make(ws, {"AGENTS.md": "A root\n", "p.md": "p\n", "d.md": "d\n", "h.md": "h\n",
              "opencode.json": '{"instructions": ["p.md"]}',
              ".opencode/opencode.json": '{"instructions": ["d.md"]}'})
    make(home, {".opencode/opencode.jsonc": '{"instructions": ["h.md", "p.md"]}'})
    assert [f.path for f in load_opencode(str(ws), str(home)).sent] == [
        f"{ws}/AGENTS.md", f"{ws}/p.md", f"{ws}/d.md", f"{ws}/h.md"]
    monkeypatch.setenv("OPENCODE_DISABLE_PROJECT_CONFIG", "1")  # HOME's is still read
    make(home, {".config/opencode/h.md": "h in the config folder\n"})
    assert [f.path for f in load_opencode(str(ws), str(home)).sent] == [
        f"{home}/.config/opencode/h.md"]
