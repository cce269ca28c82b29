"""`memlens mcp` in the real hosts (docs/mcp.md "Set-up"): each agent, offline against the
recording fake model, with `memlens mcp` configured as docs/mcp.md says. The agent must offer
the tool to its model; the fake model's first turn calls `what_agent_reads` for a path; the
tool result the agent sends back to its model must hold, byte for byte, what `memlens jit`
prints for the same path — inside whatever the host wraps it in, which each test spells out:

* Gemini CLI (`mcpServers` in HOME's settings.json): the tool's text between its own
  `<untrusted_context>` lines;
* Claude Code (the project's `.mcp.json`, or `--mcp-config`): the structured result as
  JSON, not the text;
* Codex (`[mcp_servers.memlens]` in config.toml, `required`): the tool is called from the
  script of its `exec` tool, whose output is what the script prints (here: the tool's text);
* GitHub Copilot CLI (`~/.copilot/mcp-config.json`): the tool's text, a blank line, then the
  structured result as JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memlens.verify.agent_setup import agent_argv, agent_env
from tests.conformance.agents import (
    Job,
    JobResult,
    agent_binary,
    copilot_unpack_folder,
    is_installed,
    run_agent,
    run_job,
    scratch_for,
    stage,
)
from tests.conftest import build_tree

AGENT, VERSION = "gemini", "0.61.0"
SERVER = str(Path(__file__).resolve().parents[2] / "server")
# This checkout's package on the path from the command line (an installed `memlens mcp` needs
# nothing of the kind): the hosts differ in which environment they pass a server.
START = f"import sys; sys.path.insert(0, {SERVER!r}); from memlens.cli import main; " \
        "sys.exit(main(['mcp']))"
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
    # Gemini CLI refuses to set PYTHONPATH for a server (hence START)
    server = {"command": sys.executable, "args": ["-c", START],
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

    jit = _jit(scratch, f"gemini@{VERSION}", {"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert "Every function has a docstring." in jit
    assert jit.endswith("\n")
    # Gemini CLI sends an MCP tool's text inside <untrusted_context> lines of its own: between
    # them, the tool's text, which is memlens jit's output to the byte (less its final newline).
    assert sent == [f"<untrusted_context>\n{jit[:-1]}\n</untrusted_context>"]


def _jit(scratch: Path, agent: str, extra: dict[str, str] | None = None) -> str:
    """What `memlens jit` prints for TARGET in the run's workspace copy, with its HOME."""
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("GEMINI", "MEMLENS", "CLAUDE", "CODEX", "COPILOT"))}
    environ.update({"HOME": str(scratch / "home"), "PYTHONPATH": SERVER, **(extra or {})})
    return subprocess.run([sys.executable, "-m", "memlens", "jit", "--cwd", str(scratch / "ws"),
                           "--agent", agent, TARGET], env=environ, capture_output=True,
                          check=True, timeout=60).stdout.decode("utf-8")


# One tree for the hosts below: Claude Code's memory beside the AGENTS.md convention's, a
# subfolder file of each that only reading TARGET brings in.
HOST_TREE: dict[str, str | None] = {
    "ws/.git": None,
    "ws/CLAUDE.md": "# Project\nUse tabs.\n",
    "ws/AGENTS.md": "# Agents\nBe brief.\n",
    "ws/src/CLAUDE.md": "# src\nEvery function has a docstring.\n",
    "ws/src/AGENTS.md": "# src agents\nName tests after behaviour.\n",
    "ws/src/app.py": "x = 1\n",
    "home/.keep": "",
}
SERVER_ENTRY = {"command": sys.executable, "args": ["-c", START]}


