"""Every custom request that is about a workspace folder, in a window of two folders: the
request that names the second folder is answered for the second folder; one that names none
is refused with InvalidParams (nothing says which folder the user means: never silently the
first). A single-root window's request may still leave its only folder out (test_matrix.py,
test_verify.py)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from memlens.protocol.matrix import MatrixResult

from ..conftest import build_tree
from .conftest import SERVE, plain, uri

INVALID_PARAMS = -32602
# No agent on PATH (nothing for verify to run) and no trust from the developer's environment.
NODE_DIRS = [os.path.dirname(p) for p in [os.popen("command -v node").read().strip()] if p]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GEMINI_CLI_")}
SERVER = ClientServerConfig(
    server_command=SERVE,
    server_env={**ENV, "MEMLENS_LOG_LEVEL": "WARNING",
                "PATH": os.pathsep.join([*NODE_DIRS, "/usr/bin", "/bin"]),
                "MEMLENS_VERIFICATIONS": f"/tmp/memlens-multi-root-{os.getpid()}.json"})


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    build_tree(root, {
        "home/.keep": "",
        "alpha/.git": None,
        "alpha/CLAUDE.md": "# Alpha rules\n",
        "alpha/src/a.py": "a = 1\n",
        "beta/.git": None,
        "beta/AGENTS.md": "# Beta rules\n",
        "beta/api/AGENTS.md": "# Beta API rules\n",
        "beta/api/app.py": "print('hi')\n",
    })
    return root


async def start(client: LanguageClient, folders: list[Path], home: Path) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        root_uri=uri(folders[0]),
        workspace_folders=[types.WorkspaceFolder(uri=uri(f), name=f.name) for f in folders],
        initialization_options={"memlens": {"home": str(home), "trusted": True}}))
    await client.protocol.send_request_async("memlens/refresh", {})


@pytest_lsp.fixture(config=SERVER)
async def two(lsp_client: LanguageClient, base: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, [base / "alpha", base / "beta"], base / "home")
    yield lsp_client
    await lsp_client.shutdown_session()


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return plain(await client.protocol.send_request_async(method, params))


async def refused(client: LanguageClient, method: str, params: dict[str, Any]) -> str:
    """The message of the InvalidParams error `method` answers."""
    with pytest.raises(JsonRpcException) as caught:
        await client.protocol.send_request_async(method, params)
    assert caught.value.code == INVALID_PARAMS, (method, caught.value)
    return str(caught.value.message)


@pytest.mark.asyncio
async def test_the_matrix_of_the_folder_the_request_names(two: LanguageClient,
                                                          base: Path) -> None:
    beta = base / "beta"
    result = MatrixResult.model_validate(
        await request(two, "memlens/matrix", {"folder": str(beta)}))
    assert result.folder == str(beta)
    assert [row.relative for row in result.rows] == ["AGENTS.md", "api/AGENTS.md"]
    assert result.rows[0].cells["agents"].state == "startup"
    alpha = MatrixResult.model_validate(
        await request(two, "memlens/matrix", {"folder": str(base / "alpha")}))
    assert [row.relative for row in alpha.rows] == ["CLAUDE.md"]


@pytest.mark.asyncio
async def test_a_matrix_without_a_folder_is_refused(two: LanguageClient, base: Path) -> None:
    message = await refused(two, "memlens/matrix", {})
    assert message == (f"memlens/matrix needs `folder`: this window has 2 workspace folders "
                       f"({base / 'alpha'}, {base / 'beta'})")


@pytest.mark.asyncio
async def test_verify_in_the_folder_the_request_names(two: LanguageClient, base: Path) -> None:
    result = await request(two, "memlens/verify", {"folder": str(base / "beta")})
    assert result["path"] == str(base / "beta")
    assert {a["status"] for a in result["agents"]} == {"missing"}  # no agent on PATH here
    message = await refused(two, "memlens/verify", {})
    assert message.startswith("memlens/verify needs `folder`: this window has 2 workspace")


@pytest.mark.asyncio
async def test_the_agents_of_the_folder_the_request_names(two: LanguageClient,
                                                          base: Path) -> None:
    beta = await request(two, "memlens/agents", {"uri": uri(base / "beta" / "api" / "app.py")})
    alpha = await request(two, "memlens/agents", {"uri": uri(base / "alpha")})
    with_files = {name: [a["agent"] for a in answer["agents"] if a["hasFiles"]]
                  for name, answer in (("alpha", alpha), ("beta", beta))}
    assert with_files == {"alpha": ["claude"], "beta": ["agents"]}
    assert (await refused(two, "memlens/agents", {})).startswith(
        "memlens/agents needs `uri`: this window has 2 workspace folders")


@pytest.mark.asyncio
@pytest.mark.parametrize(("method", "params"), [
    ("memlens/skills", {}),
    ("memlens/agentSkills", {}),
    ("memlens/inbox", {}),
    ("memlens/inbox/accept", {"name": "x"}),
    ("memlens/addMemory", {"fact": "x", "scope": "project", "preview": True}),
    ("memlens/chat/send", {"sessionId": "s1", "text": "hello"}),
])
async def test_every_folder_request_without_one_is_refused(two: LanguageClient, method: str,
                                                           params: dict[str, Any]) -> None:
    message = await refused(two, method, params)
    assert message.startswith(f"{method} needs `uri`: this window has 2 workspace folders")


@pytest.mark.asyncio
async def test_a_file_outside_every_folder_is_refused(two: LanguageClient, base: Path) -> None:
    outside = base / "home" / ".keep"
    message = await refused(two, "memlens/skills", {"uri": uri(outside)})
    assert message.startswith(f"memlens/skills: {outside} is in none of this window's 2 "
                              "workspace folders")


@pytest.mark.asyncio
async def test_a_request_naming_the_second_folder_works_there(two: LanguageClient,
                                                              base: Path) -> None:
    beta = base / "beta"
    preview = await request(two, "memlens/addMemory", {"fact": "x", "scope": "project",
                                                       "preview": True, "uri": uri(beta)})
    # Gemini CLI's project memory of that folder (kept under HOME, named by the folder)
    assert preview["path"] == str(base / "home/.gemini/tmp/beta/memory/MEMORY.md")
    skills = await request(two, "memlens/agentSkills", {"uri": uri(beta / "api" / "app.py")})
    assert isinstance(skills["agents"], list)
