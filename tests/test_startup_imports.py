"""Start-up: a command imports only what it uses (docs/architecture.md, "Start-up").

Each case runs the command in a fresh interpreter and lists the modules it imported; modules
are counted, never timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import build_tree

_PROBE = """
import contextlib, io, json, sys
from memlens.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""

OTHER_AGENTS = ("claude", "agentsmd", "codex", "copilot", "vscode_chat", "cursor", "antigravity",
                "opencode", "pi")


def imported(*args: str, agents: str = "gemini") -> set[str]:
    env = {**os.environ, "MEMLENS_AGENTS": agents}
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    return set(json.loads(proc.stdout.splitlines()[-1]))


@pytest.fixture
def gemini_only(root: Path) -> tuple[str, str]:
    build_tree(root, {"home/.keep": "", "proj/.git/HEAD": "", "proj/GEMINI.md": "rules\n"})
    return str(root / "proj"), str(root / "home")


def test_version_imports_no_engine() -> None:
    modules = imported("--version")
    assert not {m for m in modules if m.startswith(("memlens.agents.", "memlens.workspace"))}
    assert not modules & {"pydantic", "yaml", "re2", "pathspec"}


def test_help_imports_no_mcp_sdk() -> None:
    """`memlens --help` lists `mcp` by its summary: neither the SDK nor the server loads."""
    modules = imported("--help")
    assert not {m for m in modules if m == "mcp" or m.startswith(("mcp.", "memlens.mcp"))}


@pytest.mark.parametrize("command", [["show"], ["show", "--json"], ["list"], ["list", "--json"],
                                     ["jit", "x"]])
def test_a_gemini_only_folder_imports_no_other_agent_and_no_yaml(
        gemini_only: tuple[str, str], command: list[str]) -> None:
    proj, home = gemini_only
    modules = imported(command[0], proj, *command[1:], "--home", home, "--trusted")
    assert "memlens.agents.gemini.discovery" in modules  # the command did run
    loaded = {m for m in modules for a in OTHER_AGENTS if m.startswith(f"memlens.agents.{a}")}
    assert loaded == set()
    # No YAML is read (Gemini CLI's files have no frontmatter), no report rendered. (The walk
    # for the agents with files here reads the repository's ignore rules: RE2 and pathspec.)
    assert not modules & {"yaml", "jinja2"}


def test_show_for_one_agent_imports_that_agent_alone(gemini_only: tuple[str, str]) -> None:
    proj, home = gemini_only
    modules = imported("show", proj, "--agent", "codex", "--home", home, agents="codex")
    assert "memlens.agents.codex.agent" in modules
    assert not {m for m in modules for a in ("claude", "copilot", "vscode_chat", "cursor",
                                             "antigravity", "pi")
                if m.startswith(f"memlens.agents.{a}")}


@pytest.mark.parametrize("command", [["check", "--format", "json"], ["check"], ["show"],
                                     ["show", "--json"], ["show", "--summary"],
                                     ["show", "--mode", "classic", "--max-dirs", "-1"],
                                     ["list"], ["jit", "src/app.ts"], ["report", "--json"]])
def test_a_read_only_command_imports_no_language_server(root: Path, command: list[str]) -> None:
    """The language server's modules (lsprotocol's types alone cost more than a second of
    CPU) load only for `serve`: not for a command over every agent's files."""
    build_tree(root, {
        "home/.keep": "", "proj/.git/HEAD": "", "proj/GEMINI.md": "rules\n",
        "proj/CLAUDE.md": "@AGENTS.md\n", "proj/AGENTS.md": "shared\n",
        "proj/.cursor/rules/ts.mdc": "---\nglobs: **/*.ts\n---\nStrict.\n",
        "proj/.github/instructions/py.instructions.md": "---\napplyTo: \"**/*.py\"\n---\nPy\n",
        "proj/.claude/rules/src.md": "---\npaths: [\"src/**\"]\n---\nSource\n",
        "proj/src/app.ts": "export {}\n"})
    from memlens.agents import AGENT_IDS

    modules = imported(command[0], str(root / "proj"), *command[1:], "--home",
                       str(root / "home"), "--trusted", agents=",".join(AGENT_IDS))
    assert "memlens.agents.gemini.discovery" in modules  # the command did run
    server = {m for m in modules if m.split(".")[0] in ("lsprotocol", "pygls", "cattrs")
              or m.startswith(("memlens.lsp", "memlens.mcp"))}
    assert server == set()
