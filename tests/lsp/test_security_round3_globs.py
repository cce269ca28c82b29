"""Issue 30, item 7, over the language server: a Copilot `applyTo` of 16 stars and a file with
a 60-character name never stop the first index (before the fix `memlens/ready` never came:
the workspace check ran the glob on Python's backtracking `re`); the server then answers, and
its workspace diagnostics say the glob matches no file. The command line's side is in
tests/test_security_round3_globs.py.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from ..conftest import build_tree
from .conftest import SERVE, plain, uri

READY_SECONDS = 60.0  # a hang guard: the index is ready in about a second
STARS = "*a" * 15 + "*b"
NAME = "a" * 60

CLEAN = ClientServerConfig(
    server_command=SERVE,
    server_env={**{k: v for k, v in os.environ.items() if not k.startswith("GEMINI_")},
                "MEMLENS_LOG_LEVEL": "WARNING"})


@pytest_lsp.fixture(config=CLEAN)
async def stars_client(lsp_client: LanguageClient, workspace: Path
                       ) -> AsyncIterator[LanguageClient]:
    build_tree(workspace, {
        ".github/instructions/x.instructions.md": f'---\napplyTo: "{STARS}"\n---\nTabs.\n',
        ".github/copilot-instructions.md": "Copilot: run make test.\n",
        ".cursor/rules/x.mdc": f'---\nglobs: "{STARS}"\n---\nTabs.\n',
        NAME: "x\n",
    })
    ready: list[Any] = []

    @lsp_client.feature("memlens/ready")
    def on_ready(params: Any) -> None:
        ready.append(plain(params))

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        return None

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        workspace_folders=[types.WorkspaceFolder(uri=uri(workspace), name="ws")],
        initialization_options={"memlens": {"home": str(workspace / "home"), "trusted": True,
                                            "agents": ["copilot", "cursor", "vscode-chat"]}}))
    deadline = time.monotonic() + READY_SECONDS
    while not ready:
        assert time.monotonic() < deadline, "memlens/ready never came: the index never finished"
        await asyncio.sleep(0.05)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_16_star_applyto_never_stops_the_first_index(stars_client: LanguageClient,
                                                          workspace: Path) -> None:
    shown = plain(await stars_client.protocol.send_request_async(
        "memlens/show", {"uri": uri(workspace / ".github" / "copilot-instructions.md"),
                         "agent": "copilot"}))
    assert isinstance(shown, dict)
    report = await stars_client.workspace_diagnostic_async(
        types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    codes = {str(d.code) for item in report.items for d in getattr(item, "items", [])}
    assert {"copilot-applyto-unmatched", "cursor-glob-no-match"} <= codes, codes
