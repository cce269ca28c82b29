"""What `memlens` shows only on a terminal (issue 33): the progress line on stderr for check,
report and diff, and check's severities in colour (NO_COLOR respected). The terminal is a
pseudo-terminal (`os.openpty`); piped, as every other test runs it, neither appears.

`MEMLENS_PROGRESS_AFTER=0` draws the line at once: no test waits for it."""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
from pathlib import Path

import pytest

from memlens.cli.tty import CLEAR, Progress

from .conftest import build_tree
from .test_cli import _SCRUBBED, MEMLENS
from .test_diff_cli import git


def _terminal_run(*args: str, cwd: Path, home: Path, tty_out: bool, tty_err: bool,
                  env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """memlens with stdout and/or stderr on a pseudo-terminal (else a pipe): the exit
    status and what each received (a terminal's \\r\\n read back as \\n)."""
    environ = {k: v for k, v in os.environ.items() if k not in (*_SCRUBBED, "NO_COLOR")}
    environ.update({"HOME": str(home), "GEMINI_CLI_HOME": str(home),
                    "MEMLENS_PROGRESS_AFTER": "0", "TMPDIR": str(home.parent / "tmp"),
                    **(env or {})})
    ends: dict[str, tuple[int, int] | None] = {
        "out": os.openpty() if tty_out else None, "err": os.openpty() if tty_err else None}
    proc = subprocess.Popen(
        [str(MEMLENS), *args], cwd=cwd, env=environ, stdin=subprocess.DEVNULL,
        stdout=ends["out"][1] if ends["out"] else subprocess.PIPE,
        stderr=ends["err"][1] if ends["err"] else subprocess.PIPE)
    readers = {name: pair[0] if pair else getattr(proc, f"std{name}").fileno()
               for name, pair in ends.items()}
    for pair in ends.values():
        if pair:
            os.close(pair[1])  # the child holds its own copy: EOF when it exits
    got = {name: b"" for name in readers}
    open_fds = dict(readers)
    while open_fds:
        ready, _, _ = select.select(list(open_fds.values()), [], [], 60)
        assert ready, "memlens printed nothing for 60 s"
        for name, fd in list(open_fds.items()):
            if fd not in ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # a pseudo-terminal whose other end closed
                chunk = b""
            if chunk:
                got[name] += chunk
            else:
                del open_fds[name]
    code = proc.wait(timeout=60)
    for pair in ends.values():
        if pair:
            os.close(pair[0])
    text = {k: v.decode("utf-8", "replace").replace("\r\n", "\n") for k, v in got.items()}
    return code, text["out"], text["err"]


def _drained(main: int, other: int) -> str:
    """Everything written to the pseudo-terminal `other`, read from `main` once `other` is
    closed (a single read may return only the first chunk the terminal passed on)."""
    os.close(other)
    data = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the other end closed and nothing is left
            break
        if not chunk:
            break
        data += chunk
    os.close(main)
    return data.decode()


@pytest.fixture
def warned(root: Path) -> Path:
    build_tree(root, {"home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
                      "tmp": None, "proj/.git": None, "proj/GEMINI.md": "ask @user\n"})
    return root


def test_check_progress_on_a_terminal_stderr_only(warned: Path) -> None:
    code, out, err = _terminal_run("check", "proj", "--agent", "gemini", cwd=warned,
                                   home=warned / "home", tty_out=False, tty_err=True)
    assert code == 0
    assert CLEAR + "memlens check: " in err
    assert "Gemini CLI in proj (1 of 1 agents)" in err
    # Erased before the summary line: the terminal's last line is the summary alone.
    assert err.rsplit(CLEAR, 1)[1] == "memlens: 0 error(s), 1 warning(s), 0 info(s) (Gemini CLI)\n"
    # stdout is piped: the diagnostics are plain, no colour.
    assert out.startswith("proj/GEMINI.md:1:5: warning[import-in-prose] ")


def test_check_severities_in_colour_on_a_terminal(warned: Path) -> None:
    code, out, err = _terminal_run("check", "proj", "--agent", "gemini", cwd=warned,
                                   home=warned / "home", tty_out=True, tty_err=False)
    assert code == 0
    assert out.startswith("proj/GEMINI.md:1:5: \x1b[33mwarning[import-in-prose]\x1b[0m ")
    assert "\r" not in err and "\x1b" not in err  # stderr piped: no progress line


def test_no_color_turns_colour_off(warned: Path) -> None:
    _, out, _ = _terminal_run("check", "proj", "--agent", "gemini", cwd=warned,
                              home=warned / "home", tty_out=True, tty_err=True,
                              env={"NO_COLOR": "1"})
    assert out.startswith("proj/GEMINI.md:1:5: warning[import-in-prose] ")
    assert "\x1b[3" not in out


def test_piped_there_is_neither(warned: Path) -> None:
    code, out, err = _terminal_run("check", "proj", "--agent", "gemini", cwd=warned,
                                   home=warned / "home", tty_out=False, tty_err=False)
    assert code == 0
    assert "\x1b" not in out + err and "\r" not in out + err


def test_report_and_diff_progress_on_a_terminal(warned: Path) -> None:
    repo = warned / "proj"
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "one")
    (repo / "GEMINI.md").write_text("Be brief.\n")
    home = warned / "home"
    code, out, err = _terminal_run("diff", "--agent", "gemini@0.44+", cwd=repo, home=home,
                                   tty_out=False, tty_err=True)
    assert code == 1, err
    assert CLEAR + "memlens diff: copying what the agents can read at HEAD" in err
    assert err.rsplit(CLEAR, 1)[1].startswith("memlens: HEAD → working tree changes ")
    assert "\n+Be brief." in out
    code, out, err = _terminal_run("report", ".", "--agent", "gemini", cwd=repo, home=home,
                                   tty_out=False, tty_err=True)
    assert code == 0, err
    assert CLEAR + "memlens report: every memory file × every agent in " in err
    json.loads(out)


