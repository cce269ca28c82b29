"""`memlens mcp` in a real host (docs/mcp.md): the real Gemini CLI, offline against the
recording fake model, with `memlens mcp` configured in its HOME's `settings.json`
`mcpServers`. The fake model's first turn calls the tool `what_agent_reads` for a path; the
function response the agent sends back to its model must hold, byte for byte, what `memlens
jit` prints for the same path (between the `<untrusted_context>` lines Gemini CLI puts around
any MCP tool's text)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.agents import is_installed, run_agent, scratch_for
from tests.conftest import build_tree

AGENT, VERSION = "gemini", "0.61.0"
SERVER = str(Path(__file__).resolve().parents[2] / "server")
# Gemini CLI names an MCP server's tool `mcp_<server>_<tool>`.
TOOL = "mcp_memlens_what_agent_reads"
TARGET = "src/app.py"


def _function_responses(body: Any) -> list[dict[str, Any]]:
    return [part["functionResponse"] for content in body.get("contents", [])
            for part in content.get("parts", []) if "functionResponse" in part]


def _texts(value: Any) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


@pytest.mark.skipif(not is_installed(AGENT, VERSION),
                    reason=f"{AGENT} {VERSION} not installed: bash scripts/agents/install.sh")
def test_gemini_cli_calls_what_agent_reads_and_gets_memlens_jits_bytes(root: Path) -> None:
    # Gemini CLI refuses to set PYTHONPATH for a server: this checkout's package goes on the
    # path from the command line instead (an installed `memlens mcp` needs neither).
    start = f"import sys; sys.path.insert(0, {SERVER!r}); from memlens.cli import main; " \
            "sys.exit(main(['mcp']))"
    server = {"command": sys.executable, "args": ["-c", start],
              "env": {"GEMINI_CLI_TRUST_WORKSPACE": "true"}, "trust": True}
    build_tree(root, {
        "ws/.git": None,
        "ws/GEMINI.md": "# Project\nUse tabs.\n",
        "ws/src/GEMINI.md": "# src\nEvery function has a docstring.\n",
        "ws/src/app.py": "x = 1\n",
        "home/.gemini/GEMINI.md": "# Global\nBe brief.\n",
        "home/.gemini/settings.json": json.dumps({"mcpServers": {"memlens": server}}),
    })
    capture = run_agent(AGENT, VERSION, root / "ws", root / "home", name="mcp-host",
                        tool_call={"name": TOOL, "args": {"agent": f"gemini@{VERSION}",
                                                          "path": TARGET}},
                        env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    scratch = scratch_for(AGENT, VERSION, "mcp-host")
    result = json.loads((scratch / "result.json").read_text(encoding="utf-8"))
    turns = [r["body"] for r in result["requests"] if "streamGenerateContent" in r["path"]]
    assert turns, f"no turn reached the fake model: {result['stderr'][-2000:]}"
    declared = [d["name"] for t in turns[0].get("tools", [])
                for d in t.get("functionDeclarations", [])]
    assert TOOL in declared, f"memlens mcp's tools were not offered: {declared}"
    responses = [f for body in turns[1:] for f in _function_responses(body)
                 if f.get("name") == TOOL]
    assert responses, f"the tool's answer never reached the model: {capture.notes}"
    sent = _texts(responses[0]["response"])

    environ = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "MEMLENS"))}
    environ.update({"HOME": str(scratch / "home"), "PYTHONPATH": SERVER,
                    "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    jit = subprocess.run([sys.executable, "-m", "memlens", "jit", "--cwd", str(scratch / "ws"),
                          "--agent", f"gemini@{VERSION}", TARGET], env=environ,
                         capture_output=True, check=True, timeout=60).stdout.decode("utf-8")
    assert "Every function has a docstring." in jit
    assert jit.endswith("\n")
    # Gemini CLI sends an MCP tool's text inside <untrusted_context> lines of its own: between
    # them, the tool's text, which is memlens jit's output to the byte (less its final newline).
    assert sent == [f"<untrusted_context>\n{jit[:-1]}\n</untrusted_context>"]
