"""End-to-end LSP fixtures: the real server as a subprocess over stdio, a real client.

`workspace` builds a small but complete memory workspace (with a HOME of its own); `client`
starts `python -m memlens serve`, initialises it on that workspace and waits for the index.

`memlens_command(*args)` is the command that runs `python -m memlens ARGS` for these tests
(`SERVE` is `memlens_command("serve")`); use it as `server_command` or in `Popen`. Importing the
server costs about a second of CPU, once per test: so one fork server per session
(fork_server.py, started by the autouse `fork_server` fixture, stopped at the session's end;
forking.py `Forking` starts and stops one, tests/test_mcp.py has its own for `memlens mcp`)
has imported it, and the command is a launcher (fork_launch.py) that hands its stdin, stdout,
stderr, working folder, environment and arguments to it; a forked child runs exactly what
`python -m memlens ARGS` runs, on them, and the launcher forwards signals to it and exits as it
did (test_fork_server.py). An environment that differs where the imports read it (or in
PYTHON*, LC_*, LANG) runs the real command instead, with a warning at the end; so does every
run with MEMLENS_TEST_REAL_SERVER=1 or off Linux. Tests of start-up itself and of
`serve --tcp` (its token file is named by the server's pid) start `sys.executable -m memlens`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from ..conftest import build_tree
from .forking import Forking

# The fork server's environment: the tests' as it is now (what SERVER hands the server)
_FORKING = Forking("serve", dict(os.environ))
memlens_command = _FORKING.command
SERVE = memlens_command("serve")
SERVER = ClientServerConfig(server_command=SERVE,
                            server_env={**os.environ, "MEMLENS_LOG_LEVEL": "WARNING"})


@pytest.fixture(scope="session", autouse=True)
def fork_server() -> Iterator[dict[str, Any] | None]:
    """The session's fork server (see above), from before the first test here to after the
    last: what it said when ready (`read_at_import`: the environment variables its imports
    read), or None when the real command runs."""
    with _FORKING.running() as ready:
        yield ready


WORKSPACE = {
    ".git": None,
    "GEMINI.md": "# Project rules\n\n@./docs/style.md\n@./docs/missing.md\n"
                 "@../../outside.md\nSee `@./docs/in-code.md` too.\n",
    "docs/style.md": "## Style\nUse tabs. @./naming.md\n",
    "docs/naming.md": "Names are short.\n",
    "docs/a.md": "A imports @./b.md\n",
    "docs/b.md": "B imports @./a.md\n",
    "cycle/GEMINI.md": "Cycle root @../docs/a.md\n",
    "api/GEMINI.md": "# API rules\nValidate input.\n",
    "api/app.py": "print('hi')\n",
    "web/GEMINI.md": "# Web rules\n",
    "web/index.ts": "export {};\n",
    "home/.gemini/GEMINI.md": "Global: be brief.\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    build_tree(root, WORKSPACE)
    return root


def uri(path: Path | str) -> str:
    return Path(path).as_uri()


async def start(client: LanguageClient, root: Path, **settings: object) -> None:
    """Initialise as the VS Code extension does: it always sends the workspace's trust
    (`vscode.workspace.isTrusted`, true here) with the settings."""
    options = {"memlens": {"home": str(root / "home"), "trusted": True, **settings}}
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        root_uri=uri(root),
        workspace_folders=[types.WorkspaceFolder(uri=uri(root), name="ws")],
        initialization_options=options))
    # The index is built in `initialized`; any request after it is answered from the index.
    await client.protocol.send_request_async("memlens/refresh", {})


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, workspace: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, workspace)
    yield lsp_client
    await lsp_client.shutdown_session()


async def open_doc(client: LanguageClient, path: Path, text: str | None = None) -> str:
    doc_uri = uri(path)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(
            uri=doc_uri, language_id="markdown", version=1,
            text=path.read_text() if text is None else text)))
    return doc_uri


async def definition_at(client: LanguageClient, doc: str, line: int, character: int
                        ) -> object:
    """Go to definition at a 0-based position of an open document."""
    return await client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=line, character=character)))


def plain(value: object) -> object:
    """pygls hands custom payloads over as named tuples; turn them into plain JSON values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class ChatRecorder:
    """The client side of the chat: records `memlens/chat/event` notifications and answers
    `memlens/chat/approve` requests from `answers` in turn (then `default`)."""

    def __init__(self, client: LanguageClient, answers: list[str] | None = None,
                 default: str = "deny"):
        self.events: list[dict[str, Any]] = []
        self.approvals: list[dict[str, Any]] = []
        pending = list(answers or [])

        @client.feature("memlens/chat/event")
        def on_event(params: Any) -> None:
            self.events.append(plain(params))  # type: ignore[arg-type]

        @client.feature("memlens/chat/approve")
        def on_approve(params: Any) -> dict[str, Any]:
            self.approvals.append(plain(params))  # type: ignore[arg-type]
            return {"outcome": pending.pop(0) if pending else default}

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.events]

    async def wait_for(self, kind: str, seconds: float = 20) -> None:
        """Wait until an event of `kind` arrived (bounded, so a hang fails the test)."""
        for _ in range(int(seconds * 50)):
            if kind in self.kinds():
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"no {kind} event: {self.kinds()}")


async def send_chat(client: LanguageClient, session: str, text: str,
                    seconds: float = 30) -> dict[str, Any]:
    """One `memlens/chat/send`, answered within `seconds`."""
    result = await asyncio.wait_for(client.protocol.send_request_async(
        "memlens/chat/send", {"sessionId": session, "text": text}), seconds)
    return plain(result)  # type: ignore[return-value]


async def start_chat(client: LanguageClient, root: Path, base_url: str,
                     **chat: object) -> None:
    """Initialise as VS Code does on a trusted folder, the chat pointed at a fake Gemini."""
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        workspace_folders=[types.WorkspaceFolder(uri=uri(root), name="ws")],
        initialization_options={"memlens": {"home": str(root / "home"), "trusted": True,
                                            "chat": {"baseUrl": base_url, **chat}}}))
    await client.protocol.send_request_async("memlens/refresh", {})
