"""Hostile trees (docs/security.md "Bounds"): nothing crashes, hangs or escapes, and each problem is
reported.

Every case builds its tree in a fresh folder, runs the engine (`MemoryEngine.load`,
`queries.show`, `queries.check`) and, for most cases, the real `memlens` command in a subprocess.
Each test is bounded by pytest-timeout (`pytestmark` below) and every subprocess by `timeout=`,
so a FIFO that gets opened or a walk that never ends fails the test instead of hanging CI.

Rendered text and diagnostics are asserted exactly (codes, line/column ranges) wherever the
expected value can be written down; a few pathological trees are checked against a small
reference renderer of Gemini CLI's import rules written here.

Every engine bug this suite found has been fixed; each keeps its test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memlens.agents.gemini.discovery import MemoryEngine
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.workspace import queries

pytestmark = pytest.mark.timeout(30)

MEMLENS = Path(sys.executable).parent / "memlens"
SETPRIV = shutil.which("setpriv")
NOBODY = 65534
CLI_TIMEOUT = 30
TRUNCATION_NOTE = ("\n[Memory Lens: preview truncated at {limit:,} characters "
                   "(memlens.maxContextChars); Gemini CLI would receive more]")
MB30 = 30 * 1024 * 1024

needs_cli = pytest.mark.skipif(not MEMLENS.exists(), reason=f"{MEMLENS} is not installed")


# --- helpers -----------------------------------------------------------------------------


class Tree:
    """A workspace (`ws`, a git root) and an empty HOME side by side in one folder."""

    def __init__(self, base: Path):
        self.base = base
        self.home = base / "home"
        self.ws = base / "ws"
        self.home.mkdir()
        (self.ws / ".git").mkdir(parents=True)
        # The user trusts the workspace (the CLI runs below decide trust as Gemini CLI does).
        (self.home / ".gemini").mkdir()
        (self.home / ".gemini" / "trustedFolders.json").write_text(
            json.dumps({str(self.ws): "TRUST_FOLDER"}))

    def write(self, rel: str, data: str | bytes, *, under: Path | None = None) -> Path:
        path = (under or self.ws) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return path

    def settings(self, **extra: Any) -> MemorySettings:
        values: dict[str, Any] = {"home": str(self.home), "discover_gemini_extensions": False,
                                  "trusted": True}
        values.update(extra)
        return MemorySettings(**values)

    def p(self, rel: str) -> str:
        return str(self.ws / rel)


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    return Tree(Path(os.path.realpath(tmp_path)))


def run_cli(*args: str, cwd: Path | None = None, as_nobody: bool = False,
            timeout: float = CLI_TIMEOUT) -> tuple[int, str, str, float]:
    """Run `memlens ARGS` and return (exit status, stdout, stderr, seconds).

    Bytes are decoded by hand: text mode would turn the CRLFs we assert on into LFs.
    """
    cmd = [str(MEMLENS), *args]
    if as_nobody:
        assert SETPRIV is not None
        cmd = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *cmd]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GEMINI_CLI_")}
    env.update(PYTHONUTF8="1", PYTHONIOENCODING="utf-8")
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=cwd, env=env,
                          check=False)
    elapsed = time.monotonic() - started
    return (done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"),
            elapsed)


def cli_json(*args: str, **kw: Any) -> Any:
    code, out, err, _ = run_cli(*args, **kw)
    assert code in (0, 1), err
    return json.loads(out)


def block(path: str, body: str) -> str:
    return f"--- Context from: {path} ---\n{body}\n--- End of Context from: {path} ---"


def project(*blocks: str) -> str:
    return "--- Project ---\n" + "\n\n".join(blocks)


def imported(raw: str, body: str) -> str:
    return f"<!-- Imported from: {raw} -->\n{body}\n<!-- End of import from: {raw} -->"


def failed(raw: str, why: str) -> str:
    return f"<!-- Import failed: {raw} - {why} -->"


TRAVERSAL = "Path traversal attempt"


def spans(diags: list[Diagnostic]) -> list[tuple[str, int, int, int, int, str]]:
    """(basename, line, col, end line, end col, code) of each diagnostic, in order."""
    return [(os.path.basename(d.path), d.line, d.col, d.end_line, d.end_col, d.code)
            for d in diags]


def wire_spans(items: list[dict[str, Any]]) -> list[tuple[str, int, int, int, int, str]]:
    return [(os.path.basename(d["path"]), d["line"], d["col"], d["endLine"], d["endCol"],
             d["code"]) for d in items]


def show(tree: Tree, **extra: Any) -> Any:
    return queries.show(str(tree.ws), tree.settings(**extra))


def check(tree: Tree, **extra: Any) -> list[Diagnostic]:
    return queries.check(str(tree.ws), tree.settings(**extra))


ABS_PATH = re.compile(r"(?<![\w.~<-])/(?:[\w.@+-]+/?)+")


def foreign_paths(text: str, *allowed: Path) -> list[str]:
    """Absolute paths in `text` that lie outside every allowed folder."""
    roots = [str(a) for a in allowed]
    return [m for m in ABS_PATH.findall(text)
            if not any(m == r or m.startswith(r + "/") for r in roots)]


# --- symlinks ------------------------------------------------------------------------------


@needs_cli
def test_symlink_loop_between_folders(tree: Tree) -> None:
    tree.write("GEMINI.md", "Top @./self\n")
    tree.write("a/GEMINI.md", "A mem\n")
    tree.write("b/GEMINI.md", "B mem\n")
    os.symlink("../b", tree.ws / "a" / "to_b")
    os.symlink("../a", tree.ws / "b" / "to_a")
    os.symlink("self", tree.ws / "self")  # a symlink to itself: ELOOP
    top = tree.p("GEMINI.md")
    eloop = f"ELOOP: too many symbolic links encountered, access '{tree.p('self')}'"
    top_text = f"Top {failed('./self', eloop)}"

    # Classic mode without a folder budget: the loop is not followed (Dirents of symlinks are
    # not folders), so each file is found exactly once.
    started = time.monotonic()
    load = MemoryEngine(tree.settings(jit_context=False, discovery_max_dirs=-1)).load(
        str(tree.ws))
    assert time.monotonic() - started < 5
    assert load.paths == [top, tree.p("a/GEMINI.md"), tree.p("b/GEMINI.md")]
    code, out, _, _ = run_cli("show", str(tree.ws), "--home", str(tree.home), "--mode",
                              "classic", "--max-dirs", "-1")
    assert code == 0
    assert out == project(block(top, top_text), block(tree.p("a/GEMINI.md"), "A mem"),
                          block(tree.p("b/GEMINI.md"), "B mem")) + "\n"

    diags = check(tree)
    assert spans(diags) == [("GEMINI.md", 1, 5, 1, 12, "import-unreadable")]
    assert diags[0].message == "Import cannot be read: ./self"
    assert (diags[0].detail or "").endswith(f"Gemini CLI embeds: {failed('./self', eloop)}")

    # Just in time, a path that runs round the loop loads a/ and b/ once each (by inode),
    # under the lexical paths Gemini CLI would use, and nothing on the second touch.
    entries = cli_json("jit", "--cwd", str(tree.ws), "--home", str(tree.home), "--json",
                       "a/to_b/to_a/to_b/x.md", "b/to_a/y.md")
    assert [e["files"] for e in entries] == [
        [tree.p("a/GEMINI.md"), tree.p("a/to_b/GEMINI.md")], []]
    assert entries[0]["context"] == (
        "\n\n--- Newly Discovered Project Context ---\n"
        + block(tree.p("a/GEMINI.md"), "A mem") + "\n\n"
        + block(tree.p("a/to_b/GEMINI.md"), "B mem")
        + "\n--- End Project Context ---")


@needs_cli
def test_symlink_to_filesystem_root_is_not_walked(tree: Tree) -> None:
    outside = tree.base / "outside"
    tree.write("GEMINI.md", "OUTSIDE-SECRET", under=outside)
    tree.write("GEMINI.md", "Top\n")
    tree.write("docs/GEMINI.md", "Docs\n")
    os.symlink("/", tree.ws / "rootlink")
    os.symlink(str(outside), tree.ws / "docs" / "outlink")

    engine = MemoryEngine(tree.settings(jit_context=False, discovery_max_dirs=-1))
    found, report = engine.downward_search(str(tree.ws), "GEMINI.md", None, None)
    assert found == [tree.p("GEMINI.md"), tree.p("docs/GEMINI.md")]
    assert report.scanned == 3  # ws, ws/.git, ws/docs: neither link is entered
    assert report.unreadable == []

    expected = project(block(tree.p("GEMINI.md"), "Top"), block(tree.p("docs/GEMINI.md"),
                                                                "Docs"))
    for mode in ("classic", "jit"):
        code, out, err, elapsed = run_cli("show", str(tree.ws), "--home", str(tree.home),
                                          "--mode", mode, "--max-dirs", "-1", "--json")
        assert code == 0, err
        assert elapsed < 20
        result = json.loads(out)
        assert "OUTSIDE-SECRET" not in out
        assert foreign_paths(out, tree.ws, tree.home) == []
        if mode == "classic":
            assert result["files"] == [tree.p("GEMINI.md"), tree.p("docs/GEMINI.md")]
            assert result["content"] == expected
    for mode in ("classic", "jit"):
        code, out, err, elapsed = run_cli("check", str(tree.ws), "--home", str(tree.home),
                                          "--mode", mode, "--max-dirs", "-1", "--format",
                                          "json")
        assert (code, json.loads(out)) == (0, []), err
        assert elapsed < 20
    code, out, _, _ = run_cli("list", str(tree.ws), "--home", str(tree.home), "--mode",
                              "classic", "--max-dirs", "-1")
    assert code == 0
    assert foreign_paths(out, tree.ws, tree.home) == []


def test_symlinked_gemini_md_pointing_outside_is_shown_under_its_own_path(tree: Tree) -> None:
    outside = tree.base / "outside"
    tree.write("real.md", "Linked memory @./x.md\n", under=outside)
    tree.write("x.md", "OUTSIDE-X\n", under=outside)
    tree.write("x.md", "inside x\n")
    os.symlink(str(outside / "real.md"), tree.ws / "GEMINI.md")
    # A symlinked subfolder file is not a Dirent file: classic search skips it, as Gemini does.
    tree.write("sub/keep.md", "k\n")
    os.symlink(str(outside / "real.md"), tree.ws / "sub" / "GEMINI.md")

    # Gemini CLI reads through the link (fs.access/readFile follow it) and resolves imports
    # from the link's own folder (path.dirname is lexical): so does the preview.
    top = tree.p("GEMINI.md")
    expected = project(block(top, "Linked memory " + imported("./x.md", "inside x\n")))
    for jit in (True, False):
        result = show(tree, jit_context=jit)
        assert result.files == [top]
        assert result.content == expected
        assert "OUTSIDE-X" not in result.content
        assert str(outside) not in result.content


def test_symlinked_gemini_md_pointing_outside_gets_a_diagnostic(tree: Tree) -> None:
    outside = tree.base / "outside"
    tree.write("real.md", "Linked memory\n", under=outside)
    os.symlink(str(outside / "real.md"), tree.ws / "GEMINI.md")
    codes = {(os.path.basename(d.path), d.code) for d in check(tree)}
    assert ("GEMINI.md", "read-above-root") in codes


@needs_cli
def test_jit_through_symlink_leaving_the_workspace_loads_nothing(tree: Tree) -> None:
    outside = tree.base / "outside"
    tree.write("GEMINI.md", "OUTSIDE-SECRET\n", under=outside)
    tree.write("x.md", "x\n", under=outside)
    tree.write("GEMINI.md", "Top\n")
    os.symlink(str(outside), tree.ws / "outlink")
    entries = cli_json("jit", "--cwd", str(tree.ws), "--home", str(tree.home), "--json",
                       "outlink/x.md")
    assert "OUTSIDE-SECRET" not in entries[0]["context"]
    assert entries[0]["files"] == []


@needs_cli
def test_import_through_symlink_escaping_the_root_is_rejected(tree: Tree) -> None:
    outside = tree.base / "outside"
    tree.write("secret.md", "OUTSIDE-SECRET\n", under=outside)
    os.symlink(str(outside / "secret.md"), tree.ws / "link.md")
    os.symlink(str(outside), tree.ws / "dirlink")
    tree.write("inner.md", "inner\n")
    os.symlink("inner.md", tree.ws / "ok.md")  # a link that stays inside is fine
    tree.write("GEMINI.md", "A @./link.md\nB @./dirlink/secret.md\nC @./ok.md\n")
    top = tree.p("GEMINI.md")
    inner = imported("./ok.md", "inner\n")
    expected = project(block(top, (
        f"A {failed('./link.md', TRAVERSAL)}\nB {failed('./dirlink/secret.md', TRAVERSAL)}\n"
        f"C {inner}")))
    result = show(tree)
    assert result.content == expected
    assert spans(result.diagnostics) == [
        ("GEMINI.md", 1, 3, 1, 13, "import-outside-root"),
        ("GEMINI.md", 2, 3, 2, 23, "import-outside-root"),
    ]
    assert str(outside / "secret.md") in (result.diagnostics[0].detail or "")

    flat = show(tree, import_format="flat")
    assert "OUTSIDE-SECRET" not in flat.content
    assert [d.code for d in flat.diagnostics] == ["import-outside-root"] * 2

    code, out, _, _ = run_cli("show", str(tree.ws), "--home", str(tree.home))
    assert (code, out) == (0, expected + "\n")
    assert "OUTSIDE-SECRET" not in out


# --- permissions ------------------------------------------------------------------------


def _world_traversable(path: Path) -> bool:
    return all(folder.stat().st_mode & stat.S_IXOTH for folder in [path, *path.parents])


@pytest.fixture
def world_tree(tmp_path: Path) -> Iterator[Tree]:
    """A tree the unprivileged user can reach, for the permission tests.

    pytest's own tmp_path lives under a 0700 folder, so when it is not world-traversable the
    tree goes in a fresh 0755 temporary folder instead (removed afterwards).
    """
    if os.geteuid() != 0:
        pytest.skip("permission tests drop privileges from root to uid 65534; not root here")
    if SETPRIV is None:
        pytest.skip("setpriv is not available to run memlens as an unprivileged user")
    if not MEMLENS.exists():
        pytest.skip(f"{MEMLENS} is not installed")
    base = Path(os.path.realpath(tmp_path))
    made: Path | None = None
    if not _world_traversable(base):
        made = Path(os.path.realpath(tempfile.mkdtemp(prefix="memlens-hostile-")))
        made.chmod(0o755)
        base = made
        if not _world_traversable(base):
            shutil.rmtree(made)
            pytest.skip(f"no world-traversable temporary folder ({base} is not)")
    probe = subprocess.run([SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}",
                            "--clear-groups", str(MEMLENS), "--version"],
                           capture_output=True, timeout=CLI_TIMEOUT, check=False)
    if probe.returncode != 0:
        if made is not None:
            shutil.rmtree(made)
        pytest.skip("uid 65534 cannot run memlens from this virtualenv: "
                    + probe.stderr.decode(errors="replace").strip()[:200])
    work = base / "tree"
    work.mkdir()
    work.chmod(0o755)
    try:
        yield Tree(work)
    finally:
        for folder, dirs, files in os.walk(work):
            for name in dirs + files:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    os.chmod(path, 0o755)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


def _locked_tree(tree: Tree) -> None:
    tree.write("GEMINI.md", "Top @./locked/x.md @./open/deny.md\n")
    tree.write("locked/GEMINI.md", "LOCKED-MEMORY\n")
    tree.write("locked/x.md", "LOCKED-X\n")
    tree.write("open/deny.md", "DENIED\n")
    (tree.ws / "open" / "deny.md").chmod(0o000)
    (tree.ws / "locked").chmod(0o000)


def test_unreadable_folder_and_file(world_tree: Tree) -> None:
    tree = world_tree
    _locked_tree(tree)
    top = tree.p("GEMINI.md")

    def eacces(rel: str) -> str:
        return f"EACCES: permission denied, access '{tree.p(rel)}'"

    body = (f"Top {failed('./locked/x.md', eacces('locked/x.md'))}"
            f" {failed('./open/deny.md', eacces('open/deny.md'))}")
    expected = project(block(top, body)) + "\n"
    for mode in ("jit", "classic"):
        code, out, err, elapsed = run_cli("show", str(tree.ws), "--home", str(tree.home),
                                          "--mode", mode, "--max-dirs", "-1", as_nobody=True)
        assert (code, out) == (0, expected), err
        assert elapsed < 20
        code, out, err, _ = run_cli("check", str(tree.ws), "--home", str(tree.home), "--mode",
                                    mode, "--max-dirs", "-1", "--format", "json",
                                    as_nobody=True)
        assert code == 1, err
        assert wire_spans(json.loads(out)) == [
            ("GEMINI.md", 1, 5, 1, 19, "import-unreadable"),
            ("GEMINI.md", 1, 20, 1, 35, "import-unreadable"),
            ("locked", 1, 1, 1, 1, "folder-unreadable"),
        ]
    # Touching a file inside the locked folder loads nothing and does not fail.
    code, out, err, _ = run_cli("jit", "--cwd", str(tree.ws), "--home", str(tree.home),
                                "locked/x.md", as_nobody=True)
    assert (code, out) == (0, ""), err


def test_unreadable_folder_gets_a_diagnostic(world_tree: Tree) -> None:
    tree = world_tree
    tree.write("GEMINI.md", "Top\n")
    tree.write("locked/GEMINI.md", "LOCKED-MEMORY\n")
    (tree.ws / "locked").chmod(0o000)
    code, out, err, _ = run_cli("check", str(tree.ws), "--home", str(tree.home), "--mode",
                                "classic", "--format", "json", as_nobody=True)
    assert code in (0, 1), err
    assert any(tree.p("locked") in d["path"] or tree.p("locked") in d["message"]
               for d in json.loads(out))


# --- FIFOs and sockets ----------------------------------------------------------------------


def _bind_socket(path: Path) -> socket.socket:
    if len(os.fsencode(path)) >= 100:
        pytest.skip(f"socket path too long for AF_UNIX: {path}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    return sock


@needs_cli
def test_fifo_import_target_never_blocks(tree: Tree) -> None:
    os.mkfifo(tree.ws / "pipe.md")
    tree.write("GEMINI.md", "See @./pipe.md now\n")
    top = tree.p("GEMINI.md")
    enxio = f"ENXIO: no such device or address, open '{tree.p('pipe.md')}'"
    expected = project(block(top, f"See {failed('./pipe.md', enxio)} now"))
    for fmt in ("tree", "flat"):
        for jit in (True, False):
            load = MemoryEngine(tree.settings(import_format=fmt, jit_context=jit)).load(
                str(tree.ws))
            assert [f.path for f in load.files] == [top]
    assert show(tree).content == expected
    diags = check(tree)
    assert spans(diags) == [("GEMINI.md", 1, 5, 1, 15, "import-unreadable")]
    assert "not a regular file" in diags[0].message

    code, out, _, elapsed = run_cli("show", str(tree.ws), "--home", str(tree.home))
    assert (code, out) == (0, expected + "\n")
    assert elapsed < 20
    code, out, _, _ = run_cli("check", ".", "--home", str(tree.home), "--mode", "classic",
                              cwd=tree.ws)
    assert code == 1
    assert out.startswith("GEMINI.md:1:5: error[import-unreadable] Import is not a regular "
                          f"file: ./pipe.md — {tree.p('pipe.md')} is not a regular file")


@needs_cli
def test_fifo_named_gemini_md_never_blocks(tree: Tree) -> None:
    os.mkfifo(tree.ws / "GEMINI.md")
    (tree.ws / "sub").mkdir()
    os.mkfifo(tree.ws / "sub" / "GEMINI.md")
    tree.write("sub/other/GEMINI.md", "Other\n")
    top = tree.p("GEMINI.md")
    for jit in (True, False):
        load = MemoryEngine(tree.settings(jit_context=jit, discovery_max_dirs=-1)).load(
            str(tree.ws))
        # Gemini CLI gets no content from it; its classic search lists it (fs.access
        # succeeds), its JIT refresh lists only the files it read.
        assert (top in load.paths) is not jit
        assert load.file_count == (0 if jit else 1)
        assert load.files[0].path == top and load.files[0].content is None
    assert show(tree).content == ""
    for mode in ("jit", "classic"):
        code, out, err, elapsed = run_cli("show", str(tree.ws), "--home", str(tree.home),
                                          "--mode", mode, "--json")
        assert code == 0, err
        assert elapsed < 20
        assert (top in json.loads(out)["files"]) is (mode == "classic")
        code, _, err, _ = run_cli("check", str(tree.ws), "--home", str(tree.home), "--mode",
                                  mode)
        assert code in (0, 1), err
    code, _, err, elapsed = run_cli("check", top, "--home", str(tree.home))
    assert code in (0, 1), err
    assert elapsed < 20
    # Touching the folder of the second FIFO: nothing new that can be read, no hang.
    entries = cli_json("jit", "--cwd", str(tree.ws), "--home", str(tree.home), "--json",
                       "sub/x.md", "sub/other/y.md")
    assert [e["files"] for e in entries] == [[], [tree.p("sub/other/GEMINI.md")]]


@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_special_gemini_md_gets_a_diagnostic(tree: Tree, kind: str) -> None:
    sock = None
    if kind == "fifo":
        os.mkfifo(tree.ws / "GEMINI.md")
    else:
        sock = _bind_socket(tree.ws / "GEMINI.md")
    try:
        found = [(os.path.basename(d.path), d.line, d.col, d.code) for d in check(tree)]
    finally:
        if sock is not None:
            sock.close()
    assert ("GEMINI.md", 1, 1, "file-unreadable") in found


@needs_cli
def test_socket_file_as_import_target(tree: Tree) -> None:
    sock = _bind_socket(tree.ws / "s.md")
    try:
        tree.write("GEMINI.md", "x @./s.md\n")
        top = tree.p("GEMINI.md")
        enxio = f"ENXIO: no such device or address, open '{tree.p('s.md')}'"
        assert show(tree).content == project(block(top, f"x {failed('./s.md', enxio)}"))
        code, out, _, _ = run_cli("check", str(tree.ws), "--home", str(tree.home),
                                  "--format", "json")
        assert code == 1
        assert wire_spans(json.loads(out)) == [("GEMINI.md", 1, 3, 1, 10,
                                                "import-unreadable")]
        # A socket in a subfolder is not a memory file and not a folder: the search skips it.
        found, _ = MemoryEngine(tree.settings()).downward_search(str(tree.ws), "s.md", None,
                                                                 None)
        assert found == []
    finally:
        sock.close()


# --- huge files ------------------------------------------------------------------------------


def _write_big(path: Path, line: bytes, size: int) -> None:
    with path.open("wb") as out:
        chunk = line * (1024 * 1024 // len(line))
        written = 0
        while written < size:
            out.write(chunk)
            written += len(chunk)


@needs_cli
def test_30mb_memory_file(tree: Tree) -> None:
    _write_big(tree.ws / "GEMINI.md", b"line of memory text\n", MB30)
    top = tree.p("GEMINI.md")
    limit = 100_000
    header = f"--- Project ---\n--- Context from: {top} ---\n"
    body = "line of memory text\n" * (limit // 20 + 1)
    expected = (header + body)[:limit] + TRUNCATION_NOTE.format(limit=limit) + "\n"
    code, out, err, elapsed = run_cli("show", str(tree.ws), "--home", str(tree.home),
                                      "--max-context-chars", str(limit))
    assert (code, out) == (0, expected), err
    assert elapsed < 20
    code, out, err, elapsed = run_cli("check", str(tree.ws), "--home", str(tree.home),
                                      "--max-context-chars", str(limit), "--format", "json")
    assert code == 0, err
    assert elapsed < 20
    items = json.loads(out)
    assert wire_spans(items) == [("GEMINI.md", 1, 1, 1, 20, "context-truncated"),
                                 ("GEMINI.md", 1, 1, 1, 20, "file-too-large")]
    assert items[1]["message"].startswith(f"{tree.ws.joinpath('GEMINI.md').stat().st_size:,} "
                                          "bytes")

    # With the default limit (4,000,000) the engine reads a bounded prefix and stops there.
    started = time.monotonic()
    result = show(tree)
    assert time.monotonic() - started < 20
    assert result.truncated
    assert len(result.content) == 4_000_000 + len(TRUNCATION_NOTE.format(limit=4_000_000))
    assert result.content.startswith(header + "line of memory text\n")


@needs_cli
def test_30mb_import_target(tree: Tree) -> None:
    _write_big(tree.ws / "huge.md", b"x" * 64, MB30)
    tree.write("GEMINI.md", "Head @./huge.md tail\n")
    top = tree.p("GEMINI.md")
    limit = 100_000
    start = (f"--- Project ---\n--- Context from: {top} ---\n"
             "Head <!-- Imported from: ./huge.md -->\n")
    expected = (start + "x" * limit)[:limit] + TRUNCATION_NOTE.format(limit=limit) + "\n"
    code, out, err, elapsed = run_cli("show", str(tree.ws), "--home", str(tree.home),
                                      "--max-context-chars", str(limit))
    assert (code, out) == (0, expected), err
    assert elapsed < 20
    code, out, err, _ = run_cli("check", str(tree.ws), "--home", str(tree.home),
                                "--max-context-chars", str(limit), "--format", "json")
    assert code == 0, err
    assert ("GEMINI.md", 1, 1, 1, 21, "context-truncated") in wire_spans(json.loads(out))

    started = time.monotonic()
    result = show(tree)
    assert time.monotonic() - started < 20
    assert result.truncated
    assert len(result.content) == 4_000_000 + len(TRUNCATION_NOTE.format(limit=4_000_000))
    for fmt in ("flat", "tree"):
        codes = {d.code for d in check(tree, import_format=fmt, max_context_chars=limit)}
        assert "context-truncated" in codes


def test_30mb_import_target_is_reported_too_large(tree: Tree) -> None:
    _write_big(tree.ws / "huge.md", b"x" * 64, MB30)
    tree.write("GEMINI.md", "Head @./huge.md tail\n")
    found = [(os.path.basename(d.path), d.code) for d in check(tree, max_context_chars=100_000)]
    assert ("huge.md", "file-too-large") in found or ("GEMINI.md", "file-too-large") in found


# --- encodings and line endings --------------------------------------------------------------


@needs_cli
def test_binary_file_import(tree: Tree) -> None:
    data = bytes(range(256))
    tree.write("blob.bin", data)
    tree.write("GEMINI.md", "bin @./blob.bin end\n")
    top = tree.p("GEMINI.md")
    decoded = data.decode("utf-8", "replace")
    assert decoded.count("\ufffd") == 128
    expected = project(block(top, f"bin {imported('./blob.bin', decoded)} end"))
    result = show(tree)
    assert result.content == expected
    assert spans(result.diagnostics) == [("GEMINI.md", 1, 5, 1, 16, "import-unreadable")]
    assert "binary data" in result.diagnostics[0].message
    code, out, _, _ = run_cli("show", str(tree.ws), "--home", str(tree.home))
    assert (code, out) == (0, expected + "\n")
    code, _, _, _ = run_cli("check", str(tree.ws), "--home", str(tree.home))
    assert code == 1


def test_binary_memory_file(tree: Tree) -> None:
    tree.write("GEMINI.md", b"\x00\x01\x02 raw \xff binary\n")
    top = tree.p("GEMINI.md")
    result = show(tree)
    assert result.content == project(block(top, "\x00\x01\x02 raw \ufffd binary"))
    assert spans(result.diagnostics) == [("GEMINI.md", 1, 1, 1, 17, "file-unreadable")]
    assert "binary data" in result.diagnostics[0].message


@needs_cli
def test_invalid_utf8(tree: Tree) -> None:
    tree.write("GEMINI.md", b"bad \xff\xfe bytes @./a.md \xe2\x82x\nline two\n")
    tree.write("a.md", b"A \xc3( \xed\xa0\x80 \xf0\x9f\x98\n")
    top = tree.p("GEMINI.md")
    # Node's decoder and Python's 'replace' both substitute one U+FFFD per maximal bad part.
    inner = "A \ufffd( \ufffd\ufffd\ufffd \ufffd\n"
    expected = project(block(top, f"bad \ufffd\ufffd bytes {imported('./a.md', inner)} "
                                  "\ufffdx\nline two"))
    result = show(tree)
    assert result.content == expected
    assert spans(result.diagnostics) == [
        ("GEMINI.md", 1, 1, 1, 24, "file-unreadable"),
        ("GEMINI.md", 1, 14, 1, 21, "import-unreadable"),
    ]
    assert [d.severity for d in result.diagnostics] == ["error", "error"]
    assert "invalid UTF-8" in result.diagnostics[1].message
    code, out, _, _ = run_cli("show", str(tree.ws), "--home", str(tree.home))
    assert (code, out) == (0, expected + "\n")


@needs_cli
def test_bom_file(tree: Tree) -> None:
    bom = "\ufeff"
    tree.write("GEMINI.md", f"{bom}@./a.md first @./nope.md\r\nsecond @./a.md\n")
    tree.write("a.md", f"{bom}A with bom\n")
    top = tree.p("GEMINI.md")
    enoent = f"ENOENT: no such file or directory, access '{tree.p('nope.md')}'"
    # The BOM hides the first import (it is not whitespace to the scanner) and then goes the
    # way of String.prototype.trim; an imported file's BOM is kept (imports are not trimmed).
    expected = project(block(top, f"@./a.md first {failed('./nope.md', enoent)}\r\nsecond "
                                  + imported("./a.md", f"{bom}A with bom\n")))
    result = show(tree)
    assert result.content == expected
    # Columns do not count the BOM (editors do not show it).
    assert spans(result.diagnostics) == [
        ("GEMINI.md", 1, 1, 1, 25, "import-in-prose"),
        ("GEMINI.md", 1, 15, 1, 25, "import-not-found"),
    ]
    assert "byte-order mark" in result.diagnostics[0].message
    code, out, _, _ = run_cli("show", str(tree.ws), "--home", str(tree.home))
    assert (code, out) == (0, expected + "\n")


@needs_cli
def test_crlf_files(tree: Tree) -> None:
    tree.write("GEMINI.md", "Line one\r\n@./a.md\r\n  see @./b.md\r\n@./missing.md\r\nend\r\n")
    tree.write("a.md", "A1\r\nA2\r\n")
    tree.write("b.md", "B @./c.md\r\n")
    tree.write("c.md", "C\r\n")
    top = tree.p("GEMINI.md")
    enoent = f"ENOENT: no such file or directory, access '{tree.p('missing.md')}'"
    expected = project(block(top, (
        "Line one\r\n" + imported("./a.md", "A1\r\nA2\r\n") + "\r\n  see "
        + imported("./b.md", "B " + imported("./c.md", "C\r\n") + "\r\n") + "\r\n"
        + failed("./missing.md", enoent) + "\r\nend")))
    result = show(tree)
    assert result.content == expected
    assert spans(result.diagnostics) == [("GEMINI.md", 4, 1, 4, 14, "import-not-found")]
    code, out, _, _ = run_cli("show", str(tree.ws), "--home", str(tree.home))
    assert (code, out) == (0, expected + "\n")
    code, out, _, _ = run_cli("check", ".", "--home", str(tree.home), cwd=tree.ws)
    assert code == 1
    assert out.startswith("GEMINI.md:4:1: error[import-not-found] Import not found: "
                          f"./missing.md — {tree.p('missing.md')} does not exist.")

    flat = show(tree, import_format="flat")
    ws = str(tree.ws)
    assert flat.content == project(block(top, "\n\n".join([
        f"--- File: {ws} ---\nLine one\r\n@./a.md\r\n  see @./b.md\r\n@./missing.md\r\nend"
        f"\n--- End of File: {ws} ---",
        f"--- File: {tree.p('b.md')} ---\nB @./c.md\n--- End of File: {tree.p('b.md')} ---",
        f"--- File: {tree.p('c.md')} ---\nC\n--- End of File: {tree.p('c.md')} ---",
        f"--- File: {tree.p('a.md')} ---\nA1\r\nA2\n--- End of File: {tree.p('a.md')} ---",
    ])))


# --- import graphs -------------------------------------------------------------------------------

MAX_DEPTH = 5


def _raw(label: str, imports: list[str]) -> str:
    return " ".join([label, *(f"@./{name}" for name in imports)]) + "\n"


def reference_tree(graph: dict[str, list[str]], name: str, depth: int = 0,
                   processed: frozenset[str] = frozenset()) -> str:
    """Gemini CLI's tree format (behaviour.md §4) for files written by `_raw`."""
    imports = graph[name]
    label = name.removesuffix(".md")
    if depth >= MAX_DEPTH or not imports:
        return _raw(label, imports)
    parts = [label]
    for child in imports:
        if child in processed:
            parts.append(f"<!-- File already processed: ./{child} -->")
        else:
            parts.append(imported(f"./{child}", reference_tree(graph, child, depth + 1,
                                                               processed | {child})))
    return " ".join(parts) + "\n"


