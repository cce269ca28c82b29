"""Issue 15, hostile repositories: every cost is bounded by the input or by a budget.

Each test reproduces one attack for real (the engine on a tree on disk, or the real `memlens`
command in a subprocess) and bounds it by the size of the output or of the work, with a
generous timeout that only catches a hang; none asserts a tight time.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlens.agents.gemini.imports import find_imports
from memlens.model import MemorySettings
from memlens.text.references import find_code_regions
from memlens.workspace import queries

MEMLENS = Path(sys.executable).parent / "memlens"
needs_cli = pytest.mark.skipif(not MEMLENS.exists(), reason=f"{MEMLENS} is not installed")


MEMORY_CAP = 2 << 30  # the attacks below once grew to gigabytes: cap the child, not the box


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 60) -> tuple[int, bytes, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEMINI_CLI_")}
    env.update(PYTHONUTF8="1", PYTHONIOENCODING="utf-8", GEMINI_CLI_TRUST_WORKSPACE="true")
    done = subprocess.run([str(MEMLENS), *args], capture_output=True, timeout=timeout, cwd=cwd,
                          env=env, check=False, stdin=subprocess.DEVNULL,
                          preexec_fn=_cap_memory)
    return done.returncode, done.stdout, done.stderr.decode("utf-8", "replace")


class Tree:
    def __init__(self, base: Path):
        self.base = base
        self.home = base / "home"
        self.ws = base / "ws"
        self.home.mkdir()
        (self.ws / ".git").mkdir(parents=True)

    def write(self, rel: str, data: str | bytes) -> Path:
        path = self.ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return path

    def settings(self, **extra: Any) -> MemorySettings:
        values: dict[str, Any] = {"home": str(self.home), "discover_gemini_extensions": False,
                                  "trusted": True}
        values.update(extra)
        return MemorySettings(**values)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(Path(os.path.realpath(tmp_path)))


# --- 9: the code-span rule is linear -----------------------------------------------------------

# Gemini CLI's own rule, kept here only as the oracle: the engine no longer runs it.
_GEMINI_CODE_REGION = re.compile(r"(`+)([\s\S]*?)\1")


def oracle_code_regions(content: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _GEMINI_CODE_REGION.finditer(content)]


backtick_text = st.lists(st.sampled_from(["`", "``", "```", "````", "`````", "a", " ", "\n",
                                          "@./x.md", "é"]), max_size=40).map("".join)


@settings(max_examples=3000, deadline=None)
@given(text=st.one_of(backtick_text, st.text(alphabet="`a \n", max_size=40)))
def test_code_regions_equal_gemini_cli_regex(text: str) -> None:
    assert find_code_regions(text) == oracle_code_regions(text)


def staircase(size: int) -> str:
    """Backtick runs of falling length, one letter apart: the regex backtracks ~N^4 here."""
    parts: list[str] = []
    total, width = 0, 1
    while total < size:
        total += width + 1
        width += 1
    for run in range(width - 1, 0, -1):
        parts.append("`" * run + "x")
    return "".join(parts)


@pytest.mark.timeout(60)
def test_staircase_of_backtick_runs_is_linear(tree: Tree) -> None:
    text = staircase(2_000_000) + "\n@./a.md\n"
    assert len(text) > 2_000_000
    tokens = find_imports(text)
    assert [(t.path, t.in_code) for t in tokens] == [("./a.md", False)]
    tree.write("a.md", "A\n")
    tree.write("GEMINI.md", text)
    result = queries.show(str(tree.ws), tree.settings())
    assert "<!-- Imported from: ./a.md -->\nA\n" in result.content


# --- 10: one line index per document, however many diagnostics -------------------------------


def test_50000_diagnostics_of_one_document_build_one_line_index(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Converting each diagnostic used to re-split the whole document (minutes for 50,000
    one-line imports): the converter builds the document's line index once."""
    from memlens.lsp import convert
    from memlens.protocol.memory import Diagnostic

    built: list[int] = []
    real = convert.DocIndex

    def counting(text: str, encoding: str) -> convert.DocIndex:
        built.append(len(text))
        return real(text, encoding)

    monkeypatch.setattr(convert, "DocIndex", counting)
    count = 50_000
    text = "".join(f"@./m{i}.md\n" for i in range(count))
    positions = convert.PositionConverter()
    width = len(f"@./m{count - 1}.md")
    converted = [positions.to_lsp_diagnostic(Diagnostic(
        path="/ws/GEMINI.md", line=i + 1, col=1, end_line=i + 1, end_col=width + 1,
        severity="warning", code="import-not-found", message="m"), text)
        for i in range(count)]
    assert built == [len(text)]
    assert (converted[-1].range.start.line, converted[-1].range.end.character) == (
        count - 1, width)


# --- 10: positions from one line index equal the old per-call re-split ----------------------


