"""Which agent and profile the command line shows when nothing is pinned
(docs/reference.md "Which agent, which version", "The command line"): the Gemini CLI found on PATH,
else gemini@0.44+; MEMLENS_AGENTS and --agent pin one; a version newer than the newest verified one
is served by the nearest profile and says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import build_tree

SERVER = Path(__file__).resolve().parents[1] / "server"


def fake_gemini(prefix: Path, version: str) -> Path:
    """An npm-style install of Gemini CLI `version` (never run: its package.json says the
    version); returns the bin folder to put on PATH."""
    package = prefix / "lib" / "node_modules" / "@google" / "gemini-cli"
    build_tree(package, {"package.json": json.dumps({"name": "@google/gemini-cli",
                                                     "version": version}),
                         "dist/index.js": "#!/bin/sh\nexit 3\n"})
    (package / "dist" / "index.js").chmod(0o755)
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "gemini").symlink_to(package / "dist" / "index.js")
    return prefix / "bin"


@pytest.fixture
def ws(root: Path) -> Path:
    build_tree(root, {
        "home/.gemini/settings.json": json.dumps({"context": {"fileName": "NOTES.md"}}),
        "home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
        "proj/.git": None,
        "proj/GEMINI.md": "gemini rules\n",
        "proj/NOTES.md": "notes\n",
        "proj/CLAUDE.md": "claude rules\n",
        "proj/sub/NOTES.md": "sub notes\n",
    })
    return root


def memlens(ws: Path, *args: str, path: str = "/usr/bin:/bin",
            agents: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMLENS_AGENTS"}
    env.update(PYTHONPATH=str(SERVER), PATH=path, GEMINI_CLI_HOME=str(ws / "home"),
               XDG_CACHE_HOME=str(ws / "cache"))
    if agents is not None:
        env["MEMLENS_AGENTS"] = agents
    return subprocess.run([sys.executable, "-m", "memlens", *args], cwd=ws / "proj", env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_no_gemini_on_path_means_the_current_release(ws: Path) -> None:
    shown = json.loads(memlens(ws, "show", "--json").stdout)
    # gemini@0.44+: JIT only, context.fileName adds to GEMINI.md (as 0.61.0 loads them).
    assert shown["mode"] == "jit"
    assert shown["files"] == [str(ws / "proj" / "GEMINI.md"), str(ws / "proj" / "NOTES.md")]
    agent = json.loads(memlens(ws, "show", "--json", "--agent", "gemini").stdout)
    assert (agent["profile"], agent["installed"], agent["verified"]) == (
        "gemini@0.44+", None, True)


def test_the_detected_gemini_cli_decides_the_profile(ws: Path, tmp_path: Path) -> None:
    path = f"{fake_gemini(tmp_path / 'npm', '0.43.0')}:/usr/bin:/bin"
    shown = json.loads(memlens(ws, "show", "--json", path=path).stdout)
    # gemini@0.43: context.fileName replaces GEMINI.md; jit mode loads NOTES.md only.
    assert shown["files"] == [str(ws / "proj" / "NOTES.md")]
    agent = json.loads(memlens(ws, "show", "--json", "--agent", "gemini", path=path).stdout)
    assert (agent["profile"], agent["installed"], agent["verified"]) == (
        "gemini@0.43", "0.43.0", True)


def test_a_newer_release_is_served_by_the_newest_profile_and_says_so(
        ws: Path, tmp_path: Path) -> None:
    path = f"{fake_gemini(tmp_path / 'npm', '0.70.2')}:/usr/bin:/bin"
    run = memlens(ws, "show", path=path)
    assert run.returncode == 0 and "gemini rules" in run.stdout
    assert ("memlens: note: Gemini CLI 0.70.2 is newer than the newest verified version "
            "(0.61.0): shown with the gemini@0.44+ profile") in run.stderr
    agent = json.loads(memlens(ws, "show", "--json", "--agent", "gemini", path=path).stdout)
    assert (agent["verified"], agent["installed"]) == (False, "0.70.2")
    assert agent["note"] and "newer than the newest verified" in agent["note"]
    check = json.loads(memlens(ws, "check", ".", "--format", "json", path=path).stdout)
    unverified = [d for d in check if d["code"] == "agent-version-unverified"]
    assert [(d["path"], d["line"], d["severity"]) for d in unverified] == [
        (str(ws / "proj" / "GEMINI.md"), 1, "info")]
    # A pinned profile is the user's choice: verified, no note.
    pinned = memlens(ws, "show", "--json", "--agent", "gemini@0.44+", path=path)
    assert json.loads(pinned.stdout)["verified"] is True and "note:" not in pinned.stderr


def test_memlens_agents_pins_the_agent_shown(ws: Path) -> None:
    claude = memlens(ws, "show", agents="claude,gemini@0.43")
    # Both pinned agents are covered, each in its section, the first pinned first (after the
    # summary, which names them in the same order).
    summary, first, second = claude.stdout.split("\n\n==> ")
    assert summary.startswith("Claude Code (claude@2.1): ")
    assert "\nGemini CLI (gemini@0.43): " in summary
    assert first.startswith("Claude Code (claude@2.1) <==\n<system-reminder>")
    assert "claude rules" in first and second.startswith("Gemini CLI (gemini@0.43) <==")
    gemini = json.loads(memlens(ws, "show", "--json", "--agent", "gemini",
                                agents="gemini@0.43").stdout)
    assert gemini["profile"] == "gemini@0.43"
    bad = memlens(ws, "show", "--json", agents="windsurf@1.0,gemini@0.43")
    assert bad.returncode == 0 and json.loads(bad.stdout)["files"] == [
        str(ws / "proj" / "NOTES.md")]
    assert "MEMLENS_AGENTS" in bad.stderr and "windsurf@1.0" in bad.stderr


def test_agent_ignores_file_in_check(ws: Path) -> None:
    (ws / "proj" / "AGENTS.md").write_text("agents rules\n")
    check = json.loads(memlens(ws, "check", ".", "--format", "json", "--agent", "claude").stdout)
    ignored = [d for d in check if d["code"] == "agent-ignores-file"]
    assert [(d["path"], d["severity"]) for d in ignored] == [
        (str(ws / "proj" / "AGENTS.md"), "warning")]
    assert "CLAUDE.md" in ignored[0]["message"]