# --- the Progress line itself -----------------------------------------------------------------

def test_progress_writes_nothing_to_a_pipe() -> None:
    stream = io.StringIO()  # not a terminal
    with Progress("check", stream) as progress:
        progress.step("Gemini CLI in .")
    assert stream.getvalue() == "" and not progress.active


def test_progress_redraws_one_line_and_erases_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMLENS_PROGRESS_AFTER", "0")
    main, other = os.openpty()
    with (open(other, "w", closefd=False) as terminal,
          Progress("check", terminal) as progress):
        progress.step("first\x1b]0;title\x07")  # a name from the disk: escaped
        progress.step("second")
    data = _drained(main, other)
    # The seconds so far end each drawing (a loaded machine may count one or two).
    assert re.match(re.escape(CLEAR + "memlens check:  … ") + r"\d+ s", data)
    assert re.search(re.escape(CLEAR + "memlens check: first\\e]0;title\\x07 … ") + r"\d+ s",
                     data)
    assert re.search(re.escape(CLEAR + "memlens check: second … ") + r"\d+ s", data)
    assert "\n" not in data and "\x07" not in data and "\x1b]" not in data
    assert data.endswith(CLEAR)  # erased at the end


def test_a_note_printed_meanwhile_erases_the_line_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setenv("MEMLENS_PROGRESS_AFTER", "0")
    main, other = os.openpty()
    with open(other, "w", closefd=False) as terminal:
        monkeypatch.setattr(sys, "stderr", terminal)
        with Progress("check") as progress:
            progress.step("working")
            print("memlens: note: something", file=sys.stderr)
        assert sys.stderr is terminal  # given back
    data = _drained(main, other).replace("\r\n", "\n")
    assert re.search(re.escape(CLEAR + "memlens check: working … ") + r"\d+ s"
                     + re.escape(CLEAR + "memlens: note: something\n"), data)
