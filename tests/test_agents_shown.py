"""An agent is shown where it is in use (pinned, else found on PATH, in the registry's order) or
has files that apply (its own names in the folder, below it, or above it where the agent looks,
or in HOME when it loads them); nowhere else, unless `--agent` asks (issue 31). Gemini CLI is
no default: in a repository with only Claude Code's files, on a machine with only `claude`,
no command prints anything of Gemini CLI — no section, no trust note."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlens.agents import AGENT_IDS

from .conftest import TreeSpec, build_tree

SERVER = Path(__file__).resolve().parents[1] / "server"

# A Claude Code that only answers `--version` (how Memory Lens detects it on PATH).
FAKE_AGENT = "#!/bin/sh\necho '{version} ({label})'\n"
VERSIONS = {"claude": ("2.1.330", "Claude Code"), "codex": ("0.169.0", "codex-cli"),
            "gemini": ("0.61.0", "Gemini CLI")}


def fake_bin(folder: Path, *agents: str) -> Path:
    """A bin folder holding an executable for each of `agents`."""
    folder.mkdir(parents=True, exist_ok=True)
    for agent in agents:
        version, label = VERSIONS[agent]
        exe = folder / agent
        exe.write_text(FAKE_AGENT.format(version=version, label=label))
        exe.chmod(0o755)
    return folder


# Claude Code's files only (the LSP test builds the same tree).
CLAUDE_ONLY: TreeSpec = {
    "home": None,
    "repo/.git": None,
    "repo/CLAUDE.md": "Claude rules for the whole repository.\n",
    "repo/.claude/rules/src.md": "---\npaths: src/**\n---\nSource rule.\n",
    "repo/src/app.py": "print('hi')\n",
}


@pytest.fixture
def repo(root: Path) -> Path:
    """Claude Code's files only: a root CLAUDE.md and a rule scoped to src/."""
    build_tree(root, CLAUDE_ONLY)
    return root / "repo"