def reference_flat(graph: dict[str, list[str]], root: str, folder: str) -> str:
    """Gemini CLI's flat format: DFS, imports in reverse order, each file once."""
    order: list[tuple[str, str]] = []
    seen: set[str] = set()
    stack = [(root, folder)]
    while stack:
        name, shown = stack.pop()
        if shown in seen:
            continue
        seen.add(shown)
        order.append((shown, _raw(name.removesuffix(".md"), graph[name]).strip()))
        # Reverse order of appearance, depth first: push so the last import pops first.
        stack.extend((child, f"{folder}/{child}") for child in graph[name])
    return "\n\n".join(f"--- File: {p} ---\n{c}\n--- End of File: {p} ---" for p, c in order)


def _write_graph(tree: Tree, graph: dict[str, list[str]]) -> None:
    for name, imports in graph.items():
        tree.write(name, _raw(name.removesuffix(".md"), imports))


@needs_cli
def test_3000_deep_import_chain_tree_format(tree: Tree) -> None:
    n = 3000
    graph = {"GEMINI.md": ["c1.md"]} | {
        f"c{i}.md": [f"c{i + 1}.md"] if i < n else [] for i in range(1, n + 1)}
    _write_graph(tree, graph)
    top = tree.p("GEMINI.md")
    expected = project(block(top, reference_tree(graph, "GEMINI.md").strip()))
    assert expected.count("<!-- Imported from:") == MAX_DEPTH
    assert "c5 @./c6.md\n" in expected
    started = time.monotonic()
    result = show(tree)
    assert result.content == expected
    # Only the `@` left literal by the depth limit is reported, on its exact range.
    assert spans(result.diagnostics) == [("c5.md", 1, 4, 1, 12, "import-too-deep")]
    assert "import depth 5" in result.diagnostics[0].message
    assert spans(check(tree)) == spans(result.diagnostics)
    assert time.monotonic() - started < 10

    code, out, err, elapsed = run_cli("check", str(tree.ws), "--home", str(tree.home),
                                      "--format", "json")
    assert code == 0, err
    assert wire_spans(json.loads(out)) == [("c5.md", 1, 4, 1, 12, "import-too-deep")]
    assert elapsed < 20


