"""Multi-root workspaces (issue 11): each document is served with the settings and trust of
the workspace folder that holds it, not those of the first folder.

Folder A is trusted and its `.gemini/settings.json` names NOTES.md as the context file; folder
B uses the defaults (GEMINI.md) and, in two of the tests, is not trusted: by the client's
per-folder trust (`folderTrust`), or by Gemini CLI's trusted-folders rules.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from ..conftest import build_tree
from .conftest import SERVE, open_doc, plain, uri

# No GEMINI_CLI_TRUST_WORKSPACE or trusted-folders override from the developer's environment.
CLEAN = ClientServerConfig(
    server_command=SERVE,
    server_env={**{k: v for k, v in os.environ.items() if not k.startswith("GEMINI_")},
                "MEMLENS_LOG_LEVEL": "WARNING"})

NOTES_SETTINGS = json.dumps({"context": {"fileName": "NOTES.md"}})


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """HOME with global memory under both names; folder A (NOTES.md by its settings) and
    folder B (GEMINI.md). Each folder has both files, each importing a missing file."""
    root = Path(os.path.realpath(tmp_path))
    build_tree(root, {
        "home/.gemini/GEMINI.md": "Global: be brief.\n",
        "home/.gemini/NOTES.md": "Global notes: be kind.\n",
        "a/.git": None,
        "a/.gemini/settings.json": NOTES_SETTINGS,
        "a/NOTES.md": "# A notes\n@./missing-a.md\n",
        "a/GEMINI.md": "# A gemini\n@./unread-a.md\n",
        "b/.git": None,
        "b/GEMINI.md": "# B rules\n@./missing-b.md\n",
        "b/NOTES.md": "# B notes\n@./unread-b.md\n",
    })
    return root


async def start(client: LanguageClient, base: Path, **memlens: object) -> None:
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        root_uri=uri(base / "a"),
        workspace_folders=[types.WorkspaceFolder(uri=uri(base / "a"), name="a"),
                           types.WorkspaceFolder(uri=uri(base / "b"), name="b")],
        initialization_options={"memlens": {"home": str(base / "home"), **memlens}}))
    await client.protocol.send_request_async("memlens/refresh", {})


async def request(client: LanguageClient, method: str, params: dict[str, Any]) -> Any:
    return plain(await client.protocol.send_request_async(method, params))


async def codes(client: LanguageClient, path: Path) -> list[str]:
    report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    return [str(d.code) for d in report.items]


async def line_1_hover(client: LanguageClient, path: Path) -> str | None:
    doc = await open_doc(client, path)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=doc),
        position=types.Position(line=0, character=1)))
    if hover is None:
        return None
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def lens_titles(client: LanguageClient, path: Path) -> list[str]:
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=uri(path))))
    return [lens.command.title for lens in lenses or [] if lens.command]


def tree_files(tree: dict[str, Any], folder: Path) -> list[tuple[str, str]]:
    (found,) = [f for f in tree["folders"] if f["folder"] == str(folder)]
    return [(f["tier"], f["path"]) for f in found["files"]]


@pytest_lsp.fixture(config=CLEAN)
async def both_trusted(lsp_client: LanguageClient, base: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, base, trusted=True)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CLEAN)
async def b_untrusted(lsp_client: LanguageClient, base: Path) -> AsyncIterator[LanguageClient]:
    await start(lsp_client, base, folderTrust={uri(base / "a"): True, uri(base / "b"): False})
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CLEAN)
async def by_rules(lsp_client: LanguageClient, base: Path) -> AsyncIterator[LanguageClient]:
    """No trust from the client: Gemini CLI's trustedFolders.json trusts A alone."""
    rules = {str(base / "a"): "TRUST_FOLDER", str(base / "b"): "DO_NOT_TRUST"}
    build_tree(base, {"home/.gemini/trustedFolders.json": json.dumps(rules)})
    await start(lsp_client, base)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_each_folder_reads_its_own_context_file_name(both_trusted: LanguageClient,
                                                           base: Path) -> None:
    a, b = base / "a", base / "b"
    # Diagnostics: the context files of each folder are its own.
    assert await codes(both_trusted, a / "NOTES.md") == ["import-not-found"]
    assert await codes(both_trusted, a / "GEMINI.md") == []
    assert await codes(both_trusted, b / "GEMINI.md") == ["import-not-found"]
    assert await codes(both_trusted, b / "NOTES.md") == []
    everything = await both_trusted.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(
        previous_result_ids=[]))
    reported = {item.uri for item in everything.items if item.items}
    assert {uri(a / "NOTES.md"), uri(b / "GEMINI.md")} <= reported
    assert not {uri(a / "GEMINI.md"), uri(b / "NOTES.md")} & reported
    # The memory tree: each folder's startup files.
    tree = await request(both_trusted, "memlens/memoryTree", {})
    assert [f["folder"] for f in tree["folders"]] == [str(a), str(b)]
    assert tree_files(tree, a) == [("global", str(base / "home/.gemini/NOTES.md")),
                                   ("project", str(a / "NOTES.md"))]
    assert tree_files(tree, b) == [("global", str(base / "home/.gemini/GEMINI.md")),
                                   ("project", str(b / "GEMINI.md"))]
    # Hover and lens on line 1: a memory file in its own folder only.
    hover = await line_1_hover(both_trusted, a / "NOTES.md")
    assert hover is not None and f"**Merged context for `{a}`** — 2 memory files" in hover
    assert "A notes" in hover and "Global notes" in hover
    assert "A gemini" not in hover and "Global: be brief" not in hover
    assert await line_1_hover(both_trusted, a / "GEMINI.md") is None
    hover = await line_1_hover(both_trusted, b / "GEMINI.md")
    assert hover is not None and f"**Merged context for `{b}`** — 2 memory files" in hover
    assert "B rules" in hover and "B notes" not in hover
    assert await line_1_hover(both_trusted, b / "NOTES.md") is None
    assert any(t.startswith("2 memory files · ") for t in
               await lens_titles(both_trusted, a / "NOTES.md"))
    assert not any("memory file" in t for t in await lens_titles(both_trusted, b / "NOTES.md"))
    # memlens/show names the folder's own files; Add Memory writes with each folder's name.
    show = await request(both_trusted, "memlens/show", {"uri": uri(b / "GEMINI.md")})
    assert show["files"] == [str(base / "home/.gemini/GEMINI.md"), str(b / "GEMINI.md")]
    for folder, name in ((a, "NOTES.md"), (b, "GEMINI.md")):
        preview = await request(both_trusted, "memlens/addMemory", {
            "fact": "Use tabs", "scope": "global", "preview": True, "uri": uri(folder)})
        assert preview["path"] == str(base / "home" / ".gemini" / name)


