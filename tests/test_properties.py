"""Property tests (hypothesis) for the import recogniser, the import processor and rendering.

(a) every import token is accounted for: rendered, failed, or left literal for a stated reason,
    and the output is exactly what the processor's events describe;
(b) the output does not depend on the order files are read in;
(c) arbitrary bytes as memory and imported files never raise;
(d) `find_imports` and `find_code_regions` equal reference implementations written here from
    behaviour.md §4's description;
(e) `js_trim` equals a reference built from the ECMAScript whitespace set.
"""

from __future__ import annotations

import os
import posixpath
import re
import string
import sys
import unicodedata
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlens.agents.gemini.diagnostics import diagnose
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.agents.gemini.imports import (
    DEFAULT_MAX_DEPTH,
    ImportEvent,
    ImportProcessor,
    Outcome,
    find_imports,
)
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import JS_WHITESPACE, js_trim, js_trim_end, js_trim_start
from memlens.files.roots import ProjectRootFinder
from memlens.model import MemorySettings
from memlens.text.references import find_code_regions
from memlens.workspace import queries

pytestmark = pytest.mark.timeout(60)

FAST = settings(max_examples=150, deadline=None)

# --- a shared world of files the generated texts import ------------------------------------

WS_TOKEN = "<WS>"
IMPORT_FRAGMENTS = [
    "@./a.md", "@a.md", "@./b.md", "@sub/c.md", "@./sub/c.md", "@./dir", "@./missing.md",
    "@../outside/secret.md", "@/etc/passwd", "@https://example.com/x.md",
    "@file:///etc/hostname", "@http://h/", "@./link_out.md", "@./link_in.md", "@./nested.md",
    "@./cyc1.md", "@./d1.md", "@./self.md", "@./fifo.md", "@./bad.md", "@user", "@./a.md,",
    "@", "@1x", "@_x", "@@./a.md", "a@./a.md", "@.", "@/", "@..", f"@{WS_TOKEN}/a.md",
    f"@{WS_TOKEN}/../outside/secret.md", "@./a.md\r", "@./A.md", "@./loop",
]
SEPARATORS = [" ", "\n", "\r\n", "\t", "\r", "`", "``", "```", "\u00a0", "\ufeff", "word",
              "(", ")", "\x0b", "\u2028"]

texts = st.lists(
    st.one_of(st.sampled_from(IMPORT_FRAGMENTS), st.sampled_from(SEPARATORS),
              st.text(max_size=4)),
    max_size=30,
).map("".join)


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("world")))
    ws = base / "ws"
    (ws / ".git").mkdir(parents=True)
    _write(base / "outside" / "secret.md", "OUTSIDE-SECRET\n")
    _write(ws / "a.md", "A\n")
    _write(ws / "b.md", "B `@./a.md` code @./a.md\n")
    _write(ws / "sub" / "c.md", "C @../a.md @./c.md\n")
    (ws / "dir").mkdir()
    _write(ws / "nested.md", "N @./a.md @./missing.md @./sub/c.md @./cyc1.md\n")
    _write(ws / "cyc1.md", "1 @./cyc2.md\n")
    _write(ws / "cyc2.md", "2 @./cyc1.md @./nested.md\n")
    for k in range(1, 8):
        _write(ws / f"d{k}.md", f"d{k} @./d{k + 1}.md ``@./a.md``\n")
    _write(ws / "self.md", "S @./self.md\n")
    _write(ws / "bad.md", b"bad \xff\xfe @./a.md\n")
    os.mkfifo(ws / "fifo.md")
    os.symlink(str(base / "outside" / "secret.md"), ws / "link_out.md")
    os.symlink("a.md", ws / "link_in.md")
    os.symlink("loop", ws / "loop")
    return ws


def _concrete(text: str, ws: Path) -> str:
    return text.replace(WS_TOKEN, str(ws))


# --- (a) every token is accounted for ---------------------------------------------------------

REFUSED = {Outcome.URL, Outcome.OUTSIDE_ROOT, Outcome.SYMLINK_ESCAPE}


