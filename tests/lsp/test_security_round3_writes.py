"""Issue 30 (round three), items 4 and 5, through the real language server: `memlens/addMemory`
with `agent: "claude"` never writes a memory folder the repository's own settings chose until
the request confirms that very folder (the editor asks first, in a modal), and never writes
through a MEMORY.md that is a symbolic link (docs/security.md, "Claude Code's memory folder").
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from .conftest import SERVER, plain, start, uri

BASHRC = "export PATH=$HOME/bin:$PATH\n"
FACT = "Staging is read-only"


@pytest.fixture
def hostile(workspace: Path) -> Path:
    """The workspace's own settings move Claude Code's memory to ~/.ssh; HOME has a .bashrc."""
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(json.dumps(
        {"autoMemoryDirectory": "~/.ssh"}))
    (workspace / "home" / ".bashrc").write_text(BASHRC)
    return workspace


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, hostile: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, hostile)
    yield lsp_client
    await lsp_client.shutdown_session()


async def add(client: LanguageClient, workspace: Path, **extra: object) -> dict[str, object]:
    result = plain(await client.protocol.send_request_async("memlens/addMemory", {
        "fact": FACT, "agent": "claude", "uri": uri(workspace / "GEMINI.md"), **extra}))
    assert isinstance(result, dict)
    return result


@pytest.mark.asyncio
async def test_a_folder_the_repository_chose_is_written_only_once_confirmed(
        client: LanguageClient, hostile: Path) -> None:
    ssh = hostile / "home" / ".ssh"
    settings = str(hostile / ".claude" / "settings.json")
    for extra in ({"preview": True}, {}, {"confirmedFolder": str(hostile / "home" / "other")}):
        refused = await add(client, hostile, **extra)
        assert (refused["success"], refused.get("needsConfirmation"), refused.get("chosenBy"),
                refused.get("memoryFolder"), refused.get("chosenIn")) == (
            False, True, "repository", str(ssh), settings), refused
        assert settings in str(refused["message"])
        assert not ssh.exists()
    # The editor's "Write there": the same request, naming the folder it was shown.
    preview = await add(client, hostile, preview=True, confirmedFolder=str(ssh))
    assert preview["success"] is True and preview["chosenBy"] == "repository", preview
    assert not ssh.exists()
    saved = await add(client, hostile, confirmedFolder=str(ssh), name=preview["name"])
    assert saved["success"] is True, saved
    assert sorted(p.name for p in ssh.iterdir()) == ["MEMORY.md", "staging-is-read-only.md"]


@pytest.mark.asyncio
async def test_a_memory_md_linked_to_bashrc_is_never_written_through(
        client: LanguageClient, hostile: Path) -> None:
    (hostile / ".claude" / "settings.json").unlink()  # the default folder
    slug = re.sub(r"[^a-zA-Z0-9]", "-", str(hostile))
    folder = hostile / "home" / ".claude" / "projects" / slug / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").symlink_to(hostile / "home" / ".bashrc")
    preview = await add(client, hostile, preview=True)
    assert preview["success"] is False and "symbolic link" in str(preview["message"]), preview
    saved = await add(client, hostile)
    assert saved["success"] is False and "symbolic link" in str(saved["message"]), saved
    assert (hostile / "home" / ".bashrc").read_text() == BASHRC
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md"]