def _run_host(agent: str, version: str, root: Path, tree: dict[str, str | None],
              tool_call: dict[str, Any], *, drop: tuple[str, ...] = (),
              add: tuple[str, ...] = (), env: dict[str, str] | None = None
              ) -> tuple[Path, JobResult]:
    """One run of the host on a staged copy of `tree` (its command line less `drop`, plus
    `add`, where `{home}` is the copy's HOME), the fake model's first turn scripted to make
    `tool_call`."""
    build_tree(root, {**HOST_TREE, **tree})
    staged = stage(agent, version, root / "ws", root / "home", name="mcp-host")
    argv = [a for a in agent_argv(agent, str(agent_binary(agent, version))) if a not in drop]
    argv += [a.replace("{home}", str(staged.home)) for a in add]
    environ = agent_env(agent, staged.home)
    if agent == "copilot":  # where it unpacks itself, once for every run (agents.py)
        environ["XDG_CACHE_HOME"] = str(copilot_unpack_folder())
    result = run_job(Job(argv=argv, env={**environ, **(env or {})},
                         cwd=str(staged.cwd), tool_call=tool_call,
                         writable=[str(staged.scratch)]))
    (staged.scratch / "result.json").write_text(result.model_dump_json(indent=1),
                                                encoding="utf-8")
    return staged.scratch, result