class Replay:
    """Rebuilds the tree-format output from the processor's events alone."""

    def __init__(self, events: list[ImportEvent], max_depth: int):
        self.pending: dict[tuple[tuple[str, ...], int], deque[ImportEvent]] = defaultdict(deque)
        for event in events:
            self.pending[(event.chain, event.token.start)].append(event)
        self.max_depth = max_depth

    def take(self, chain: tuple[str, ...], start: int) -> ImportEvent:
        queue = self.pending.get((chain, start))
        assert queue, f"no event for the token at {start} in {chain}"
        return queue.popleft()

    def literal(self, text: str, chain: tuple[str, ...], depth: int) -> str:
        """Past the depth limit: unchanged, every non-code token noted as too deep."""
        for token in find_imports(text):
            if not token.in_code:
                event = self.take(chain, token.start)
                assert event.outcome is Outcome.TOO_DEEP
                assert event.depth == depth
        return text

    def render(self, text: str, chain: tuple[str, ...], depth: int) -> str:
        if depth >= self.max_depth:
            return self.literal(text, chain, depth)
        parts: list[str] = []
        last = 0
        for token in find_imports(text):
            parts.append(text[last:token.start])
            last = token.end
            raw = token.path
            if token.in_code:
                parts.append("@" + raw)
                continue
            event = self.take(chain, token.start)
            assert event.token == token
            assert event.depth == depth
            outcome = event.outcome
            if outcome is Outcome.IMPORTED:
                assert event.read is not None and event.read.content is not None
                body = self.render(event.read.content, (*chain, event.target), depth + 1)
                parts.append(f"<!-- Imported from: {raw} -->\n{body}\n"
                             f"<!-- End of import from: {raw} -->")
            elif outcome in REFUSED:
                parts.append(f"<!-- Import failed: {raw} - Path traversal attempt -->")
            elif outcome is Outcome.ALREADY_PROCESSED:
                # Only files imported along this chain count (the root itself does not).
                assert event.target in chain[1:]
                parts.append(f"<!-- File already processed: {raw} -->")
            elif outcome is Outcome.FAILED:
                assert event.error
                parts.append(f"<!-- Import failed: {raw} - {event.error} -->")
            else:
                assert outcome is Outcome.SKIPPED_BUDGET, outcome
                parts.append("@" + raw)
        parts.append(text[last:])
        return "".join(parts)

    def leftovers(self) -> list[ImportEvent]:
        return [e for queue in self.pending.values() for e in queue]


@FAST
@given(text=texts, current_depth=st.integers(0, DEFAULT_MAX_DEPTH))
def test_every_import_token_is_rendered_failed_or_literal(
        world: Path, text: str, current_depth: int) -> None:
    text = _concrete(text, world)
    source = str(world / "GEMINI.md")
    processor = ImportProcessor(FileReader(), ProjectRootFinder([".git"]))
    result = processor.process(text, str(world), source_file=source,
                               current_depth=current_depth)
    replay = Replay(result.events, DEFAULT_MAX_DEPTH)
    assert result.content == replay.render(text, (source,), current_depth)
    assert replay.leftovers() == []
    # Each of the root's tokens has exactly one fate, and its marker is in the output.
    root_events = [e for e in result.events if e.chain == (source,)]
    assert [e.token for e in root_events] == [t for t in find_imports(text) if not t.in_code]
    for event in root_events:
        raw = event.token.path
        marker = {
            Outcome.IMPORTED: f"<!-- Imported from: {raw} -->",
            Outcome.ALREADY_PROCESSED: f"<!-- File already processed: {raw} -->",
            Outcome.FAILED: f"<!-- Import failed: {raw} - ",
            Outcome.URL: f"<!-- Import failed: {raw} - Path traversal attempt -->",
            Outcome.OUTSIDE_ROOT: f"<!-- Import failed: {raw} - Path traversal attempt -->",
            Outcome.SYMLINK_ESCAPE: f"<!-- Import failed: {raw} - Path traversal attempt -->",
        }.get(event.outcome, "@" + raw)
        assert marker in result.content
    assert "OUTSIDE-SECRET" not in result.content
    if current_depth >= DEFAULT_MAX_DEPTH:
        assert result.content == text


@FAST
@given(text=texts, current_depth=st.integers(0, DEFAULT_MAX_DEPTH),
       max_chars=st.sampled_from([0, 1, 40, 200]), fmt=st.sampled_from(["tree", "flat"]))