@needs_cli
def test_3000_deep_import_chain_flat_format(tree: Tree) -> None:
    n = 3000
    graph = {"GEMINI.md": ["c1.md"]} | {
        f"c{i}.md": [f"c{i + 1}.md"] if i < n else [] for i in range(1, n + 1)}
    _write_graph(tree, graph)
    top = tree.p("GEMINI.md")
    # Flat mode has no depth limit in Gemini CLI: all 3,000 files, once each, in chain order,
    # and no RecursionError on our side.
    expected = project(block(top, reference_flat(graph, "GEMINI.md", str(tree.ws))))
    started = time.monotonic()
    result = show(tree, import_format="flat")
    assert result.content == expected
    assert result.content.count("--- File: ") == n + 1
    assert result.diagnostics == []
    assert check(tree, import_format="flat") == []
    assert time.monotonic() - started < 20
    code, out, err, elapsed = run_cli("show", str(tree.ws), "--home", str(tree.home),
                                      "--import-format", "flat")
    assert (code, out) == (0, expected + "\n"), err
    assert elapsed < 20


def _bomb(levels: int) -> dict[str, list[str]]:
    def row(level: int) -> list[str]:
        return [f"l{level}{c}.md" for c in "abc"] if level <= levels else []

    graph = {"GEMINI.md": row(1)}
    for level in range(1, levels + 1):
        for c in "abc":
            graph[f"l{level}{c}.md"] = row(level + 1)
    return graph