def memlens(repo: Path, *args: str, bin_dir: Path | None = None, cwd: Path | None = None,
            pins: str | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: nothing pinned, PATH holding only `bin_dir` besides the
    system's, HOME a folder of its own (no trusted folders for Gemini CLI)."""
    home = repo.parent / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("MEMLENS_AGENTS", "GEMINI_CLI_HOME")}
    env.update(PYTHONPATH=str(SERVER), HOME=str(home),
               PATH=os.pathsep.join([*([str(bin_dir)] if bin_dir else []), "/usr/bin", "/bin"]),
               XDG_CACHE_HOME=str(repo.parent / "cache"))
    if pins is not None:
        env["MEMLENS_AGENTS"] = pins
    return subprocess.run([sys.executable, "-m", "memlens", *args], cwd=cwd or repo, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def nothing_of_gemini(run: subprocess.CompletedProcess[str]) -> None:
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "Gemini" not in out and "GEMINI" not in out and "gemini" not in out, out
    assert "not trusted" not in out, out


def test_claude_only_repo_with_only_claude_installed_shows_nothing_of_gemini(
        repo: Path, tmp_path: Path) -> None:
    bin_dir = fake_bin(tmp_path / "bin", "claude")
    show = memlens(repo, "show", bin_dir=bin_dir)
    nothing_of_gemini(show)
    assert "Claude rules for the whole repository." in show.stdout
    assert "==>" not in show.stdout  # one agent: its text alone
    listing = memlens(repo, "list", bin_dir=bin_dir)
    nothing_of_gemini(listing)
    assert str(repo / "CLAUDE.md") in listing.stdout
    check = memlens(repo, "check", ".", bin_dir=bin_dir)
    nothing_of_gemini(check)
    assert check.stderr.strip().endswith("(Claude Code)")
    jit = memlens(repo, "jit", "src/app.py", bin_dir=bin_dir)
    nothing_of_gemini(jit)
    assert "Source rule." in jit.stdout
    report = memlens(repo, "report", bin_dir=bin_dir)
    nothing_of_gemini(report)
    # Its columns: Claude Code, the agent in use, first; others that read its CLAUDE.md may
    # follow (the matrix's own rule), Gemini CLI never.
    columns = [a["id"] for a in json.loads(report.stdout)["agents"]]
    assert columns[0] == "claude" and "gemini" not in columns
    shown = memlens(repo, "show", "--json", bin_dir=bin_dir)
    nothing_of_gemini(shown)
    assert json.loads(shown.stdout)["agent"] == "claude"


def test_list_in_a_subfolder_lists_the_root_claude_md(repo: Path) -> None:
    """Nothing installed: Claude Code's root CLAUDE.md applies in src/ (Claude Code loads it
    there at start-up), so `list src` and `show src` cover Claude Code."""
    listing = memlens(repo, "list", "src")
    nothing_of_gemini(listing)
    assert str(repo / "CLAUDE.md") in listing.stdout
    assert "no memory files loaded" not in listing.stderr
    show = memlens(repo, "show", "src")
    nothing_of_gemini(show)
    assert "Claude rules for the whole repository." in show.stdout


def test_agents_on_path_come_in_the_registrys_order(repo: Path, tmp_path: Path) -> None:
    """codex before claude on PATH, gemini in a later folder: the sections follow the
    registry (Gemini CLI, Claude Code, Codex), not PATH and not the files."""
    first = fake_bin(tmp_path / "first", "codex", "claude")
    later = fake_bin(tmp_path / "later", "gemini")
    run = memlens(repo, "show", bin_dir=Path(f"{first}{os.pathsep}{later}"))
    assert run.returncode == 0, run.stderr
    headers = [line for line in run.stdout.splitlines() if line.startswith("==> ")]
    labels = [h.split(" (")[0].removeprefix("==> ") for h in headers]
    assert labels == ["Gemini CLI", "Claude Code", "Codex"]
    assert AGENT_IDS[:2] == ("gemini", "claude") and AGENT_IDS.index("codex") > 1
    # Without Gemini CLI on PATH, Claude Code and Codex alone, in the same order.
    run = memlens(repo, "show", bin_dir=first)
    nothing_of_gemini(run)
    assert [line for line in run.stdout.splitlines() if line.startswith("==> ")] == [
        "==> Claude Code (claude@2.1) <==", "==> Codex (codex@0.169) <=="]


def test_no_agent_anywhere_says_so_in_one_line(root: Path) -> None:
    """Nothing installed, no agent's files: no Gemini CLI by default, one line naming
    --agent."""
    build_tree(root, {"home": None, "empty/.git": None, "empty/notes.txt": "x\n"})
    for command in (["show"], ["list"], ["check", "."], ["jit", "notes.txt"]):
        run = memlens(root / "empty", *command)
        assert run.returncode == 0, run.stderr
        lines = [line for line in run.stderr.splitlines() if "no agent here" in line]
        assert len(lines) == 1 and "--agent NAME" in lines[0], run.stderr
        assert "not trusted" not in run.stderr and "Gemini" not in run.stdout + run.stderr
    # `--agent` still asks for any agent.
    asked = memlens(root / "empty", "show", "--agent", "gemini")
    assert asked.returncode == 0 and "no agent here" not in asked.stderr


def test_a_bad_pin_is_reported_where_gemini_cli_is_not_shown(repo: Path) -> None:
    """The warning about a dropped MEMLENS_AGENTS pin concerns every agent: it is printed
    though Gemini CLI (whose notes carried it) is not shown."""
    run = memlens(repo, "list", pins="windsurf")
    assert run.returncode == 0 and str(repo / "CLAUDE.md") in run.stdout
    assert run.stderr.count('agent "windsurf" in MEMLENS_AGENTS') == 1, run.stderr
    assert "Gemini" not in run.stdout + run.stderr
