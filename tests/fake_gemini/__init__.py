"""A scriptable fake of the Gemini API (generativelanguage) for tests.

The real ``google-genai`` client talks to it over real HTTP on 127.0.0.1:

    from google import genai
    from tests.fake_gemini import FakeGemini, text, function_call

    with FakeGemini(expect_key="test-key") as fake:
        fake.enqueue(function_call("read_file", {"path": "GEMINI.md"}), text("Done", "."))
        client = genai.Client(
            api_key="test-key",
            http_options=genai.types.HttpOptions(base_url=fake.base_url, api_version="v1beta"),
        )
        ...
        assert fake.requests[1].function_responses[0]["name"] == "read_file"

Wire format, as google-genai (checked against 3.4.0) sends and parses it:

* ``POST {base_url}/{api_version}/models/{model}:generateContent`` answers one
  ``GenerateContentResponse`` as JSON.
* ``POST {base_url}/{api_version}/models/{model}:streamGenerateContent?alt=sse``
  answers ``text/event-stream`` (HTTP/1.1 chunked): one ``data: {json}\\r\\n\\r\\n``
  event per chunk, each chunk a ``GenerateContentResponse``. Without ``alt=sse`` the
  real API streams a JSON array; that is served too.
* The key travels in the ``x-goog-api-key`` header (``?key=`` is accepted as well, as
  the real API does). The SDK's default ``api_version`` is ``v1``; ``v1``, ``v1beta``
  and ``v1alpha`` are all served and the one used is recorded.
* Errors are Google's JSON error body ``{"error": {"code", "message", "status"}}``
  with the HTTP status; ``data: {"error": ...}`` inside a stream is what the API
  sends for a failure mid-stream (use :func:`raw` for that).

A script is a queue of turns, one per generate request, built from the helpers
:func:`text`, :func:`thought`, :func:`function_call`, :func:`part`, :func:`raw`,
:func:`chunk`, :func:`hang`, :func:`drop` (joined with ``+`` into one turn) and
:func:`error`. A callable ``f(request) -> Turn`` may stand in for a turn. When the
queue is empty the fake answers HTTP 500 "FakeGemini: no scripted response left".

SDK behaviour worth knowing when writing tests (google-genai 3.4.0):

* ``genai.Client.__del__`` closes its HTTP client, so keep a reference to the Client;
  ``make_client().models.generate_content(...)`` may fail with "client has been closed".
* Leaving a sync stream early (``break``) closes the connection. In async code, ``break``
  or ``aclose()`` on the stream does not: the connection stays open until the server
  finishes. Cancelling the consuming task does close it.

The modules: ``script`` (the turns and their helpers), ``recording`` (RecordedRequest),
``server`` (FakeGemini) and ``wire`` (response envelopes, body reading); import from
the package.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .recording import RecordedRequest
from .script import Turn, chunk, drop, error, function_call, hang, part, raw, text, thought
from .server import NO_SCRIPT_MESSAGE, REDACTED, FakeGemini


@pytest.fixture
def fake_gemini() -> Iterator[FakeGemini]:
    """A running FakeGemini expecting the key ``"test-key"``; stopped afterwards.

    Re-export it from a conftest (``from tests.fake_gemini import fake_gemini``) to use
    it by name; call ``fake_gemini.assert_done()`` to check the script was used up."""
    with FakeGemini(expect_key="test-key") as fake:
        yield fake


__all__ = [
    "NO_SCRIPT_MESSAGE",
    "REDACTED",
    "FakeGemini",
    "RecordedRequest",
    "Turn",
    "chunk",
    "drop",
    "error",
    "fake_gemini",
    "function_call",
    "hang",
    "part",
    "raw",
    "text",
    "thought",
]
