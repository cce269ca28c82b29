"""memlens/matrix through the real server and a real LSP client: the Agent Matrix panel's
data is the workspace service's (the same as `memlens report --json`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from memlens.protocol.matrix import MatrixResult

from ..conftest import build_tree
from .conftest import SERVER, plain, start

TREE = {
    ".git": None,
    "GEMINI.md": "# Gemini rules\n@./docs/style.md\n",
    "docs/style.md": "Style\n",
    "CLAUDE.md": "# Claude rules\n",
    ".claude/rules/py.md": "---\npaths:\n  - \"src/**/*.py\"\n---\nPython rule\n",
    "AGENTS.md": "# Agents\n",
    "home/.gemini/GEMINI.md": "Global\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    build_tree(root, TREE)
    return root


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, repo: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, repo)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_matrix_is_the_reports(client: LanguageClient, repo: Path) -> None:
    answer = await client.protocol.send_request_async("memlens/matrix", {})
    result = MatrixResult.model_validate(plain(answer))
    cells = {row.relative: {a: c.state for a, c in row.cells.items()} for row in result.rows}
    assert cells["GEMINI.md"]["gemini"] == "startup"
    assert cells["docs/style.md"]["gemini"] == "startup"
    assert cells["CLAUDE.md"]["claude"] == "startup"
    assert cells[".claude/rules/py.md"]["claude"] == "on-read"
    assert cells["AGENTS.md"]["agents"] == "startup"
    assert "codex" not in cells["AGENTS.md"]  # not in use, no files of its own here
    assert cells["CLAUDE.md"]["gemini"] == "not-read"
    # The CLI, asked the same in another process, says the same.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "server"),
           "MEMLENS_LOG_LEVEL": "WARNING"}
    done = subprocess.run([sys.executable, "-m", "memlens", "report", str(repo), "--trusted",
                           "--home", str(repo / "home")], env=env, capture_output=True,
                          text=True, check=True)
    cli = MatrixResult.model_validate(json.loads(done.stdout))
    # The cells by agent, in the columns' order (pygls's client renames a key that is no
    # Python identifier, `vscode-chat`, by its position: `_4`).
    assert [a.id for a in cli.agents] == [a.id for a in result.agents]
    assert [(r.path, [c.state for c in r.cells.values()]) for r in cli.rows] == [
        (r.path, [c.state for c in r.cells.values()]) for r in result.rows]


@pytest.mark.asyncio
async def test_a_folder_that_is_not_one_is_refused(client: LanguageClient, repo: Path) -> None:
    with pytest.raises(JsonRpcException, match="not a folder"):
        await client.protocol.send_request_async("memlens/matrix",
                                                 {"folder": str(repo / "nope")})