@needs_cli
def test_import_bomb_tree_format(tree: Tree) -> None:
    levels = 8
    graph = _bomb(levels)
    _write_graph(tree, graph)
    top = tree.p("GEMINI.md")
    expected = project(block(top, reference_tree(graph, "GEMINI.md").strip()))
    # Three imports per level, five levels expanded: 3 + 9 + 27 + 81 + 243 inclusions.
    assert expected.count("<!-- Imported from:") == 363
    started = time.monotonic()
    result = show(tree)
    assert time.monotonic() - started < 10
    assert result.content == expected
    assert len(result.content) < 50_000
    found = Counter((os.path.basename(d.path), d.code) for d in result.diagnostics)
    diamonds = [f"l{lv}{c}.md" for lv in range(1, 5) for c in "abc"][1:]
    assert found == Counter({**{(f, "import-diamond"): 3 for f in diamonds},
                             **{(f"l5{c}.md", "import-too-deep"): 3 for c in "abc"}})
    assert {(d.line, d.col, d.end_line, d.end_col) for d in result.diagnostics} == {
        (1, 5, 1, 14), (1, 15, 1, 24), (1, 25, 1, 34)}
    assert {d.severity for d in result.diagnostics if d.code == "import-diamond"} == {"info"}

    code, out, err, elapsed = run_cli("show", str(tree.ws), "--home", str(tree.home))
    assert (code, out) == (0, expected + "\n"), err
    assert elapsed < 20


