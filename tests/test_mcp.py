"""`memlens mcp` (docs/mcp.md), driven by the MCP SDK's own client: the server is spawned as
`python -m memlens mcp` over stdio, as a host starts it, and every tool is listed and called.
What an agent reads is compared byte for byte with `memlens show --agent` and `memlens jit`
run as commands on the same folder."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

import anyio
import pytest
from mcp import types
from mcp.client.context import ClientRequestContext
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from .conftest import build_tree
from .lsp.forking import Forking

SERVER = str(Path(__file__).resolve().parents[1] / "server")
# `python -m memlens mcp` through a fork server (tests/lsp/conftest.py), started with the
# environment the SDK's client gives the server (the tests' own values are not read at import)
MCP = Forking("mcp", {**get_default_environment(), "PYTHONPATH": SERVER})
T = TypeVar("T")
TOOLS = {"agents_here", "what_agent_reads", "explain_file", "rules_for"}


class Workspace:
    """root/home (HOME) and root/proj (a git repository with Gemini CLI's, Claude Code's and
    the AGENTS.md convention's files, a scoped Claude rule and a subfolder's own files)."""

    def __init__(self, root: Path):
        self.root, self.home, self.proj = root, root / "home", root / "proj"
        build_tree(root, {
            "home/.gemini/GEMINI.md": "# Global\n- be brief\n",
            "proj/.git": None,
            "proj/GEMINI.md": "Project rules\n@./docs/a.md\n",
            "proj/docs/a.md": "Imported A\n",
            "proj/CLAUDE.md": "# Claude\nBe kind.\n",
            "proj/.claude/rules/py.md": '---\npaths: ["**/*.py"]\n---\nPython: type hints.\n',
            "proj/AGENTS.md": "# Agents\nUse tabs.\n",
            "proj/sub/GEMINI.md": "Sub rules for Gemini\n",
            "proj/sub/AGENTS.md": "Sub rules\n",
            "proj/sub/CLAUDE.md": "Sub rules for Claude\n",
            "proj/sub/code.py": "x = 1\n",
            "other/secret.md": "not served\n",
        })

    def env(self, **extra: str) -> dict[str, str]:
        return {"HOME": str(self.home), "GEMINI_CLI_HOME": str(self.home),
                "PATH": os.path.dirname(sys.executable), "PYTHONPATH": SERVER,
                "MEMLENS_AGENTS": "", "GEMINI_CLI_TRUST_WORKSPACE": "true", **extra}

    def cli(self, *args: str, **env: str) -> str:
        """`memlens ARGS`' stdout, run in the project folder."""
        proc = subprocess.run([sys.executable, "-m", "memlens", *args], cwd=self.proj,
                              env=self.env(**env), capture_output=True, timeout=60,
                              stdin=subprocess.DEVNULL, check=False)
        assert proc.returncode in (0, 1), proc.stderr  # 1: `check` found errors
        return proc.stdout.decode("utf-8")

    def session(self, body: Callable[[ClientSession], Awaitable[T]], *,
                roots: list[Path] | None = None, **env: str) -> T:
        """`body` run against `memlens mcp` started in the project folder; `roots`: the
        client's roots (None: the client has no roots capability)."""
        async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
            return types.ListRootsResult(roots=[types.Root(uri=r.as_uri())  # type: ignore[arg-type]
                                                for r in roots or []])

        async def main() -> T:
            command = MCP.command("mcp")
            params = StdioServerParameters(command=command[0], args=command[1:],
                                           env=self.env(**env), cwd=self.proj)
            callback = None if roots is None else list_roots
            with open(self.root / "server.log", "a") as log:
                async with (stdio_client(params, errlog=log) as (read, write),
                            ClientSession(read, write, list_roots_callback=callback) as session):
                    await session.initialize()
                    return await body(session)
        return anyio.run(main)