def test_a_text_budget_cuts_an_exact_prefix_and_keeps_every_event(
        world: Path, text: str, current_depth: int, max_chars: int, fmt: Any) -> None:
    """Past `max_chars` (leading whitespace aside) the text is the exact prefix one character
    longer than the budget; below it, the whole. Events never depend on the budget: each is
    one the unbounded walk records, and every token the unbounded walk meets is met."""
    text = _concrete(text, world)
    source = str(world / "GEMINI.md")

    def run(limit: int | None) -> Any:
        processor = ImportProcessor(FileReader(), ProjectRootFinder([".git"]), max_chars=limit)
        return processor.process(text, str(world), source_file=source, import_format=fmt,
                                 current_depth=current_depth)

    whole, cut = run(None), run(max_chars)
    assert whole.content.startswith(cut.content)
    visible = len(js_trim_start(whole.content))
    if visible <= max_chars:
        assert (cut.content, cut.truncated) == (whole.content, False)
    else:
        assert cut.truncated
        assert len(js_trim_start(cut.content)) == max_chars + (1 if max_chars else 0)
    assert set(cut.events) <= set(whole.events)
    assert {(e.file, e.token.start) for e in cut.events} == {
        (e.file, e.token.start) for e in whole.events}


@FAST
@given(text=texts)
def test_every_import_token_is_accounted_for_in_flat_format(world: Path, text: str) -> None:
    text = _concrete(text, world)
    source = str(world / "GEMINI.md")
    processor = ImportProcessor(FileReader(), ProjectRootFinder([".git"]))
    result = processor.process(text, str(world), import_format="flat", source_file=source)
    # Flat format walks each file's imports last to first.
    root_events = [e for e in result.events if e.chain == (source,)]
    assert [e.token for e in reversed(root_events)] == [
        t for t in find_imports(text) if not t.in_code]
    imported = [e for e in result.events if e.outcome is Outcome.IMPORTED]
    # One block for the root (named after its folder) and one per file imported.
    assert result.content.startswith(f"--- File: {world} ---\n{js_trim(text)}\n"
                                     f"--- End of File: {world} ---")
    assert result.content.count("\n--- End of File: ") == 1 + len(imported)
    for event in imported:
        assert f"--- File: {posixpath.normpath(event.target)} ---\n" in result.content
    assert len({posixpath.normpath(e.target) for e in imported}) == len(imported)
    assert "OUTSIDE-SECRET" not in result.content


# --- (b) read order does not matter -----------------------------------------------------------


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("repo")))
    ws = base / "ws"
    (ws / ".git").mkdir(parents=True)
    (base / "home").mkdir()
    _write(ws / "GEMINI.md", "Root @./docs/a.md @./docs/b.md @./missing.md\n")
    _write(ws / "docs" / "a.md", "A @./b.md @./shared.md\n")
    _write(ws / "docs" / "b.md", "B @./shared.md @../GEMINI.md\n")
    _write(ws / "docs" / "shared.md", "Shared `@./a.md` @./a.md\n")
    _write(ws / "docs" / "GEMINI.md", "Docs @./a.md @user\n")
    _write(ws / "pkg" / "api" / "GEMINI.md", "Api @../../docs/shared.md @/etc/passwd\n")
    _write(ws / "pkg" / "api" / "notes.md", b"bin \x00 \xff\n")
    _write(ws / "pkg" / "GEMINI.md", "Pkg @./api/notes.md @https://x.y/z\n")
    for name in ("inc1", "inc2", "inc3"):
        _write(base / name / ".git" / "HEAD", "ref\n")
        _write(base / name / "GEMINI.md", f"{name} @./extra.md\n")
        _write(base / name / "extra.md", f"extra of {name}\n")
    return ws


def _memory_files(ws: Path) -> list[str]:
    return sorted(str(p) for p in ws.parent.rglob("*.md"))


def _snapshot(engine: MemoryEngine, ws: Path) -> tuple[Any, ...]:
    load = engine.load(str(ws))
    diagnostics = [d.wire() for d in diagnose(load, engine)]
    return (queries.flattened(load), load.paths, load.memory.wire(), diagnostics)


