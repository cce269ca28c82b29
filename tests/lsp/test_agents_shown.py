"""The editor shows an agent where it is in use (found on PATH, or pinned) or has files that
apply, nowhere else (issue 31): in a repository with only Claude Code's files, with only a
`claude` on PATH, `memlens/agents` offers Claude Code first and Gemini CLI neither in use nor
with files; the status item (`memlens/show` for a file that is no agent's memory) shows Claude
Code's view; the Memory view carries no Gemini CLI trust notice, even in Restricted Mode."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from memlens.agents import AGENT_IDS

from ..conftest import build_tree
from ..test_agents_shown import CLAUDE_ONLY
from .conftest import SERVE, plain, uri

# A `claude` that only answers `--version`, alone on PATH besides the system's folders.
_BIN = Path(tempfile.mkdtemp(prefix="memlens-fake-claude-"))
atexit.register(shutil.rmtree, _BIN, ignore_errors=True)
(_BIN / "bin").mkdir()
(_BIN / "bin" / "claude").write_text("#!/bin/sh\necho '2.1.330 (Claude Code)'\n")
(_BIN / "bin" / "claude").chmod(0o755)

_ENV = {k: v for k, v in os.environ.items() if k not in ("MEMLENS_AGENTS", "GEMINI_CLI_HOME")}
CLAUDE_ON_PATH = ClientServerConfig(
    server_command=SERVE,
    server_env={**_ENV, "PATH": f"{_BIN / 'bin'}:/usr/bin:/bin", "MEMLENS_LOG_LEVEL": "WARNING",
                "XDG_CACHE_HOME": str(_BIN / "cache")})
NOTHING_ON_PATH = ClientServerConfig(
    server_command=SERVE,
    server_env={**_ENV, "PATH": "/usr/bin:/bin", "MEMLENS_LOG_LEVEL": "WARNING",
                "XDG_CACHE_HOME": str(_BIN / "cache")})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    build_tree(root, CLAUDE_ONLY)
    return root / "repo"


async def _open_folder(client: LanguageClient, folder: Path, home: Path, *,
                       trusted: bool) -> None:
    """Initialise as the VS Code extension does, on `folder`, with the window's trust."""
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        root_uri=uri(folder),
        workspace_folders=[types.WorkspaceFolder(uri=uri(folder), name=folder.name)],
        initialization_options={"memlens": {"home": str(home), "trusted": trusted}}))
    await client.protocol.send_request_async("memlens/refresh", {})


async def _request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return plain(await client.protocol.send_request_async(method, params))


@pytest_lsp.fixture(config=CLAUDE_ON_PATH)
async def claude_only(lsp_client: LanguageClient, repo: Path) -> AsyncIterator[LanguageClient]:
    await _open_folder(lsp_client, repo, repo.parent / "home", trusted=True)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CLAUDE_ON_PATH)
async def restricted(lsp_client: LanguageClient, repo: Path) -> AsyncIterator[LanguageClient]:
    await _open_folder(lsp_client, repo, repo.parent / "home", trusted=False)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=NOTHING_ON_PATH)
async def subfolder(lsp_client: LanguageClient, repo: Path) -> AsyncIterator[LanguageClient]:
    await _open_folder(lsp_client, repo / "src", repo.parent / "home", trusted=True)
    yield lsp_client
    await lsp_client.shutdown_session()


def _gemini_not_offered(answer: dict[str, Any]) -> None:
    """Gemini CLI neither in use nor with files; side by side, when offered with Gemini CLI,
    is the offer of every agent (the user's choice), never Gemini CLI's alone."""
    gemini = next(a for a in answer["agents"] if a["agent"] == "gemini")
    assert (gemini["chosen"], gemini["hasFiles"]) == (False, False)
    side = answer["sideBySide"]
    assert "gemini" not in side or side == list(AGENT_IDS)