def _installed(agent: str, version: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(not is_installed(agent, version), reason=f"{agent} {version} not "
                              "installed: bash scripts/agents/install.sh")


@_installed("claude", "2.1.330")
@pytest.mark.parametrize("setup", ["project-mcp-json", "mcp-config-flag"])
def test_claude_code_calls_what_agent_reads(root: Path, setup: str) -> None:
    mcp_json = {"mcpServers": {"memlens": {"type": "stdio", **SERVER_ENTRY, "env": {}}}}
    name = "mcp__memlens__what_agent_reads"
    if setup == "project-mcp-json":
        # The project's .mcp.json as `claude mcp add --scope project` writes it, and the tools
        # allowed in the user's settings (else -p mode refuses the call: "Claude requested
        # permissions to use …"; the allow rule in the project's shared .claude/settings.json
        # is not enough in -p mode, in .claude/settings.local.json or --allowedTools it is).
        # In -p mode Claude Code starts a project's servers without the approval it asks for
        # interactively. The harness's --strict-mcp-config (only --mcp-config's servers) is
        # left out.
        tree = {"ws/.mcp.json": json.dumps(mcp_json), "home/.claude/settings.json":
                json.dumps({"permissions": {"allow": ["mcp__memlens"]}})}
        drop: tuple[str, ...] = ("--strict-mcp-config",)
        add: tuple[str, ...] = ()
    else:
        # A file of its own on the command line, with --strict-mcp-config (that file's servers
        # only) and the tools allowed there too
        tree = {"home/memlens.json": json.dumps(mcp_json)}
        drop, add = (), ("--mcp-config", "{home}/memlens.json", "--allowedTools", "mcp__memlens")
    # ENABLE_TOOL_SEARCH=false: Claude Code otherwise names MCP tools only in a list of
    # deferred tools whose schemas its model loads with ToolSearch (a turn this script skips).
    # MCP_CONNECTION_NONBLOCKING=false: it waits for the server before its first request
    # (else a server slower to start than its grace, as on a loaded machine, is left out).
    scratch, result = _run_host(
        "claude", "2.1.330", root, tree, {"name": name, "args": {"agent": "claude@2.1.330",
                                                                 "path": TARGET}},
        drop=drop, add=add, env={"ENABLE_TOOL_SEARCH": "false",
                                 "MCP_CONNECTION_NONBLOCKING": "false"})
    turns = [r.body for r in result.requests if r.route == "anthropic"]
    assert turns, f"no turn reached the fake model: {result.stderr[-2000:]}"
    assert name in [t.get("name") for t in turns[0].get("tools", [])]
    sent = [block for body in turns[1:] for message in body.get("messages", [])
            if isinstance(message.get("content"), list) for block in message["content"]
            if block.get("type") == "tool_result"
            and block.get("tool_use_id") == "toolu_fake_call"]
    assert sent and not sent[0].get("is_error"), f"no tool result: {sent or result.stderr[-2000:]}"
    content = sent[0]["content"]
    assert isinstance(content, str)
    jit = _jit(scratch, "claude@2.1.330")
    assert "Every function has a docstring." in jit
    # Claude Code sends the structured result (as JSON), not the tool's text: its `onPath`
    # text is memlens jit's output to the byte (less its final newline).
    assert json.loads(content)["onPath"]["text"] == jit[:-1]


@_installed("codex", "0.169.0")
def test_codex_calls_what_agent_reads_from_its_exec_script(root: Path) -> None:
    config = (f"[mcp_servers.memlens]\ncommand = {json.dumps(sys.executable)}\n"
              f"args = [\"-c\", {json.dumps(START)}]\nrequired = true\n")
    # `required = true`: Codex waits for the server before its first request (else one slower
    # to start is not there yet: "tools.mcp__memlens__what_agent_reads is not a function").
    # Codex offers MCP tools only inside its `exec` tool (JavaScript, each tool a function of
    # `tools`), and names the server in the developer message; the script prints what the
    # model gets. Codex loads nothing when a file is read, so the question is Claude Code's.
    script = ("const r = await tools.mcp__memlens__what_agent_reads("
              "{agent: 'claude@2.1.330', path: " + json.dumps(TARGET) + "});\n"
              "text(r.content[0].text);\n")
    scratch, result = _run_host("codex", "0.169.0", root, {"home/.codex/config.toml": config},
                                {"name": "exec", "input": script})
    turns = [r.body for r in result.requests if r.route == "openai"]
    assert turns, f"no turn reached the fake model: {result.stderr[-2000:]}"
    assert "- mcp__memlens: Memory Lens answers" in json.dumps(turns[0]), \
        "memlens mcp was not offered"
    outputs = [item["output"] for body in turns[1:] for item in body.get("input", [])
               if item.get("type") == "custom_tool_call_output"]
    assert outputs, f"the tool's answer never reached the model: {result.stderr[-2000:]}"
    texts = [part["text"] for part in outputs[0] if part.get("type") == "input_text"]
    jit = _jit(scratch, "claude@2.1.330")
    assert "Every function has a docstring." in jit
    # The exec result: a status part ("Script completed", the wall time), then the script's
    # text, here the tool's: memlens jit's output to the byte (less its final newline).
    assert texts[0].startswith("Script completed\n")
    assert texts[1:] == [jit[:-1]]


@_installed("copilot", "1.0.102")
def test_copilot_cli_calls_what_agent_reads_from_its_mcp_config(root: Path) -> None:
    # ~/.copilot/mcp-config.json as `copilot mcp add memlens -- memlens mcp` writes it
    config = {"mcpServers": {"memlens": {"tools": ["*"], "type": "local", **SERVER_ENTRY}}}
    name = "memlens-what_agent_reads"  # Copilot CLI names an MCP tool <server>-<tool>
    first_answer = None
    for _attempt in range(2):
        scratch, result = _run_host(
            "copilot", "1.0.102", root, {"home/.copilot/mcp-config.json": json.dumps(config)},
            {"name": name, "args": {"agent": "copilot@1.0.102", "path": TARGET}})
        turns = [r.body for r in result.requests if r.route == "openai-chat"]
        assert turns, f"no turn reached the fake model: {result.stderr[-2000:]}"
        assert name in [t.get("function", {}).get("name") for t in turns[0].get("tools", [])]
        sent = [m["content"] for body in turns[1:] for m in body.get("messages", [])
                if m.get("role") == "tool" and m.get("tool_call_id") == f"call_fake_{name}"]
        assert sent, f"the tool's answer never reached the model: {result.stderr[-2000:]}"
        if "\n\n{" in sent[0]:
            break
        # Once in a full run on a loaded machine the answer held no result (Copilot CLI does
        # not wait for an MCP server still starting): one more run, the first answer kept for
        # the failure message.
        first_answer = sent[0]
    assert "\n\n{" in sent[0], f"no structured result, twice: {first_answer!r} / {sent[0]!r}"
    jit = _jit(scratch, "copilot@1.0.102")
    assert "Name tests after behaviour." in jit
    # Copilot CLI sends the tool's text (memlens jit's output to the byte, less its final
    # newline), a blank line, then the structured result as JSON.
    text, _, structured = sent[0].rpartition("\n\n{")
    assert text == jit[:-1]
    assert json.loads("{" + structured)["onPath"]["text"] == jit[:-1]
