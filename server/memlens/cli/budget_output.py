"""`memlens list`'s budget figures (docs/reference.md "Budgets"): the tokens column, and
`--count-exact`, the model's own count through the Gemini API (the chat's key and endpoint)."""

from __future__ import annotations

from typing import Any


def tokens_cell(tokens: int | None) -> str:
    """The tokens column: `~N` (an estimate), `-` when the file is not readable."""
    return "-" if tokens is None else f"~{tokens}"


def count_exact_or_fail(text: str) -> tuple[int, str]:
    """(tokens, model) from the model's countTokens; a one-line usage error without a key or
    when the call fails (the key is never printed)."""
    from memlens.agent.config import ChatSettings
    from memlens.agent.count_tokens import CountFailed, NoApiKey, count_exact
    from memlens.cli.common import UsageError

    try:
        result = count_exact(text, ChatSettings.from_sources())
    except NoApiKey:
        raise UsageError("--count-exact needs a Gemini API key (GEMINI_API_KEY)") from None
    except CountFailed as error:
        raise UsageError(str(error)) from None
    return result.tokens, result.model


def with_exact(result: Any, cwd: str, settings: Any) -> None:
    """Fill `exact_tokens`/`exact_model` of a list result: the model's count of the files'
    texts taken together (the text the estimate measures)."""
    from memlens.agents.gemini.discovery import MemoryEngine

    load = MemoryEngine(settings).load(cwd)
    text = "".join(f.content or "" for f in load.files)
    result.exact_tokens, result.exact_model = count_exact_or_fail(text)