def _oracle_units(text: str, encoding: str) -> int:
    if encoding == "utf-32":
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _oracle_position(text: str, offset: int, encoding: str) -> tuple[int, int]:
    before = text[:offset]
    start = before.rfind("\n") + 1
    if start == 0 and text.startswith("\ufeff"):
        start = min(1, offset)
    return before.count("\n"), _oracle_units(text[start:offset], encoding)


def _oracle_column(text: str, line: int, col: int, encoding: str) -> tuple[int, int]:
    lines = text.split("\n")
    if line - 1 >= len(lines):
        return max(line - 1, 0), 0
    row = lines[line - 1]
    if line == 1 and row.startswith("\ufeff"):
        row = row[1:]
    return line - 1, _oracle_units(row[: col - 1], encoding)


def _oracle_offset(text: str, line: int, character: int, encoding: str) -> int:
    lines = text.split("\n")
    if line >= len(lines):
        return len(text)
    offset = sum(len(x) + 1 for x in lines[:line])
    row = lines[line]
    if line == 0 and text.startswith("\ufeff"):
        offset, row = 1, row[1:]
    units = 0
    for index, char in enumerate(row):
        if units >= character:
            return offset + index
        units += _oracle_units(char, encoding)
    return offset + len(row)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(list("ab\n\r\ufeffé😀\udcff@ ")), max_size=30),
       encoding=st.sampled_from(["utf-16", "utf-8", "utf-32"]), data=st.data())
def test_doc_index_positions_equal_the_resplit(text: str, encoding: str,
                                               data: st.DataObject) -> None:
    from lsprotocol import types

    from memlens.lsp.convert import PositionConverter

    convert = PositionConverter(encoding)
    offset = data.draw(st.integers(0, len(text)))
    got = convert.position_at(text, offset)
    assert (got.line, got.character) == _oracle_position(text, offset, encoding)
    line, col = data.draw(st.integers(1, 8)), data.draw(st.integers(1, 12))
    index = convert.doc_index(text)
    got = index.column(line, col)
    assert (got.line, got.character) == _oracle_column(text, line, col, encoding)
    row, character = data.draw(st.integers(0, 6)), data.draw(st.integers(0, 12))
    assert convert.offset_at(text, types.Position(line=row, character=character)) == (
        _oracle_offset(text, row, character, encoding))


# --- 8: the text budget counts every character emitted -----------------------------------------

TRUNCATION_NOTE = ("\n[Memory Lens: preview truncated at {limit:,} characters "
                   "(memlens.maxContextChars); Gemini CLI would receive more]")


def long_folder(tree: Tree) -> Path:
    """A folder whose path is ~3,000 characters: each failure comment names it."""
    folder = tree.ws
    for k in range(14):
        folder = folder / (f"{k:02d}" + "d" * 200)
    folder.mkdir(parents=True)
    return folder


def four_tiny_files(tree: Tree) -> Path:
    """GEMINI.md → a.md ×40 → b.md ×40 → c.md ×40 missing files: under 2 KB in all, each
    inclusion of c.md a ~120 KB of failure comments, 40^3 of them."""
    folder = long_folder(tree)
    (folder / "GEMINI.md").write_text("Rules\n" + " ".join(["@./a.md"] * 40) + "\n")
    (folder / "a.md").write_text(" ".join(["@./b.md"] * 40) + "\n")
    (folder / "b.md").write_text(" ".join(["@./c.md"] * 40) + "\n")
    (folder / "c.md").write_text(" ".join(f"@./gone{k}.md" for k in range(40)) + "\n")
    (folder / ".git").mkdir()
    return folder


@needs_cli
@pytest.mark.timeout(100)
def test_failure_comments_count_against_the_budget(tree: Tree) -> None:
    folder = four_tiny_files(tree)
    assert sum(p.stat().st_size for p in folder.glob("*.md")) < 2_000
    limit = 4_000_000
    code, out, err = run_cli("show", str(folder), "--home", str(tree.home), timeout=60)
    assert code == 0, err
    text = out.decode("utf-8")
    note = TRUNCATION_NOTE.format(limit=limit)
    assert text.endswith(note + "\n")
    assert len(text) == limit + len(note) + 1
    top = folder / "GEMINI.md"
    head = (f"--- Project ---\n--- Context from: {top} ---\nRules\n"
            "<!-- Imported from: ./a.md -->\n<!-- Imported from: ./b.md -->\n"
            "<!-- Imported from: ./c.md -->\n"
            f"<!-- Import failed: ./gone0.md - ENOENT: no such file or directory, access "
            f"'{folder}/gone0.md' --> <!-- Import failed: ./gone1.md")
    assert text.startswith(head)

    # The engine's own preview: the same exact prefix, and the diagnostics of every file.
    result = queries.show(str(folder), tree.settings())
    assert result.truncated and result.content == text[:-1]
    found = {(os.path.basename(d.path), d.code) for d in result.diagnostics}
    assert ("c.md", "import-not-found") in found
    assert ("GEMINI.md", "context-truncated") in found


