"""OpenCode 1.18.33 against memlens's opencode profile (docs/reference.md "OpenCode"): the
instructions of its system message at start and the `<system-reminder>` its `read` tool result
ends with, byte for byte (``memlens show --agent opencode --json``'s ``payloads`` and
``memlens jit --agent opencode --json``'s)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tests.conformance.agents import PINNED, is_installed, run_agent
from tests.conformance.cases import Case, cases
from tests.conformance.conftest import Runs
from tests.conformance.predict import memlens
from tests.conformance.scenarios import build_tree


@pytest.mark.parametrize("case", cases("opencode", check="startup"))
def test_startup_instructions(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.capture.requests, outcome.capture.notes
    assert not outcome.capture.notes, outcome.capture.notes
    sent = [p.text for p in outcome.capture.startup]
    assert outcome.prediction["payloads"] == sent


@pytest.mark.parametrize("case", [c for c in cases("opencode", check="on-read")
                                  if c.values[0].scenario.read])
def test_after_read(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.capture.requests >= 2, outcome.capture.notes
    sent = [p.text for p in outcome.capture.on_read]
    assert outcome.prediction["jit_payloads"] == sent


@pytest.mark.conformance
@pytest.mark.parametrize("version", PINNED.get("opencode", ()))
def test_disable_claude_code(version: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENCODE_DISABLE_CLAUDE_CODE: no ~/.claude/CLAUDE.md, no CLAUDE.md in the chain (the
    next name, CONTEXT.md, wins), read from the environment by both."""
    if os.environ.get("MEMLENS_CONFORMANCE_REPLAY") == "1":
        pytest.skip("runs the agent live (MEMLENS_CONFORMANCE_REPLAY=1 compares goldens)")
    if not is_installed("opencode", version):
        pytest.skip(f"opencode@{version} is not installed (bash scripts/agents/install.sh)")
    with tempfile.TemporaryDirectory(prefix="memlens-opencode-") as folder:
        ws, home = Path(folder) / "ws", Path(folder) / "home"
        build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", ".git/objects": None,
                        ".git/refs": None, "CLAUDE.md": "C root\n", "CONTEXT.md": "X root\n",
                        "sub/CLAUDE.md": "C sub\n", "sub/x.txt": "x\n"})
        build_tree(home, {".claude/CLAUDE.md": "HOME claude\n"})
        capture = run_agent("opencode", version, ws, home, ".", "sub/x.txt",
                            name="opencode-disable-claude-code",
                            env={"OPENCODE_DISABLE_CLAUDE_CODE": "1"})
    monkeypatch.setenv("OPENCODE_DISABLE_CLAUDE_CODE", "1")
    show = memlens("show", "--json", "--home", capture.home, "--trusted", "--agent",
                   "opencode", capture.cwd, cwd=capture.cwd, home=capture.home)
    jit = memlens("jit", "--json", "--home", capture.home, "--trusted", "--agent", "opencode",
                  "--cwd", capture.cwd, str(capture.read_path), cwd=capture.cwd,
                  home=capture.home)
    assert os.environ["OPENCODE_DISABLE_CLAUDE_CODE"] == "1"
    assert show["payloads"] == [p.text for p in capture.startup]
    assert "CONTEXT.md" in show["payloads"][0]
    assert jit[0]["payloads"] == [p.text for p in capture.on_read] == []