async def assert_b_is_restricted(client: LanguageClient, base: Path,
                                 why: str = "Restricted Mode",
                                 lens: str = " · Restricted Mode") -> None:
    a, b = base / "a", base / "b"
    tree = await request(client, "memlens/memoryTree", {})
    folders = {f["folder"]: f for f in tree["folders"]}
    assert folders[str(a)]["trusted"] is True and folders[str(a)]["notice"] is None
    assert folders[str(b)]["trusted"] is False and folders[str(b)]["notice"]
    assert tree_files(tree, a)[-1] == ("project", str(a / "NOTES.md"))
    assert tree_files(tree, b) == [("global", str(base / "home/.gemini/GEMINI.md"))]
    show_a = await request(client, "memlens/show", {"uri": uri(a / "NOTES.md")})
    show_b = await request(client, "memlens/show", {"uri": uri(b / "GEMINI.md")})
    assert show_a["trusted"] is True and show_a["fileCount"] == 2
    assert show_b["trusted"] is False and show_b["fileCount"] == 1
    # A's settings file is read (A is trusted): NOTES.md is A's memory, with its problems.
    assert await codes(client, a / "NOTES.md") == ["import-not-found"]
    hover = await line_1_hover(client, a / "NOTES.md")
    assert hover is not None and "Restricted Mode" not in hover
    hover = await line_1_hover(client, b / "GEMINI.md")
    assert hover is not None and why in hover
    assert any(t.endswith(lens) for t in await lens_titles(client, b / "GEMINI.md"))
    assert not any(lens.strip(" ·") in t for t in await lens_titles(client, a / "NOTES.md"))


@pytest.mark.asyncio
async def test_per_folder_trust_from_the_client(b_untrusted: LanguageClient,
                                                base: Path) -> None:
    await assert_b_is_restricted(b_untrusted, base)


