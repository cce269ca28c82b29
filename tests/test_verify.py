"""`memlens verify` without the real agents: the verified releases as data, what a
verification remembers on this machine and what the "unverified" note says then, the command's
messages for a missing agent and bad arguments, and the per-payload unified diff.
(With the real agents: tests/conformance/test_verify.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlens import agent_versions
from memlens.agent_versions import (
    _load_profiles,
    profile_for,
    remember_verification,
    remembered_verification,
    verifications_path,
    verified_releases,
    version_diagnostic,
)
from memlens.verify.capture import Capture, Payload
from memlens.verify.run import _compare, sent_payloads

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cache" / "verified-here.json"
    monkeypatch.setenv("MEMLENS_VERIFICATIONS", str(path))
    return path


def test_the_verified_releases_are_data() -> None:
    releases = verified_releases()
    assert ("gemini", "0.43", "0.43.0") in [r[:3] for r in releases]
    assert ("claude", "2.1", "2.1.330") in [r[:3] for r in releases]
    assert all(len(date) == 10 for *_, date in releases)
    assert [p.verified_on for p in _load_profiles()] == [
        p.verified_on for p in agent_versions.PROFILES]


def test_a_release_added_later_is_verified_alone(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    data = json.loads(Path(agent_versions.DATA_FILE).read_text(encoding="utf-8"))
    claude = next(p for p in data["profiles"] if p["agent"] == "claude")
    claude["verified"] = [{"version": "2.1.330", "date": "2026-11-22"},
                          {"version": "2.1.340", "date": "2026-11-30"}]
    path = tmp_path / "verified-agents.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(agent_versions, "PROFILES", _load_profiles(str(path)))
    assert profile_for("claude", "2.1.340").verified
    assert profile_for("claude", "2.1").verified
    between = profile_for("claude", "2.1.335")
    assert not between.verified
    assert between.note == ("Claude Code 2.1.335 was not verified (verified: 2.1.330, "
                            "2.1.340): shown with the claude@2.1 profile")
    assert profile_for("claude", "2.1.341").note == (
        "Claude Code 2.1.341 is newer than the newest verified version (2.1.340): shown with "
        "the claude@2.1 profile")


def test_a_release_verified_here_loses_its_note(record: Path) -> None:
    assert verifications_path() == str(record)
    assert not profile_for("codex", "0.199.0").verified
    assert remember_verification("codex", "0.199.0", "identical", "2026-11-26")
    got = profile_for("codex", "0.199.0")
    assert (got.verified, got.note) == (True, None)
    assert version_diagnostic(got, "/w/AGENTS.md") is None
    assert not profile_for("codex", "0.199.1").verified  # only that release
    stored = json.loads(record.read_text(encoding="utf-8"))
    assert stored == {"format": 1, "agents": {"codex": {
        "0.199.0": {"result": "identical", "date": "2026-11-26"}}}}
    assert not list(record.parent.glob(".verified-here.*"))  # the temp file was renamed


def test_a_release_that_differs_keeps_its_note_and_points_to_verify(record: Path) -> None:
    remember_verification("claude", "2.1.400", "differs", "2026-11-26")
    got = profile_for("claude", "2.1.400")
    assert not got.verified
    assert got.note is not None and got.note.endswith(
        "; `memlens verify` found that Claude Code 2.1.400 sends something else on this "
        "machine: run it to see the differences")
    diagnostic = version_diagnostic(got, "/w/CLAUDE.md")
    assert diagnostic is not None and "Run `memlens verify`" in (diagnostic.detail or "")
    assert remembered_verification("claude", "2.1.400") == "differs"


def test_a_corrupt_record_is_ignored(record: Path) -> None:
    record.parent.mkdir(parents=True)
    record.write_text("{not json", encoding="utf-8")
    assert remembered_verification("gemini", "0.70.0") is None
    assert not profile_for("gemini", "0.70.0").verified
    assert remember_verification("gemini", "0.70.0", "identical", "2026-11-26")
    assert profile_for("gemini", "0.70.0").verified


def _memlens(*args: str, path_env: str, record: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path_env, "MEMLENS_VERIFICATIONS": str(record),
           "PYTHONPATH": str(REPO / "server")}
    return subprocess.run([sys.executable, "-m", "memlens", *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_no_agent_installed_is_one_line_each_and_exit_1(tmp_path: Path, record: Path) -> None:
    done = _memlens("verify", str(tmp_path), "--agent", "claude", "--agent", "codex",
                    path_env=str(tmp_path / "empty"), record=record)
    assert done.returncode == 1
    assert done.stdout == (
        "Claude Code: Claude Code is not installed (no `claude` on PATH): nothing to verify\n"
        "Codex: Codex is not installed (no `codex` on PATH): nothing to verify\n")
    assert not record.exists()


@pytest.mark.parametrize(("args", "message"), [
    (["verify", "/no/such/folder"], "memlens: error: no such file or directory: /no/such/folder"),
    (["verify", ".", "--agent", "aider"], "memlens: error: argument --agent: invalid choice"),
])
def test_usage_errors_exit_2(args: list[str], message: str, tmp_path: Path,
                             record: Path) -> None:
    done = _memlens(*args, path_env=os.environ.get("PATH", ""), record=record)
    assert done.returncode == 2
    assert done.stderr.startswith(message)


def test_a_differing_payload_is_a_unified_diff_with_paths_mapped_back() -> None:
    sent = ["head\n/tmp/scratch/ws/w/CLAUDE.md\nsame\ngot this\n"]
    predicted = ["head\n/tmp/scratch/ws/w/CLAUDE.md\nsame\nwanted that\n", "extra"]
    out = _compare("start-up", sent, predicted, [("/tmp/scratch/ws/w", "/home/u/w")])
    assert [(c.name, c.identical) for c in out] == [
        ("start-up, message 1", False),
        ("start-up, message 2 (predicted, not sent)", False)]
    assert out[0].diff == (
        "--- predicted: start-up, message 1\n+++ sent: start-up, message 1\n"
        "@@ -2,3 +2,3 @@\n /home/u/w/CLAUDE.md\n same\n-wanted that\n+got this\n")
    assert out[0].sent.startswith("head\n/home/u/w/CLAUDE.md")
    same = _compare("start-up", ["x"], ["x"], [])
    assert [(c.identical, c.diff) for c in same] == [(True, "")]


def _capture(agent: str, startup: list[Payload], on_read: list[Payload]) -> Capture:
    return Capture(agent=agent, version="1.0.0", workspace="/w", home="/h", cwd="/w",
                   read_path=None, startup=startup, on_read=on_read, blocks=[], exit_code=0,
                   requests=1, isolated=True, seconds=0.0, notes=[])


def test_what_each_agent_sent_is_read_as_the_prediction_is_shaped() -> None:
    gemini = _capture("gemini", [Payload(where="systemInstruction", text="a"),
                                 Payload(where="session_context", text="")],
                      [Payload(where="read_file.output", text="b")])
    assert sent_payloads(gemini) == (["a"], ["b"])
    claude = _capture("claude", [Payload(where="messages[0]", text="s")],
                      [Payload(where="messages[2] (user)", text="x"),
                       Payload(where="messages[2] (user)", text="y"),
                       Payload(where="messages[3] (system)", text="z")])
    assert sent_payloads(claude) == (["s"], ["xy", "z"])
    codex = _capture("codex", [Payload(where="input[1]", text="# AGENTS.md")], [])
    assert sent_payloads(codex) == (["# AGENTS.md"], [])


def test_a_payload_that_names_no_file_is_no_block_for_any_agent() -> None:
    """OpenCode sent a system reminder holding no "Instructions from:" line on a generated
    tree (seed 7301, tree 128): reading it gave an error, so `verify` failed on a tree the
    agent handled."""
    from memlens.verify.capture import parse_blocks

    for agent in ("gemini", "claude", "copilot", "opencode", "pi"):
        assert parse_blocks(agent, "<system-reminder>\nnothing here\n</system-reminder>",
                            "startup") == [], agent
        assert parse_blocks(agent, "", "on-read") == [], agent