# --- 19: `memlens check` reports every import, whatever the preview's budget -------------------


@needs_cli
@pytest.mark.timeout(100)
def test_check_reports_imports_after_a_huge_one(tree: Tree) -> None:
    with (tree.ws / "huge.md").open("wb") as out:
        out.write((b"x" * 1023 + b"\n") * (30 * 1024))  # 30 MB
    (tree.ws / "folder.md").mkdir()
    tree.write("GEMINI.md", "@./huge.md\n@../../etc/passwd\n@./folder.md\n@./d1.md\n")
    for k in range(1, 6):
        tree.write(f"d{k}.md", f"level {k} @./d{k + 1}.md\n")
    tree.write("d6.md", "six\n")
    tree.write("sub/GEMINI.md", "Sub @../../../etc/hostname\n")
    code, out, err = run_cli("check", str(tree.ws), "--home", str(tree.home), "--format",
                             "json", timeout=60)
    assert code == 1, err
    found = {(os.path.basename(d["path"]), d["line"], d["code"]) for d in json.loads(out)}
    assert {("GEMINI.md", 2, "import-outside-root"), ("GEMINI.md", 3, "import-unreadable"),
            ("d5.md", 1, "import-too-deep"), ("GEMINI.md", 1, "file-too-large"),
            ("GEMINI.md", 1, "context-truncated")} <= found
    # The subfolder's file is checked too, although the budget went on the first file.
    assert ("GEMINI.md", 1, "import-outside-root") in {
        (os.path.basename(d["path"]), d["line"], d["code"]) for d in json.loads(out)
        if "/sub/" in d["path"]}


# --- 11: the index refuses HOME as a workspace folder; the walk has a folder budget ----------


@pytest.mark.timeout(60)
def test_index_refuses_home_unless_allowed(tree: Tree) -> None:
    from memlens.workspace.index import WorkspaceIndex

    home = tree.home
    (home / "proj" / ".git").mkdir(parents=True)
    (home / "proj" / "GEMINI.md").write_text("Proj @./gone.md\n")
    refused = WorkspaceIndex(tree.settings(), [str(home)])
    refused.build()
    assert refused.refused == {str(home): "your home folder"}
    assert [d.code for d in refused.diagnostics_for(str(home))] == ["workspace-not-indexed"]
    assert str(home / "proj" / "GEMINI.md") not in refused.roots
    assert "set memlens.allowBroadWorkspace" in refused.show(str(home)).content
    assert any("did not index" in n for n in refused.notices())

    allowed = WorkspaceIndex(tree.settings(allow_broad_workspace=True), [str(home)])
    allowed.build()
    assert allowed.refused == {} and allowed.notices() == []
    assert [d.code for d in allowed.diagnostics_for(str(home / "proj" / "GEMINI.md"))] == [
        "import-not-found"]


@pytest.mark.timeout(60)
def test_check_walk_has_a_folder_budget(tree: Tree) -> None:
    for k in range(300):
        (tree.ws / "many" / f"d{k:03d}").mkdir(parents=True)
    tree.write("many/d299/GEMINI.md", "Deep @./gone.md\n")
    tree.write("GEMINI.md", "Top\n")
    found = queries.check(str(tree.ws), tree.settings(max_indexed_folders=100))
    assert [(d.path, d.code) for d in found] == [(str(tree.ws), "index-budget-exhausted")]
    assert "after reading 100 folders (memlens.maxIndexedFolders)" in found[0].message
    found = queries.check(str(tree.ws), tree.settings())
    assert [(os.path.basename(d.path), d.code) for d in found] == [
        ("GEMINI.md", "import-not-found")]


# --- 8: past the limit the preview is the exact beginning of the whole ------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("jit", [True, False])
def test_truncated_preview_is_an_exact_prefix_at_every_limit(tree: Tree, jit: bool) -> None:
    (tree.home / ".gemini").mkdir()
    (tree.home / ".gemini" / "GEMINI.md").write_text("  \n Global rules @./nope.md  \n\n")
    ext = tree.base / "ext.md"
    ext.write_text("\n\nExtension text   \n" + "e " * 30)
    tree.write("GEMINI.md", "   Top @./a.md @./missing.md\n" + " " * 40 + "\n@./a.md tail   ")
    tree.write("a.md", "A body " * 10 + "@./b.md" + " " * 30)
    tree.write("b.md", "   B\n\n")
    tree.write("sub/GEMINI.md", "Sub @../a.md\n")

    def shown(limit: int) -> str:
        return queries.show(str(tree.ws), tree.settings(
            jit_context=jit, max_context_chars=limit, extension_context_files=[str(ext)],
            discovery_max_dirs=-1)).content

    whole = shown(10_000_000)
    assert len(whole) > 600
    for limit in range(1, len(whole) + 3):
        note = TRUNCATION_NOTE.format(limit=limit)
        expected = whole if len(whole) <= limit else whole[:limit] + note
        assert shown(limit) == expected, limit