@pytest.mark.asyncio
async def test_per_folder_trust_from_gemini_rules(by_rules: LanguageClient,
                                                  base: Path) -> None:
    # (Gemini CLI's rule is why, not VS Code's Restricted Mode: the notice names the file.)
    await assert_b_is_restricted(by_rules, base, why="marks this folder DO_NOT_TRUST",
                                 lens=" · untrusted by trustedFolders.json")
    # The chat works in the folder its first message names: none in the untrusted one.
    events: list[dict[str, Any]] = []

    @by_rules.feature("memlens/chat/event")
    def on_event(params: Any) -> None:
        events.append(plain(params))  # type: ignore[arg-type]

    result = await request(by_rules, "memlens/chat/send", {
        "sessionId": "b-session", "text": "hi", "uri": uri(base / "b" / "GEMINI.md")})
    assert result["status"] == "error"
    assert any("untrusted workspace" in (e.get("message") or "") for e in events)


@pytest_lsp.fixture(config=CLEAN)
async def pulled(lsp_client: LanguageClient, base: Path) -> AsyncIterator[LanguageClient]:
    """A client without initialisation options, answering workspace/configuration per folder:
    A's editor setting names GEMINI.md (over A's settings file), B's names NOTES.md."""
    window = {"home": str(base / "home"), "trusted": True}
    lsp_client.set_configuration(window, section="memlens")
    for folder, name in (("a", "GEMINI.md"), ("b", "NOTES.md")):
        lsp_client.set_configuration({**window, "contextFileNames": [name]}, section="memlens",
                                     scope_uri=uri(base / folder))
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual_studio_code"),
        workspace_folders=[types.WorkspaceFolder(uri=uri(base / "a"), name="a"),
                           types.WorkspaceFolder(uri=uri(base / "b"), name="b")]))
    await lsp_client.protocol.send_request_async("memlens/refresh", {})
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_per_folder_settings_pulled_with_scope_uris(pulled: LanguageClient,
                                                          base: Path) -> None:
    a, b = base / "a", base / "b"
    assert await codes(pulled, a / "GEMINI.md") == ["import-not-found"]
    assert await codes(pulled, a / "NOTES.md") == []
    assert await codes(pulled, b / "NOTES.md") == ["import-not-found"]
    assert await codes(pulled, b / "GEMINI.md") == []
    tree = await request(pulled, "memlens/memoryTree", {})
    assert tree_files(tree, a)[-1] == ("project", str(a / "GEMINI.md"))
    assert tree_files(tree, b)[-1] == ("project", str(b / "NOTES.md"))


@pytest_lsp.fixture(config=CLEAN)
async def trusted_window(lsp_client: LanguageClient, base: Path) -> AsyncIterator[LanguageClient]:
    """VS Code trusts the window (`trusted`, as the extension sends it); Gemini CLI's
    trustedFolders.json marks B DO_NOT_TRUST and has no rule for A."""
    rules = {str(base / "b"): "DO_NOT_TRUST"}
    build_tree(base, {"home/.gemini/trustedFolders.json": json.dumps(rules)})
    await start(lsp_client, base, trusted=True)
    yield lsp_client
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_do_not_trust_rule_holds_in_a_trusted_window(trusted_window: LanguageClient,
                                                             base: Path) -> None:
    a, b = base / "a", base / "b"
    rules_file = str(base / "home" / ".gemini" / "trustedFolders.json")
    tree = await request(trusted_window, "memlens/memoryTree", {})
    folders = {f["folder"]: f for f in tree["folders"]}
    # A: no rule, trusted by the editor (its settings file is read: NOTES.md).
    assert folders[str(a)]["trusted"] is True and folders[str(a)]["notice"] is None
    assert tree_files(tree, a)[-1] == ("project", str(a / "NOTES.md"))
    # B: the rule wins over the window's trust, and the notice says which file to change.
    assert folders[str(b)]["trusted"] is False
    assert folders[str(b)]["notice"].startswith(
        f"Not trusted: {rules_file} marks this folder DO_NOT_TRUST")
    assert folders[str(b)]["trustRules"] == rules_file
    assert tree_files(tree, b) == [("global", str(base / "home/.gemini/GEMINI.md"))]
    show = await request(trusted_window, "memlens/show", {"uri": uri(b / "GEMINI.md")})
    assert show["trusted"] is False and show["trustRules"] == rules_file
    hover = await line_1_hover(trusted_window, b / "GEMINI.md")
    assert hover is not None and "marks this folder DO_NOT_TRUST" in hover
    assert "Open trustedFolders.json" in hover and "Restricted Mode" not in hover
    assert any(t.endswith(" · untrusted by trustedFolders.json") for t in
               await lens_titles(trusted_window, b / "GEMINI.md"))
    assert not any("untrusted" in t for t in await lens_titles(trusted_window, a / "NOTES.md"))