def test_import_bomb_flat_format(tree: Tree) -> None:
    graph = _bomb(8)
    _write_graph(tree, graph)
    top = tree.p("GEMINI.md")
    result = show(tree, import_format="flat")
    assert result.content == project(block(top, reference_flat(graph, "GEMINI.md",
                                                               str(tree.ws))))
    assert result.content.count("--- File: ") == 1 + 3 * 8


def test_import_bomb_flat_format_reports_no_cycle(tree: Tree) -> None:
    _write_graph(tree, _bomb(3))
    codes = Counter(d.code for d in show(tree, import_format="flat").diagnostics)
    assert codes["import-cycle"] == 0


@needs_cli
def test_import_cycles(tree: Tree) -> None:
    tree.write("GEMINI.md", "Root @./a.md @./self.md\n")
    tree.write("a.md", "A @./b.md\n")
    tree.write("b.md", "B @./a.md\n")
    tree.write("self.md", "S @./self.md\n")
    top = tree.p("GEMINI.md")
    # The report comes one level late (the root is not in the processed set).
    expected = project(block(top, (
        "Root " + imported("./a.md", "A " + imported(
            "./b.md", "B <!-- File already processed: ./a.md -->\n") + "\n")
        + " " + imported("./self.md", "S <!-- File already processed: ./self.md -->\n"))))
    result = show(tree)
    assert result.content == expected
    assert spans(result.diagnostics) == [
        ("b.md", 1, 3, 1, 10, "import-cycle"),
        ("self.md", 1, 3, 1, 13, "import-cycle"),
    ]
    assert "GEMINI.md → a.md → b.md → a.md" in result.diagnostics[0].message
    code, out, _, _ = run_cli("check", str(tree.ws), "--home", str(tree.home), "--format",
                              "json")
    assert code == 0
    assert wire_spans(json.loads(out)) == spans(result.diagnostics)

    # Through the root file itself: Gemini CLI includes GEMINI.md once more, then stops.
    tree.write("GEMINI.md", "Root @./back.md\n")
    tree.write("back.md", "Back @./GEMINI.md\n")
    result = show(tree)
    assert result.content == project(block(top, "Root " + imported(
        "./back.md", "Back " + imported(
            "./GEMINI.md", "Root <!-- File already processed: ./back.md -->\n") + "\n")))
    assert spans(result.diagnostics) == [("back.md", 1, 6, 1, 18, "import-cycle")]


