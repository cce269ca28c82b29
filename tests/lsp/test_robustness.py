"""Unknown methods, malformed params and edits to documents the server never saw."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from .conftest import open_doc, uri


@pytest.mark.asyncio
async def test_unknown_method_is_a_json_rpc_error(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcException) as raised:
        await client.protocol.send_request_async("memlens/doesNotExist", {})
    assert raised.value.code == -32601  # MethodNotFound


@pytest.mark.asyncio
async def test_malformed_custom_params_get_a_clear_error(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcException) as raised:
        await client.protocol.send_request_async("memlens/show", {"url": "nope"})
    assert raised.value.code == -32602  # InvalidParams
    assert "uri" in str(raised.value)


@pytest.mark.asyncio
async def test_edit_to_unknown_document_is_ignored(client: LanguageClient,
                                                   workspace: Path) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(
            uri=uri(workspace / "never-opened.md"), version=3),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=5, character=2),
                              end=types.Position(line=9, character=0)), text="x")]))
    # The server is still alive and answering.
    doc = await open_doc(client, workspace / "GEMINI.md")
    links = await client.text_document_document_link_async(types.DocumentLinkParams(
        text_document=types.TextDocumentIdentifier(uri=doc)))
    assert len(links) == 1
