"""memlens/show, memlens/list and memlens/refresh equal what the CLI prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from .conftest import plain, uri


def _data(result: Any) -> dict[str, Any]:
    data = plain(result)
    assert isinstance(data, dict)
    return data


@pytest.mark.asyncio
async def test_show_matches_the_cli(client: LanguageClient, workspace: Path) -> None:
    result = _data(await client.protocol.send_request_async(
        "memlens/show", {"uri": uri(workspace / "api" / "app.py")}))
    # --trusted: the same decision the editor sent (VS Code's workspace trust).
    cli = subprocess.run([sys.executable, "-m", "memlens", "show", str(workspace),
                          "--home", str(workspace / "home"), "--trusted"],
                         capture_output=True, text=True, check=True)
    assert result["content"] + "\n" == cli.stdout
    assert result["files"] == [str(workspace / "home" / ".gemini" / "GEMINI.md"),
                               str(workspace / "GEMINI.md")]
    assert result["fileCount"] == 2
    # Each file's block, by lines of `content`: the editor links these, parsing nothing.
    lines = result["content"].split("\n")
    sections = result["sections"]
    assert [s["path"] for s in sections] == result["files"]
    for section in sections:
        assert lines[section["startLine"]] == f"--- Context from: {section['path']} ---"
        assert lines[section["endLine"]] == f"--- End of Context from: {section['path']} ---"


@pytest.mark.asyncio
async def test_list_and_refresh(client: LanguageClient, workspace: Path) -> None:
    listing = _data(await client.protocol.send_request_async(
        "memlens/list", {"uri": uri(workspace)}))
    # Every agent shown, each listed as `memlens list --agent A --json` lists it.
    assert listing["cwd"] == str(workspace) and listing["agents"]
    for agent in listing["agents"]:
        cli = subprocess.run([sys.executable, "-m", "memlens", "list", str(workspace),
                              "--agent", agent["agent"], "--home", str(workspace / "home"),
                              "--trusted", "--json"],
                             capture_output=True, text=True, check=True)
        rows = [(f["tier"], f["path"], f.get("chars")) for f in agent["files"]]
        assert rows == [(f["tier"], f["path"], f.get("chars"))
                        for f in json.loads(cli.stdout)["files"]], agent["agent"]
    gemini = next(a for a in listing["agents"] if a["agent"] == "gemini")
    tiers = [(f["tier"], f["path"]) for f in gemini["files"]]
    assert tiers == [("global", str(workspace / "home" / ".gemini" / "GEMINI.md")),
                     ("project", str(workspace / "GEMINI.md"))]
    refreshed = _data(await client.protocol.send_request_async("memlens/refresh", {}))
    assert refreshed["fileCount"] == 5  # global, root, api, web, cycle


@pytest.mark.asyncio
async def test_memory_tree(client: LanguageClient, workspace: Path) -> None:
    tree = _data(await client.protocol.send_request_async("memlens/memoryTree", {}))
    (folder,) = tree["folders"]
    assert folder["folder"] == str(workspace) and folder["mode"] == "jit"
    rows = [(f["tier"], f["path"].removeprefix(str(workspace) + "/"), f["errors"])
            for f in folder["files"]]
    assert rows == [("global", "home/.gemini/GEMINI.md", 0),
                    ("project", "GEMINI.md", 2),
                    ("jit", "api/GEMINI.md", 0),
                    ("jit", "cycle/GEMINI.md", 0),
                    ("jit", "web/GEMINI.md", 0)]
    root = folder["files"][1]
    assert [(i["text"], i["line"], i["exists"]) for i in root["imports"]] == [
        ("@./docs/style.md", 2, True), ("@./docs/missing.md", 3, False),
        ("@../../outside.md", 4, False)]