@FAST
@given(data=st.data(), jit=st.booleans(), fmt=st.sampled_from(["tree", "flat"]))
def test_output_does_not_depend_on_read_order(repo: Path, data: st.DataObject, jit: bool,
                                              fmt: str) -> None:
    config = MemorySettings(home=str(repo.parent / "home"), jit_context=jit,
                            discovery_max_dirs=-1, import_format=fmt, trusted=True,
                            discover_gemini_extensions=False)
    baseline = _snapshot(MemoryEngine(config), repo)
    files = _memory_files(repo)
    order = data.draw(st.permutations(files), label="read order")
    forget = data.draw(st.sets(st.sampled_from(files)), label="forgotten")
    reader = FileReader(max_bytes=config.max_context_chars * 4 + 4)
    for path in order:
        reader.read(path)
    for path in forget:
        reader.forget(path)
    assert _snapshot(MemoryEngine(config, reader=reader), repo) == baseline


@FAST
@given(includes=st.permutations(["../inc1", "../inc2", "../inc3"]))
def test_output_does_not_depend_on_workspace_folder_order(repo: Path,
                                                          includes: list[str]) -> None:
    """Jit startup memory sorts its paths (Gemini CLI's `.sort()`), so folder order is moot."""

    def run(folders: list[str]) -> tuple[Any, ...]:
        config = MemorySettings(home=str(repo.parent / "home"), include_directories=folders,
                                trusted=True, discover_gemini_extensions=False)
        shown = queries.show(str(repo), config)
        checked = [d.wire() for d in queries.check(str(repo), config)]
        return shown.content, shown.files, shown.session_memory, checked

    assert run(includes) == run(["../inc1", "../inc2", "../inc3"])


# --- (c) arbitrary bytes never raise -------------------------------------------------------------

BYTE_PIECES = [b" @./a.md ", b"\n@./sub/GEMINI.md\n", b" @./GEMINI.md ", b"`", b"```",
               b"\xef\xbb\xbf", b"\r\n", b"\x00", b"\xff", b"\xe2\x82", b" @/etc/passwd ",
               b" @../x ", b" @./a.md\x00 ", b" @https://x/y ", b"@", b"\xed\xa0\x80"]
blobs = st.lists(st.one_of(st.binary(max_size=24), st.sampled_from(BYTE_PIECES)),
                 max_size=16).map(b"".join)
KNOWN_CODES = {
    "import-not-found", "import-outside-root", "import-url", "import-cycle", "import-too-deep",
    "import-unreadable", "import-in-prose", "import-diamond", "search-budget-exhausted",
    "read-above-root", "file-too-large", "context-truncated", "memory-duplicate-entry",
    "file-unreadable", "hidden-text", "hidden-comment",
}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("bytes")))
    (base / "home").mkdir()
    (base / "ws" / ".git").mkdir(parents=True)
    (base / "ws" / "sub").mkdir()
    return base / "ws"


def _is_bad_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return b"\x00" in data


@FAST
@given(top=blobs, imported=blobs, sub=blobs, jit=st.booleans(),
       fmt=st.sampled_from(["tree", "flat"]))
def test_arbitrary_bytes_never_raise(scratch: Path, top: bytes, imported: bytes, sub: bytes,
                                     jit: bool, fmt: str) -> None:
    (scratch / "GEMINI.md").write_bytes(top)
    (scratch / "a.md").write_bytes(imported)
    (scratch / "sub" / "GEMINI.md").write_bytes(sub)
    config = MemorySettings(home=str(scratch.parent / "home"), jit_context=jit,
                            import_format=fmt, trusted=True, discover_gemini_extensions=False,
                            max_context_chars=2_000)
    engine = MemoryEngine(config)
    load = engine.load(str(scratch))
    diagnostics = diagnose(load, engine)
    shown = queries.show(str(scratch), config)
    checked = queries.check(str(scratch), config)
    assert len(shown.content) <= config.max_context_chars + 200
    for d in [*diagnostics, *checked, *shown.diagnostics]:
        assert d.code in KNOWN_CODES
        assert d.severity in ("error", "warning", "info")
        assert 1 <= d.line <= d.end_line and d.col >= 1 and d.end_col >= 1
        assert d.line < d.end_line or d.col <= d.end_col
    top_codes = {d.code for d in checked if d.path == str(scratch / "GEMINI.md")}
    assert ("file-unreadable" in top_codes) == _is_bad_utf8(top)


