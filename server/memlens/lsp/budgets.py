"""memlens/countTokens: "count exactly" (issue 14) — the model's own count of what the line-1
code lens measures, through google-genai with the chat's key (the editor's SecretStorage key
sent by memlens/setApiKey, else GEMINI_API_KEY) and endpoint. The key is never logged."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from memlens.lsp.agent_bridge import chat_settings
from memlens.lsp.convert import path_of
from memlens.lsp.errors import InvalidParams, parse_params
from memlens.lsp.merged import folder_budget, folder_texts
from memlens.protocol.editor import CountTokensResponse, UriParams

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

COUNT_TOKENS = "memlens/countTokens"


def register(server: MemlensServer) -> None:
    @server.feature(COUNT_TOKENS)
    async def count_tokens(ls: MemlensServer, params: Any) -> dict[str, object]:
        from memlens.agent.count_tokens import CountFailed, NoApiKey, count_exact

        request = parse_params(UriParams, params)
        path = path_of(request.uri)
        if path is None:
            raise InvalidParams(f"not a file URI: {request.uri}")
        budget = folder_budget(ls.service, path)
        text = _text_of(ls, path)
        chat = chat_settings(ls, ls.service.folder_or_default(path))
        figures = {"uri": request.uri, "estimate": budget.total.tokens,
                   "chars": budget.total.chars, "bytes": budget.total.bytes}
        try:
            result = await asyncio.to_thread(count_exact, text, chat, ls.api_key)
        except NoApiKey:
            return CountTokensResponse.model_validate({
                **figures, "error": "Counting exactly needs a Gemini API key: run Memory Lens: "
                                    "Set Gemini API Key"}).wire()
        except CountFailed as error:
            return CountTokensResponse.model_validate({**figures, "error": str(error)}).wire()
        return CountTokensResponse.model_validate({**figures, "tokens": result.tokens,
                                                   "model": result.model}).wire()


def _text_of(ls: MemlensServer, path: str) -> str:
    """The files' texts taken together, as `folder_budget` measures them."""
    return "".join(text for _, _, text in folder_texts(ls.service, path) if text is not None)