@pytest.fixture(scope="module", autouse=True)
def mcp_fork_server() -> Iterator[dict[str, Any] | None]:
    with MCP.running() as ready:
        yield ready


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def call(session: ClientSession, tool: str, **arguments: Any) -> types.CallToolResult:
    return await session.call_tool(tool, arguments)


def printed(text: str) -> str:
    """What `memlens show` / `jit` print for an agent's text: it and a newline, or nothing."""
    return text + "\n" if text else ""


def test_the_four_tools_are_listed_read_only_with_input_and_output_schemas(
        ws: Workspace) -> None:
    async def body(session: ClientSession) -> types.ListToolsResult:
        return await session.list_tools()
    tools = {t.name: t for t in ws.session(body).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.annotations is not None and tool.annotations.read_only_hint
        assert tool.description
    assert tools["what_agent_reads"].input_schema["required"] == ["agent"]
    assert set(tools["what_agent_reads"].input_schema["properties"]) == {"agent", "folder", "path"}
    assert tools["explain_file"].input_schema["required"] == ["path"]
    assert tools["rules_for"].input_schema["required"] == ["path"]
    assert "startup" in tools["what_agent_reads"].output_schema["properties"]


@pytest.mark.parametrize("agent", ["gemini", "claude", "agents"])
def test_what_agent_reads_at_start_up_is_memlens_show_to_the_byte(ws: Workspace,
                                                                  agent: str) -> None:
    async def body(session: ClientSession) -> types.CallToolResult:
        return await call(session, "what_agent_reads", agent=agent)
    result = ws.session(body)
    assert not result.is_error
    assert printed(text_of(result)) == ws.cli("show", "--agent", agent, ".")
    answer = result.structured_content
    assert answer is not None and answer["agent"] == agent and answer["onPath"] is None
    assert answer["startup"]["text"] == text_of(result)
    sources = [s["path"] for s in answer["startup"]["sources"]]
    own = {"gemini": "GEMINI.md", "claude": "CLAUDE.md", "agents": "AGENTS.md"}[agent]
    assert str(ws.proj / own) in sources


@pytest.mark.parametrize(("agent", "path", "expect"), [
    ("claude", "sub/code.py", "Python: type hints."),
    ("gemini", "sub/code.py", "Sub rules for Gemini"),
    ("copilot", "sub/new.txt", "Sub rules"),  # a write creating a file
])
def test_what_agent_reads_for_a_path_is_memlens_jit_to_the_byte(
        ws: Workspace, agent: str, path: str, expect: str) -> None:
    async def body(session: ClientSession) -> types.CallToolResult:
        return await call(session, "what_agent_reads", agent=agent, path=path)
    result = ws.session(body)
    assert not result.is_error
    text = text_of(result)
    assert expect in text
    assert printed(text) == ws.cli("jit", "--cwd", ".", "--agent", agent, path)
    answer = result.structured_content
    assert answer is not None and answer["path"] == str(ws.proj / path)
    assert answer["onPath"]["text"] == text
    assert answer["onPath"]["sources"], "each part names its source file"


def test_agents_here_says_version_and_how_we_know(ws: Workspace) -> None:
    async def body(session: ClientSession) -> types.CallToolResult:
        return await call(session, "agents_here", folder=".")
    answer = ws.session(body, MEMLENS_AGENTS="claude@2.1").structured_content
    assert answer is not None
    agents = {a["agent"]: a for a in answer["agents"]}
    assert answer["agents"][0]["agent"] == "claude"  # in use first, then files that apply
    assert agents["claude"]["how"][0].startswith("pinned")
    assert agents["claude"]["profile"] == "claude@2.1"
    assert "gemini" in agents and agents["gemini"]["how"] == [
        "its memory files are in the folder or below it"]
    assert answer["withheld"] == []


def test_explain_file_says_who_reads_it_when_and_why(ws: Workspace) -> None:
    async def body(session: ClientSession) -> list[types.CallToolResult]:
        return [await call(session, "explain_file", path="CLAUDE.md"),
                await call(session, "explain_file", path="sub/CLAUDE.md"),
                await call(session, "explain_file", path=".claude/rules/py.md")]
    top, sub, rule = (r.structured_content for r in ws.session(body))
    assert top is not None and sub is not None and rule is not None
    claude = next(a for a in top["agents"] if a["agent"] == "claude")
    assert (claude["when"], claude["word"]) == ("startup", "at start-up")
    gemini = next(a for a in top["agents"] if a["agent"] == "gemini")
    assert gemini["when"] == "not-read" and gemini["why"]
    assert next(a for a in sub["agents"] if a["agent"] == "claude")["when"] == "on-read"
    py = next(a for a in rule["agents"] if a["agent"] == "claude")
    assert py["when"] == "on-read" and "py" in (py["trigger"] or "")


def test_explain_file_carries_the_files_diagnostics(ws: Workspace) -> None:
    build_tree(ws.root, {"proj/GEMINI.md": "Project rules\n@./docs/missing.md\n"})

    async def body(session: ClientSession) -> types.CallToolResult:
        return await call(session, "explain_file", path="GEMINI.md")
    answer = ws.session(body).structured_content
    assert answer is not None
    gemini = next(a for a in answer["agents"] if a["agent"] == "gemini")
    codes = {d["code"] for d in gemini["diagnostics"]}
    checked = ws.cli("check", "--agent", "gemini", ".")
    assert codes and all(code in checked for code in codes)


def test_rules_for_gives_every_agents_scoped_instructions_with_sources(ws: Workspace) -> None:
    async def body(session: ClientSession) -> types.CallToolResult:
        return await call(session, "rules_for", path="sub/code.py")
    result = ws.session(body)
    answer = result.structured_content
    assert answer is not None
    rules = {a["agent"]: a["rules"] for a in answer["agents"]}
    assert "Python: type hints." in rules["claude"]["text"]
    assert str(ws.proj / ".claude/rules/py.md") in [s["path"] for s in rules["claude"]["sources"]]
    assert "Sub rules for Gemini" in rules["gemini"]["text"]
    for agent, part in rules.items():
        assert printed(part["text"]) == ws.cli("jit", "--cwd", ".", "--agent", agent,
                                               "sub/code.py")
        assert part["text"] in text_of(result)


def test_the_context_resource_is_the_start_up_text(ws: Workspace) -> None:
    async def body(session: ClientSession) -> tuple[Any, Any]:
        templates = await session.list_resource_templates()
        return templates, await session.read_resource("memlens://context/claude")
    templates, read = ws.session(body)
    assert [t.uri_template for t in templates.resource_templates] == [
        "memlens://context/{agent}{?folder}"]
    assert printed(read.contents[0].text) == ws.cli("show", "--agent", "claude", ".")


def test_each_agents_context_in_each_root_is_listed_as_a_resource(ws: Workspace) -> None:
    build_tree(ws.root, {"other/CLAUDE.md": "Other project\n"})

    async def body(session: ClientSession) -> tuple[list[str], list[str]]:
        listed = [str(r.uri) for r in (await session.list_resources()).resources]
        texts = []
        for uri in listed:
            for block in (await session.read_resource(uri)).contents:
                assert isinstance(block, types.TextResourceContents)
                texts.append(block.text)
        return listed, texts
    listed, texts = ws.session(body, roots=[ws.proj, ws.root / "other"])
    other = "?" + urlencode({"folder": str(ws.root / "other")})
    assert "memlens://context/claude" in listed and "memlens://context/gemini" in listed
    assert f"memlens://context/claude{other}" in listed
    by_uri = dict(zip(listed, texts, strict=True))
    assert printed(by_uri["memlens://context/claude"]) == ws.cli("show", "--agent", "claude", ".")
    assert "Other project" in by_uri[f"memlens://context/claude{other}"]


def test_refusals_say_why(ws: Workspace) -> None:
    (ws.proj / "escape").symlink_to(ws.root / "other")

    async def body(session: ClientSession) -> list[types.CallToolResult]:
        return [await call(session, "what_agent_reads", agent="nobody"),
                await call(session, "rules_for", path="/etc/passwd"),
                await call(session, "explain_file", path="../other/secret.md"),
                await call(session, "explain_file", path="escape/secret.md"),
                await call(session, "agents_here", folder=str(ws.root / "other")),
                await call(session, "what_agent_reads", agent="claude", folder="CLAUDE.md"),
                await call(session, "rules_for", path="x" * 5000)]
    unknown, passwd, dotdot, link, folder, not_folder, long = ws.session(body)
    for result in (unknown, passwd, dotdot, link, folder, not_folder, long):
        assert result.is_error
    assert "nobody" in text_of(unknown) and "claude" in text_of(unknown)
    for result in (passwd, dotdot, link, folder):
        assert "outside the workspace folders" in text_of(result)
    assert "not a folder" in text_of(not_folder)
    assert "4096" in text_of(long)


def test_the_clients_roots_are_the_workspace(ws: Workspace) -> None:
    """With roots, the server answers for them (the first is the default folder) and
    refuses the folder it was started in when no root holds it."""
    build_tree(ws.root, {"other/CLAUDE.md": "Other project\n"})

    async def body(session: ClientSession) -> list[types.CallToolResult]:
        return [await call(session, "what_agent_reads", agent="claude"),
                await call(session, "agents_here", folder=str(ws.proj))]
    here, refused = ws.session(body, roots=[ws.root / "other"])
    assert "Other project" in text_of(here) and "Be kind" not in text_of(here)
    assert refused.is_error and "outside the workspace folders" in text_of(refused)


def test_an_untrusted_folder_says_what_is_withheld(ws: Workspace) -> None:
    async def body(session: ClientSession) -> list[types.CallToolResult]:
        return [await call(session, "what_agent_reads", agent="gemini"),
                await call(session, "agents_here")]
    reads, here = ws.session(body, GEMINI_CLI_TRUST_WORKSPACE="false")
    assert "Project rules" not in text_of(reads) and "be brief" in text_of(reads)
    assert printed(text_of(reads)) == ws.cli("show", "--agent", "gemini", ".",
                                             GEMINI_CLI_TRUST_WORKSPACE="false")
    for result in (reads, here):
        assert result.structured_content is not None
        [withheld] = result.structured_content["withheld"]
        assert withheld["agent"] == "gemini" and withheld["why"] and withheld["howToTrust"]


def test_an_answer_over_the_size_cap_is_cut_and_says_so(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.mcp import answers
    from memlens.mcp.scope import settings_for

    monkeypatch.setenv("HOME", str(ws.home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(ws.home))
    monkeypatch.setattr(answers, "MAX_TEXT", 20)
    settings = settings_for(str(ws.proj), {})
    full = answers.what_agent_reads("claude", str(ws.proj), settings, None)
    assert full.startup.truncated and len(full.startup.text) == 20
    monkeypatch.setattr(answers, "MAX_TEXT", 1_000_000)
    whole = answers.what_agent_reads("claude", str(ws.proj), settings, None)
    assert not whole.startup.truncated and whole.startup.text.startswith(full.startup.text)


def test_a_fifo_named_like_a_memory_file_is_answered_without_hanging(ws: Workspace) -> None:
    os.mkfifo(ws.proj / "CLAUDE.local.md")
    os.mkfifo(ws.proj / "sub" / "pipe.py")

    async def body(session: ClientSession) -> list[types.CallToolResult]:
        with anyio.fail_after(90):
            return [await call(session, "explain_file", path="CLAUDE.local.md"),
                    await call(session, "what_agent_reads", agent="claude", path="sub/pipe.py"),
                    await call(session, "rules_for", path="sub/pipe.py")]
    explained, reads, rules = ws.session(body)
    assert not explained.is_error and not reads.is_error and not rules.is_error
    assert printed(text_of(reads)) == ws.cli("jit", "--cwd", ".", "--agent", "claude",
                                             "sub/pipe.py")