# --- (d) the recogniser matches a reference ------------------------------------------------------

_REF_TOKEN = re.compile(r"(?:\A|(?<=[ \t\n\r]))@([^ \t\n\r]*)")


def reference_code_regions(content: str) -> list[tuple[int, int]]:
    """`/(`+)([\\s\\S]*?)\\1/g` by hand: longest backtick run first, then shorter ones, each
    closed by the nearest later run of the same length; otherwise try the next character."""
    regions = []
    i, n = 0, len(content)
    while i < n:
        if content[i] != "`":
            i += 1
            continue
        run = 1
        while i + run < n and content[i + run] == "`":
            run += 1
        for width in range(run, 0, -1):
            close = content.find("`" * width, i + width)
            if close != -1:
                regions.append((i, close + width))
                i = close + width
                break
        else:
            i += 1
    return regions


def reference_find_imports(content: str) -> list[tuple[int, int, str, bool]]:
    """behaviour.md §4: `@` at the start or after space/tab/LF/CR; the path runs to the next
    such character; kept when it starts with `.`, `/` or an ASCII letter; in code when the
    `@` lies inside a backtick region."""
    regions = reference_code_regions(content)
    out = []
    for match in _REF_TOKEN.finditer(content):
        path = match.group(1)
        if path and (path[0] in "./" or path[0] in string.ascii_letters):
            start = match.start()
            in_code = any(a <= start < b for a, b in regions)
            out.append((start, match.end(), path, in_code))
    return out


recogniser_text = st.one_of(
    texts,
    st.text(alphabet=st.sampled_from(list("@`./aZ1_ \t\n\r\x0b\x0c\u00a0\u2028é😀-")),
            max_size=60),
    st.text(max_size=60),
)


@settings(max_examples=200, deadline=None)
@given(text=recogniser_text)
def test_recogniser_matches_reference(text: str) -> None:
    assert find_code_regions(text) == reference_code_regions(text)
    got = [(t.start, t.end, t.path, t.in_code) for t in find_imports(text)]
    assert got == reference_find_imports(text)
    for start, end, path, _ in got:
        assert text[start] == "@" and text[start + 1:end] == path


def test_recogniser_reference_examples() -> None:
    """The reference itself, on behaviour.md §4's own examples."""
    assert [t[2] for t in reference_find_imports(
        "@./a.md x@y a@b.com (@./x.md) @1abc @_x @ @user @./x.md, `@./c.md` @/abs")] == [
        "./a.md", "user", "./x.md,", "/abs"]
    assert [t[3] for t in reference_find_imports("` @./c.md` ``\n@x`` @y ```a` ``` @z")] == [
        True, True, False, False]


# --- (e) js_trim ---------------------------------------------------------------------------------

# ECMAScript WhiteSpace (TAB, VT, FF, ZWNBSP, any Zs) and LineTerminator (LF, CR, LS, PS).
ES_WHITESPACE = frozenset(
    {"\t", "\x0b", "\x0c", "\ufeff", "\n", "\r", "\u2028", "\u2029"}
    | {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Zs"})
NEAR_MISSES = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u180e", "\u200b", "\u2060", "\x00",
               "a", "\ufffe"]


def reference_trim(text: str, start: bool = True, end: bool = True) -> str:
    i, j = 0, len(text)
    while start and i < j and text[i] in ES_WHITESPACE:
        i += 1
    while end and j > i and text[j - 1] in ES_WHITESPACE:
        j -= 1
    return text[i:j]


def test_js_whitespace_is_the_ecmascript_set() -> None:
    assert set(JS_WHITESPACE) == ES_WHITESPACE


trim_text = st.text(alphabet=st.one_of(st.sampled_from(sorted(ES_WHITESPACE) + NEAR_MISSES),
                                       st.characters()), max_size=30)


@settings(max_examples=200, deadline=None)
@given(text=trim_text)
def test_js_trim_matches_ecmascript(text: str) -> None:
    assert js_trim(text) == reference_trim(text)
    assert js_trim_start(text) == reference_trim(text, end=False)
    assert js_trim_end(text) == reference_trim(text, start=False)
