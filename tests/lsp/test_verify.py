"""memlens/verify ("Verify What My Agents Read", issue 20) through a real client: the answer
names each agent and its status; with an agent installed it runs it offline on a copy of the
workspace folder, reports progress while it runs, and answers "identical" with the payloads
it compared. (The real agent comes from scripts/agents/install.sh's cache; the test that needs
it is skipped without it.)"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from ..conftest import build_tree
from .conftest import SERVE, plain, start

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memlens" / "agents"
CODEX = CACHE / "codex-0.169.0" / "node_modules" / ".bin"
NODE_DIRS = [os.path.dirname(p) for p in [os.popen("command -v node").read().strip()] if p]


def _config(path: list[str], record: str) -> ClientServerConfig:
    env = {**os.environ, "MEMLENS_LOG_LEVEL": "WARNING", "PATH": os.pathsep.join(path),
           "MEMLENS_VERIFICATIONS": record}
    return ClientServerConfig(server_command=SERVE,
                              server_env=env)


RECORD = f"/tmp/memlens-lsp-verify-{os.getpid()}.json"
TREE = {".git": None, "AGENTS.md": "# Rules\n\nRun the tests.\n",
        "sub/AGENTS.md": "Sub rules.\n", "home/.keep": ""}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    build_tree(root, TREE)
    return root


@pytest_lsp.fixture(config=_config([*NODE_DIRS, "/usr/bin", "/bin"], RECORD))
async def bare(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, workspace)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_config([str(CODEX), *NODE_DIRS, "/usr/bin", "/bin"], RECORD))
async def with_codex(lsp_client: LanguageClient, workspace: Path
                     ) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, workspace)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_no_agent_installed(bare: LanguageClient, workspace: Path) -> None:
    result = plain(await bare.protocol.send_request_async("memlens/verify", {}))
    assert isinstance(result, dict)
    assert result["path"] == str(workspace) and result["identical"] is False
    assert [(a["agent"], a["status"], a["message"]) for a in result["agents"]] == [
        (agent, "missing", f"{label} is not installed (no `{agent}` on PATH): nothing to "
                           "verify")
        for agent, label in (("gemini", "Gemini CLI"), ("claude", "Claude Code"),
                             ("codex", "Codex"), ("copilot", "GitHub Copilot CLI"),
                             ("opencode", "OpenCode"), ("pi", "pi"))]


@pytest.mark.asyncio
async def test_a_bad_folder_is_invalid_params(bare: LanguageClient) -> None:
    with pytest.raises(Exception, match="not a folder: /no/such"):
        await bare.protocol.send_request_async("memlens/verify", {"folder": "/no/such"})


@pytest.mark.conformance
@pytest.mark.skipif(not (CODEX / "codex").exists(),
                    reason="codex 0.169.0 not installed: bash scripts/agents/install.sh")
@pytest.mark.asyncio
async def test_codex_verifies_identical_with_progress(with_codex: LanguageClient,
                                                      workspace: Path) -> None:
    result = plain(await with_codex.protocol.send_request_async(
        "memlens/verify", {"folder": str(workspace / "sub"), "agents": ["codex"]}))
    assert isinstance(result, dict)
    (codex,) = result["agents"]
    assert (codex["status"], codex["version"], result["identical"]) == (
        "identical", "0.169.0", True), codex
    (payload,) = codex["payloads"]
    assert payload["identical"] and "Run the tests." in payload["sent"]
    assert f"instructions for {workspace / 'sub'}" in payload["sent"]  # the user's path
    reports = [m for token, values in with_codex.progress_reports.items()
               if token.startswith("memlens-verify-") for m in values]
    assert reports, with_codex.progress_reports


def _no_sandbox_config() -> ClientServerConfig:
    config = _config([str(CODEX), *NODE_DIRS, "/usr/bin", "/bin"], RECORD)
    config.server_env = {**(config.server_env or {}), "MEMLENS_NO_BWRAP": "1"}
    return config


@pytest_lsp.fixture(config=_no_sandbox_config())
async def without_sandbox(lsp_client: LanguageClient, workspace: Path
                          ) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, workspace)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.conformance
@pytest.mark.skipif(not (CODEX / "codex").exists(),
                    reason="codex 0.169.0 not installed: bash scripts/agents/install.sh")
@pytest.mark.asyncio
async def test_without_a_sandbox_nothing_runs_until_the_user_accepts(
        without_sandbox: LanguageClient, workspace: Path) -> None:
    """Issue 30: the refusal comes before any progress (the editor then asks in a modal), and
    `unsandboxed` (the modal's "Run Without a Sandbox") runs the agent, saying so."""
    with pytest.raises(Exception, match="no sandbox can run here"):
        await without_sandbox.protocol.send_request_async(
            "memlens/verify", {"folder": str(workspace), "agents": ["codex"]})
    assert not [t for t in without_sandbox.progress_reports if t.startswith("memlens-verify-")]
    result = plain(await without_sandbox.protocol.send_request_async(
        "memlens/verify", {"folder": str(workspace), "agents": ["codex"],
                           "unsandboxed": True}))
    assert isinstance(result, dict)
    (codex,) = result["agents"]
    assert codex["status"] == "identical", codex
    assert codex["isolation"] in ("network-namespace", "loopback-only")