@needs_cli
@pytest.mark.timeout(60)
def test_cli_check_folder_budget(tree: Tree) -> None:
    for k in range(120):
        (tree.ws / "many" / f"d{k:03d}").mkdir(parents=True)
    tree.write("GEMINI.md", "Top\n")
    code, out, err = run_cli("check", str(tree.ws), "--home", str(tree.home), "--format", "json",
                             "--max-indexed-folders", "50", timeout=30)
    assert code == 0, err
    assert [(d["path"], d["code"]) for d in json.loads(out)] == [
        (str(tree.ws), "index-budget-exhausted")]
    code, out, err = run_cli("check", str(tree.ws), "--max-indexed-folders", "0", timeout=30)
    assert code == 2 and err.startswith("memlens: error: argument --max-indexed-folders"), err


@needs_cli
def test_cli_check_never_walks_a_broad_include_directory(tree: Tree) -> None:
    # A trusted repository whose settings name `/` (or HOME) as an include directory: Gemini
    # CLI reads it, and so does the preview, but `check` would walk the whole disk looking for
    # subfolder memory. It says what it skipped instead.
    tree.write("GEMINI.md", "Top\n")
    tree.write(".gemini/settings.json", json.dumps(
        {"context": {"includeDirectories": ["/", str(tree.home)]}}))
    code, out, err = run_cli("check", str(tree.ws), "--home", str(tree.home), "--format", "json",
                             timeout=60)
    found = [(d["path"], d["code"]) for d in json.loads(out)]
    assert code == 0, err  # warnings only
    assert ("/", "workspace-not-indexed") in found, err
    assert (str(tree.home), "workspace-not-indexed") in found, err
    # Nothing below `/` was reported: the walk never went there.
    assert all(path.startswith(str(tree.ws)) or path in ("/", str(tree.home))
               for path, _ in found), found


# --- frontmatter: bounded, and parsed once per text --------------------------------------------

def _frontmatter(keys: int) -> str:
    body = "".join(f"k{i}: v{i}\n" for i in range(keys))
    return (f"---\napplyTo: \"**/*.py\"\npaths: [\"**/*.py\"]\nname: s\ndescription: d\n{body}"
            "---\nUse types.\n")


def test_a_huge_frontmatter_is_said_not_parsed(tree: Tree, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    # 3.9 MB of keys in every agent's frontmatter: each parse in pure Python took about 40 s,
    # and `check` parsed each file again for every view (264 s of CPU for one file).
    huge = _frontmatter(250_000)
    for rel in (".github/instructions/big.instructions.md", ".claude/rules/big.md",
                ".claude/skills/s/SKILL.md"):
        tree.write(rel, huge)
    tree.write("CLAUDE.md", "hi\n")
    monkeypatch.setenv("MEMLENS_AGENTS", "claude,copilot,vscode-chat,gemini")
    code, out, err = run_cli("check", str(tree.ws), "--home", str(tree.home), "--format",
                             "json", timeout=120)
    assert code in (0, 1), err
    messages = {(d["code"], d["path"].rsplit("/", 1)[-1]): d["message"]
                for d in json.loads(out)}
    assert messages[("copilot-frontmatter-invalid", "big.instructions.md")].startswith(
        "Memory Lens does not read a frontmatter this large")
    assert "not read" in messages[("frontmatter-unreadable", "big.md")]


def test_each_frontmatter_text_is_parsed_once(tree: Tree, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    from memlens.cli.main import main
    from memlens.files import structured

    text = _frontmatter(2_000)  # under the bound: parsed
    for rel in (".github/instructions/big.instructions.md", ".claude/rules/big.md"):
        tree.write(rel, text)
    tree.write("CLAUDE.md", "hi\n")
    parsed: list[int] = []
    real = structured.guarded

    def counted(parse: Any, **bounds: Any) -> Any:
        parsed.append(1)
        return real(parse, **bounds)

    monkeypatch.setattr(structured, "guarded", counted)
    monkeypatch.setenv("MEMLENS_AGENTS", "claude,copilot,vscode-chat")
    main(["check", str(tree.ws), "--home", str(tree.home), "--format", "json"])
    # one parse per reader of the text (Copilot's YAML 1.2 reader, and the PyYAML reader that
    # Claude Code's rules and VS Code chat share), not one per view
    assert 0 < len(parsed) <= 3, len(parsed)
