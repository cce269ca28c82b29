"""The google-genai client, and streaming with Gemini CLI's retry policy."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator, Awaitable
from typing import Any

from memlens.agent.config import ChatSettings


class NoApiKey(Exception):
    """No Gemini API key (nor Vertex AI configuration) is available."""


def uses_vertex() -> bool:
    return os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")


def make_client(api_key: str | None, chat: ChatSettings) -> Any:
    from google import genai
    from google.genai import types

    key = api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
    options = types.HttpOptions(base_url=chat.base_url) if chat.base_url else None
    if key:
        return genai.Client(api_key=key, http_options=options)
    if uses_vertex():
        return genai.Client(http_options=options)
    raise NoApiKey("Set your Gemini API key (Memory Lens: Set Gemini API Key, or the "
                   "GEMINI_API_KEY environment variable) to chat.")


def retryable(error: BaseException) -> bool:
    from google.genai import errors

    if isinstance(error, errors.APIError):
        return error.code == 429 or error.code >= 500
    # google-genai's HTTP library (httpx, or its fork httpx2) raises TransportError for
    # network failures; match it by name so either works.
    names = {cls.__name__ for cls in type(error).__mro__}
    return bool(names & {"TransportError", "ConnectionError", "TimeoutError"})


class StreamStalled(TimeoutError):
    """The model's stream sent nothing for the stall timeout (a TimeoutError, so it is
    retried as network errors are, while nothing has been received)."""

    def __init__(self, seconds: float, started: bool):
        self.seconds = seconds
        where = "after part of the answer" if started else "before any answer"
        super().__init__(f"The model's stream stalled: nothing arrived for {seconds:g} s "
                         f"{where} (memlens.chat.stallTimeoutMs)")


def describe(error: BaseException) -> str:
    from google.genai import errors

    if isinstance(error, StreamStalled):
        return str(error)

    if isinstance(error, errors.APIError):
        status = f"{error.code} {error.status or ''}".strip()
        return f"Gemini API error ({status}): {error.message or error}"
    return f"{type(error).__name__}: {error}"


def backoff_delays(chat: ChatSettings) -> list[float]:
    """Exponential backoff with ±30% jitter, capped (Gemini CLI's retryWithBackoff)."""
    delays = []
    delay = chat.initial_delay_ms / 1000
    for _ in range(chat.max_attempts - 1):
        jitter = delay * 0.3 * (random.random() * 2 - 1)
        delays.append(max(0.0, delay + jitter))
        delay = min(delay * 2, chat.max_delay_ms / 1000)
    return delays


async def _within(seconds: float | None, started: bool, step: Awaitable[Any]) -> Any:
    """Await one step of a stream (the response headers, the next chunk) for at most
    `seconds`; cancelling the step closes the connection under it."""
    if seconds is None:
        return await step
    try:
        return await asyncio.wait_for(step, seconds)
    except TimeoutError:
        raise StreamStalled(seconds, started) from None


async def stream_with_retries(client: Any, chat: ChatSettings, contents: list[Any],
                              config: Any, on_retry: Any) -> AsyncIterator[Any]:
    """Chunks of one model response. A failure before the first chunk is retried with backoff;
    after it, the error propagates (the partial answer cannot be resumed). Waiting longer than
    the stall timeout for the headers or for any chunk is such a failure (StreamStalled)."""
    delays = backoff_delays(chat)
    stall = chat.stall_timeout_ms / 1000 or None
    attempt = 0
    while True:
        started = False
        try:
            stream = await _within(stall, started, client.aio.models.generate_content_stream(
                model=chat.model, contents=contents, config=config))
            chunks = aiter(stream)
            while True:
                try:
                    chunk = await _within(stall, started, anext(chunks))
                except StopAsyncIteration:
                    return
                started = True
                yield chunk
        except asyncio.CancelledError:
            raise
        except Exception as error:
            if started or attempt >= len(delays) or not retryable(error):
                raise
            await on_retry(error, attempt + 1, delays[attempt])
            await asyncio.sleep(delays[attempt])
            attempt += 1
