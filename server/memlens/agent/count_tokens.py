""""Count exactly" (issue 14): the model's own token count of a context, through google-genai's
`client.models.count_tokens` (the Gemini API's countTokens), with the chat's key and endpoint.

The key comes from the editor (Memory Lens: Set Gemini API Key, held in SecretStorage) or
GEMINI_API_KEY / GOOGLE_API_KEY; it is never logged or put in a message.
"""

from __future__ import annotations

from dataclasses import dataclass

from memlens.agent.config import ChatSettings
from memlens.agent.gemini import NoApiKey, make_client


class CountFailed(Exception):
    """The countTokens call failed (the message names the status, never the key)."""


@dataclass(frozen=True)
class ExactCount:
    tokens: int
    model: str


def count_exact(text: str, chat: ChatSettings, api_key: str | None = None) -> ExactCount:
    """`text`'s tokens as the chat's model counts them (one user turn holding the text)."""
    from google.genai import errors

    client = make_client(api_key, chat)
    try:
        response = client.models.count_tokens(model=chat.model, contents=text)
    except errors.APIError as error:
        raise CountFailed(f"countTokens failed: {error.code} {error.status or ''}".rstrip()
                          ) from None
    except Exception as error:  # the transport's own errors (httpx)
        raise CountFailed(f"countTokens failed: {type(error).__name__}") from None
    return ExactCount(int(response.total_tokens or 0), chat.model)


__all__ = ["CountFailed", "ExactCount", "NoApiKey", "count_exact"]