@pytest.mark.asyncio
async def test_agents_offer_claude_code_and_not_gemini_cli(
        claude_only: LanguageClient, repo: Path) -> None:
    answer = await _request(claude_only, "memlens/agents", {"uri": uri(repo)})
    first = answer["agents"][0]
    assert (first["agent"], first["chosen"], first["hasFiles"], first["installed"]) == (
        "claude", True, True, "2.1.330")
    assert [a["agent"] for a in answer["agents"] if a["chosen"]] == ["claude"]
    _gemini_not_offered(answer)
    # The status item for a file that is no agent's memory: Claude Code's view.
    shown = await _request(claude_only, "memlens/show", {"uri": uri(repo / "src" / "app.py")})
    assert shown["dialect"] == "claude" and shown["agentLabel"].startswith("Claude Code")
    assert "Claude rules for the whole repository." in shown["content"]
    assert shown["trusted"] is True and shown.get("notice") is None
    tree = await _request(claude_only, "memlens/memoryTree", {})
    (folder,) = tree["folders"]
    assert folder.get("notice") is None and "Gemini" not in (folder.get("agentLabel") or "")
    assert [a["agent"] for a in folder["otherAgents"]][:1] == ["claude"]
    # The Skills view's Gemini CLI group: not where Gemini CLI is not shown.
    skills = await _request(claude_only, "memlens/skills", {"uri": uri(repo)})
    assert skills["shown"] is False
    # "List Memory Files": Claude Code's files only, as `memlens list --agent claude` lists them.
    listing = await _request(claude_only, "memlens/list", {"uri": uri(repo)})
    assert [a["agent"] for a in listing["agents"]] == ["claude"]
    (claude,) = listing["agents"]
    assert claude["label"] == "Claude Code"
    assert [f["path"] for f in claude["files"]] == [str(repo / "CLAUDE.md"),
                                                    str(repo / ".claude" / "rules" / "src.md")]
    assert claude["files"][0]["chars"] == len((repo / "CLAUDE.md").read_text())
    assert claude["files"][1]["tier"] == "rule (paths: src)"  # scoped by paths: src/**


@pytest.mark.asyncio
async def test_restricted_mode_gives_no_gemini_trust_notice_where_gemini_is_not_shown(
        restricted: LanguageClient, repo: Path) -> None:
    tree = await _request(restricted, "memlens/memoryTree", {})
    (folder,) = tree["folders"]
    assert folder.get("notice") is None and folder.get("trustRules") is None
    shown = await _request(restricted, "memlens/show", {"uri": uri(repo / "src" / "app.py")})
    assert shown["dialect"] == "claude" and shown.get("notice") is None


@pytest.mark.asyncio
async def test_a_claude_md_above_the_workspace_folder_applies(
        subfolder: LanguageClient, repo: Path) -> None:
    """The workspace folder is src/, nothing is on PATH: the CLAUDE.md above it is what Claude
    Code loads there, so Claude Code is offered first, with files; Gemini CLI not at all."""
    answer = await _request(subfolder, "memlens/agents", {"uri": uri(repo / "src")})
    assert [(a["agent"], a["chosen"], a["hasFiles"]) for a in answer["agents"]][:1] == [
        ("claude", False, True)]
    assert not any(a["chosen"] for a in answer["agents"])
    _gemini_not_offered(answer)
    shown = await _request(subfolder, "memlens/show", {"uri": uri(repo / "src" / "app.py")})
    assert shown["dialect"] == "claude"
    assert "Claude rules for the whole repository." in shown["content"]


@pytest_lsp.fixture(config=NOTHING_ON_PATH)
async def no_agent(lsp_client: LanguageClient, tmp_path: Path) -> AsyncIterator[LanguageClient]:
    root = Path(os.path.realpath(tmp_path)) / "plain"
    build_tree(root, {"src/app.py": "print(1)\n", "README.md": "# plain\n"})
    (root.parent / "home").mkdir()
    await _open_folder(lsp_client, root, root.parent / "home", trusted=True)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_where_no_agent_is_shown_the_status_names_none(
        no_agent: LanguageClient, tmp_path: Path) -> None:
    """Nothing on PATH, no agent's files: the status item's answer names no agent (not
    Gemini CLI's view under another name) and loads nothing."""
    root = Path(os.path.realpath(tmp_path)) / "plain"
    shown = await _request(no_agent, "memlens/show", {"uri": uri(root / "src" / "app.py")})
    assert shown["dialect"] is None and shown["fileCount"] == 0
    assert shown["summary"] == "no agent in use in plain" and shown["agentLabel"] == ""