@needs_cli
def test_imports_of_system_files_are_refused(tree: Tree) -> None:
    # Enough `..` to climb from the workspace to / whatever the temporary folder's depth.
    climb = "../" * len(tree.ws.parts) + "etc/passwd"
    tree.write("GEMINI.md", f"A @../../../etc/passwd\nB @/etc/passwd\nC @{climb}\n")
    tree.write("sub/GEMINI.md", "D @../../etc/passwd\n")
    top = tree.p("GEMINI.md")
    expected_top = block(top, (
        f"A {failed('../../../etc/passwd', TRAVERSAL)}\nB {failed('/etc/passwd', TRAVERSAL)}\n"
        f"C {failed(climb, TRAVERSAL)}"))
    assert show(tree).content == project(expected_top)
    diags = check(tree)
    assert spans(diags) == [
        ("GEMINI.md", 1, 3, 1, 23, "import-outside-root"),
        ("GEMINI.md", 2, 3, 2, 15, "import-outside-root"),
        ("GEMINI.md", 3, 3, 3, 4 + len(climb), "import-outside-root"),
        ("GEMINI.md", 1, 3, 1, 20, "import-outside-root"),
    ]
    assert diags[0].message == "Import outside the project root: ../../../etc/passwd"
    assert (diags[0].detail or "").startswith(
        f"`@../../../etc/passwd` resolves to {tree.base.parent.parent / 'etc' / 'passwd'}, "
        "outside the import root")
    assert (diags[1].detail or "").startswith("`@/etc/passwd` resolves to /etc/passwd, outside")
    assert (diags[2].detail or "").startswith(f"`@{climb}` resolves to /etc/passwd, outside")
    passwd = Path("/etc/passwd")
    secret_lines = [ln for ln in passwd.read_text(errors="replace").splitlines() if ln][:3] \
        if passwd.exists() else []
    for mode in ("jit", "classic"):
        for fmt in ("tree", "flat"):
            code, out, err, _ = run_cli("show", str(tree.ws), "--home", str(tree.home),
                                        "--mode", mode, "--import-format", fmt, "--json")
            assert code == 0, err
            for line in secret_lines:
                assert line not in out
    code, out, _, _ = run_cli("check", str(tree.ws), "--home", str(tree.home), "--format",
                              "json")
    assert code == 1
    assert wire_spans(json.loads(out)) == spans(diags)


@needs_cli
def test_url_imports(tree: Tree) -> None:
    tree.write("GEMINI.md", "See @https://example.com/x.md and\n@http://example.com/y.md "
                            "@file:///etc/passwd\n")
    top = tree.p("GEMINI.md")
    expected = project(block(top, (
        f"See {failed('https://example.com/x.md', TRAVERSAL)} and\n"
        f"{failed('http://example.com/y.md', TRAVERSAL)} "
        f"{failed('file:///etc/passwd', TRAVERSAL)}")))
    result = show(tree)
    assert result.content == expected
    assert spans(result.diagnostics) == [
        ("GEMINI.md", 1, 5, 1, 30, "import-url"),
        ("GEMINI.md", 2, 1, 2, 25, "import-url"),
        ("GEMINI.md", 2, 26, 2, 45, "import-url"),
    ]
    code, out, _, _ = run_cli("check", str(tree.ws), "--home", str(tree.home), "--format",
                              "github")
    assert code == 1
    assert out.splitlines()[0].startswith(
        f"::error file={top},line=1,col=5,endLine=1,endColumn=30,title=import-url::")
