"""FakeGemini driven by the real google-genai client over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from google import genai
from google.genai import errors, types

from .fake_gemini import (
    NO_SCRIPT_MESSAGE,
    REDACTED,
    FakeGemini,
    RecordedRequest,
    chunk,
    drop,
    error,
    fake_gemini,  # noqa: F401 - the ready-made fixture, used by name below
    function_call,
    hang,
    raw,
    text,
    thought,
)

KEY = "test-key-123"
MODEL = "gemini-2.5-flash"

READ_MEMORY = types.FunctionDeclaration(
    name="read_memory",
    description="Read one memory file.",
    parameters=types.Schema(
        type=types.Type.OBJECT,
        properties={"path": types.Schema(type=types.Type.STRING)},
        required=["path"],
    ),
)


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


@pytest.fixture
def client(fake: FakeGemini) -> Iterator[genai.Client]:
    c = genai.Client(
        api_key=KEY,
        vertexai=False,
        http_options=types.HttpOptions(base_url=fake.base_url, api_version="v1beta"),
    )
    yield c
    c.close()


def _post(fake: FakeGemini, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    """A bare HTTP call, for what the SDK never sends."""
    conn = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    try:
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read().decode()
        return resp.status, json.loads(data) if data.strip() else None
    finally:
        conn.close()


async def _eventually(predicate: Callable[[], bool], timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


# ------------------------------------------------------------------ generate_content


def test_sync_generate_content_and_what_was_sent(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(text("Hello", ", world"))
    resp = client.models.generate_content(
        model=MODEL,
        contents="Summarise GEMINI.md",
        config=types.GenerateContentConfig(
            system_instruction="You explain memory files.",
            temperature=0.2,
            max_output_tokens=256,
            tools=[types.Tool(function_declarations=[READ_MEMORY])],
        ),
    )
    assert resp.text == "Hello, world"
    cand = resp.candidates[0]
    assert cand.finish_reason == types.FinishReason.STOP
    assert resp.usage_metadata is not None and resp.usage_metadata.total_token_count
    assert resp.model_version == MODEL and resp.response_id

    (req,) = fake.requests
    assert req.method == "POST"
    assert req.path == f"/v1beta/models/{MODEL}:generateContent" and req.query == {}
    assert req.api_version == "v1beta" and req.model == MODEL and not req.stream
    assert req.system_text == "You explain memory files."
    assert req.contents == [{"role": "user", "parts": [{"text": "Summarise GEMINI.md"}]}]
    assert req.last_user_text == "Summarise GEMINI.md"
    assert req.generation_config == {"temperature": 0.2, "maxOutputTokens": 256}
    assert req.function_names == ["read_memory"]
    assert req.function_declarations[0]["parameters"]["required"] == ["path"]
    assert req.headers["content-type"] == "application/json"
    assert req.headers["user-agent"].startswith("google-genai-sdk/")
    assert req.status == 200 and req.outcome == "scripted" and req.completed
    fake.assert_done()


def test_api_key_sent_in_header_and_redacted(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(text("ok"))
    client.models.generate_content(model=MODEL, contents="hi")
    req = fake.last_request
    assert req.api_key_sent and req.api_key_matches is True
    assert req.headers["x-goog-api-key"] == REDACTED
    assert KEY not in repr(req) and KEY not in json.dumps(req.headers)


def test_wrong_or_missing_key_is_rejected_like_the_real_api(fake: FakeGemini) -> None:
    fake.enqueue(text("never served"))
    wrong = fake.client(api_key="not-the-key")
    with pytest.raises(errors.ClientError) as exc:
        wrong.models.generate_content(model=MODEL, contents="hi")
    assert exc.value.code == 400 and exc.value.status == "INVALID_ARGUMENT"
    assert "API key not valid" in (exc.value.message or "")
    assert fake.last_request.api_key_sent and fake.last_request.api_key_matches is False

    # The SDK will not send a request without a key; the real API answers 403 then.
    status, body = _post(fake, f"/v1beta/models/{MODEL}:generateContent", b'{"contents": []}', {})
    assert status == 403 and body["error"]["status"] == "PERMISSION_DENIED"
    assert fake.last_request.api_key_sent is False
    assert fake.remaining == 1  # rejected requests do not use up the script


@pytest.mark.asyncio
async def test_async_generate_content(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(text("async ", "answer"))
    resp = await client.aio.models.generate_content(model=MODEL, contents="hi")
    assert resp.text == "async answer"
    assert fake.last_request.path.endswith(":generateContent")
    await client.aio.aclose()


def test_sdk_default_api_version_is_v1(fake: FakeGemini) -> None:
    fake.enqueue(text("ok"))
    c = genai.Client(api_key=KEY, http_options=types.HttpOptions(base_url=fake.base_url))
    assert c.models.generate_content(model=MODEL, contents="hi").text == "ok"
    assert fake.last_request.path == f"/v1/models/{MODEL}:generateContent"


def test_the_ready_made_fixture(fake_gemini: FakeGemini) -> None:  # noqa: F811
    fake_gemini.enqueue(text("from the fixture"))
    client = fake_gemini.client()  # keep a reference: Client.__del__ closes its transport
    assert client.models.generate_content(model=MODEL, contents="x").text == "from the fixture"
    assert fake_gemini.last_request.api_key_matches is True
    fake_gemini.assert_done()


# ------------------------------------------------------------------------- streaming


def test_stream_text_in_chunks(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(text("One", " two", " three"))
    chunks = list(client.models.generate_content_stream(model=MODEL, contents="count"))
    assert [c.text for c in chunks] == ["One", " two", " three"]
    assert [c.candidates[0].finish_reason for c in chunks] == [None, None, types.FinishReason.STOP]
    assert all(c.usage_metadata and c.usage_metadata.prompt_token_count for c in chunks)
    req = fake.last_request
    assert req.path == f"/v1beta/models/{MODEL}:streamGenerateContent"
    assert req.query == {"alt": "sse"} and req.stream
    assert req.events_sent == 3 and req.completed


@pytest.mark.asyncio
async def test_async_stream(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(text("a", "b"))
    stream = await client.aio.models.generate_content_stream(model=MODEL, contents="x")
    got = [c.text async for c in stream]
    assert got == ["a", "b"]
    await client.aio.aclose()


def test_stream_without_alt_sse_is_a_json_array(fake: FakeGemini) -> None:
    fake.enqueue(text("x", "y"))
    status, body = _post(
        fake,
        f"/v1beta/models/{MODEL}:streamGenerateContent",
        b'{"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}',
        {"x-goog-api-key": KEY, "Content-Type": "application/json"},
    )
    assert status == 200
    assert [b["candidates"][0]["content"]["parts"][0]["text"] for b in body] == ["x", "y"]


# -------------------------------------------------------------- tools and thoughts


def test_function_call_round_trip(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(
        function_call("read_memory", {"path": "GEMINI.md"}, id="call-1", signature=b"sig-1"),
        text("It says hello."),
    )
    chat = client.chats.create(
        model=MODEL,
        config=types.GenerateContentConfig(
            tools=[types.Tool(function_declarations=[READ_MEMORY])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        ),
    )
    first = chat.send_message("What does GEMINI.md say?")
    (call,) = first.function_calls or []
    assert (call.name, call.args, call.id) == ("read_memory", {"path": "GEMINI.md"}, "call-1")
    assert first.candidates[0].content.parts[0].thought_signature == b"sig-1"

    response = types.Part.from_function_response(name=call.name, response={"output": "hello"})
    response.function_response.id = call.id
    second = chat.send_message(response)
    assert second.text == "It says hello."

    req = fake.requests[1]
    assert [c["role"] for c in req.contents] == ["user", "model", "user"]
    assert req.contents[1]["parts"] == [
        {
            "functionCall": {"id": "call-1", "name": "read_memory", "args": {"path": "GEMINI.md"}},
            "thoughtSignature": "c2lnLTE=",  # the signature echoed back, base64
        }
    ]
    assert req.function_responses == [
        {"id": "call-1", "name": "read_memory", "response": {"output": "hello"}}
    ]
    assert req.function_names == ["read_memory"]  # tools are sent again on every turn
    fake.assert_done()


def test_parallel_calls_in_one_chunk_and_raw_malformed_call(
    fake: FakeGemini, client: genai.Client
) -> None:
    fake.enqueue(
        chunk(function_call("a", {}), function_call("b", {"n": 1})),
        raw({"candidates": [{"finishReason": "MALFORMED_FUNCTION_CALL", "index": 0}]}),
    )
    both = client.models.generate_content(model=MODEL, contents="x")
    assert [c.name for c in both.function_calls or []] == ["a", "b"]
    bad = list(client.models.generate_content_stream(model=MODEL, contents="x"))
    assert bad[-1].candidates[0].finish_reason == types.FinishReason.MALFORMED_FUNCTION_CALL


def test_thought_part(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(thought("**Planning** the answer"), thought("hm") + text("Answer"))
    config = types.GenerateContentConfig(
        thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=128)
    )
    resp = client.models.generate_content(model=MODEL, contents="x", config=config)
    (p,) = resp.candidates[0].content.parts
    assert p.thought is True and p.text == "**Planning** the answer"
    assert resp.text is None  # .text leaves thoughts out
    assert resp.usage_metadata.thoughts_token_count

    chunks = list(client.models.generate_content_stream(model=MODEL, contents="x", config=config))
    assert [(c.candidates[0].content.parts[0].thought, c.text) for c in chunks] == [
        (True, None),
        (None, "Answer"),
    ]
    # Nested config keys go out as the SDK spells them (snake_case here).
    assert fake.last_request.generation_config["thinkingConfig"] in (
        {"includeThoughts": True, "thinkingBudget": 128},
        {"include_thoughts": True, "thinking_budget": 128},
    )


def test_callable_turn_sees_the_request(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(lambda req: text(f"echo: {req.last_user_text}"))
    assert client.models.generate_content(model=MODEL, contents="ping").text == "echo: ping"


# ---------------------------------------------------------------------------- errors


def test_429_then_success_with_sdk_retry(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(error(429, times=2, retry_delay="1s"), text("finally"))
    retry = types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.05, jitter=0)
    resp = client.models.generate_content(
        model=MODEL,
        contents="x",
        config=types.GenerateContentConfig(http_options=types.HttpOptions(retry_options=retry)),
    )
    assert resp.text == "finally"
    assert [r.status for r in fake.requests] == [429, 429, 200]
    assert fake.requests[0].body == fake.requests[2].body  # the very same request, re-sent


def test_429_without_retry_options_is_a_client_error(
    fake: FakeGemini, client: genai.Client
) -> None:
    fake.enqueue(error(429, "Quota exceeded", retry_delay="7s"))
    with pytest.raises(errors.ClientError) as exc:
        client.models.generate_content(model=MODEL, contents="x")
    assert (exc.value.code, exc.value.status, exc.value.message) == (
        429,
        "RESOURCE_EXHAUSTED",
        "Quota exceeded",
    )
    assert exc.value.details["error"]["details"][0]["retryDelay"] == "7s"
    assert len(fake.requests) == 1  # no retry by default


@pytest.mark.parametrize(("status", "name"), [(500, "INTERNAL"), (503, "UNAVAILABLE")])
def test_5xx_is_a_server_error(
    fake: FakeGemini, client: genai.Client, status: int, name: str
) -> None:
    fake.enqueue(error(status))
    with pytest.raises(errors.ServerError) as exc:
        list(client.models.generate_content_stream(model=MODEL, contents="x"))
    assert exc.value.code == status and exc.value.status == name


def test_error_in_the_middle_of_a_stream(fake: FakeGemini, client: genai.Client) -> None:
    # How the API reports a failure once the stream has started.
    fake.enqueue(text("partial") + raw({"error": {"code": 500, "message": "boom"}}))
    seen: list[str | None] = []
    with pytest.raises(errors.ServerError, match="boom"):
        for c in client.models.generate_content_stream(model=MODEL, contents="x"):
            seen.append(c.text)
    assert seen == ["partial"]


def test_dropped_connection(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(text("partial") + drop())
    seen: list[str | None] = []
    with pytest.raises(Exception, match=r"incomplete|closed|Disconnected") as exc:
        for c in client.models.generate_content_stream(model=MODEL, contents="x"):
            seen.append(c.text)
    assert not isinstance(exc.value, errors.APIError)
    assert seen == ["partial"] and fake.last_request.outcome == "dropped"


def test_empty_script_fails_loudly(fake: FakeGemini, client: genai.Client) -> None:
    with pytest.raises(errors.ServerError, match=NO_SCRIPT_MESSAGE) as exc:
        client.models.generate_content(model=MODEL, contents="x")
    assert exc.value.code == 500
    assert fake.last_request.outcome == "unscripted"
    with pytest.raises(AssertionError, match=NO_SCRIPT_MESSAGE):
        fake.assert_done()


def test_leftover_turns_and_unknown_endpoints_are_reported(fake: FakeGemini) -> None:
    fake.enqueue(text("unused"))
    status, body = _post(fake, "/v1beta/models/x:embedContent", b"{}", {"x-goog-api-key": KEY})
    assert status == 404 and body["error"]["status"] == "NOT_FOUND"
    with pytest.raises(AssertionError, match="never requested") as exc:
        fake.assert_done()
    assert "embedContent" in str(exc.value)


def test_count_tokens_is_answered_from_the_text_not_the_script(
        fake: FakeGemini, client: genai.Client) -> None:
    """countTokens (issue 14's "count exactly"): one token per whitespace-separated word of
    the text parts, whatever is scripted; the key is checked as for any call."""
    fake.enqueue(text("still queued"))
    assert client.models.count_tokens(model="m", contents="one two  three\nfour"
                                      ).total_tokens == 4
    assert fake.remaining == 1 and fake.generate_requests == []
    (counted,) = fake.count_requests
    assert counted.outcome == "counted" and counted.api_key_matches is True
    fake.clear()


# ---------------------------------------------------------- delays and cancellation


def test_sync_stream_abandoned_midway(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(text("first") + hang(10) + text("never"))
    start = time.monotonic()
    for c in client.models.generate_content_stream(model=MODEL, contents="x"):
        assert c.text == "first"
        break  # the generator is dropped here, which closes the response
    fake.wait_until(lambda: fake.requests[0].disconnected, timeout=3)
    assert time.monotonic() - start < 3
    req = fake.requests[0]
    assert req.events_sent == 1 and not req.completed


@pytest.mark.asyncio
async def test_async_stream_cancelled_midway(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(text("first") + hang(10) + text("never"))
    got_first = asyncio.Event()

    async def consume() -> None:
        stream = await client.aio.models.generate_content_stream(model=MODEL, contents="x")
        async for c in stream:
            assert c.text == "first"
            got_first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(got_first.wait(), 3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await _eventually(lambda: fake.requests[0].disconnected)
    assert fake.requests[0].events_sent == 1
    await client.aio.aclose()


def test_client_timeout_while_the_server_hangs(fake: FakeGemini, client: genai.Client) -> None:
    fake.enqueue(hang(10) + text("too late"))
    start = time.monotonic()
    with pytest.raises(Exception, match=r"(?i)timed? ?out") as exc:
        client.models.generate_content(
            model=MODEL, contents="x", config={"http_options": {"timeout": 300}}
        )
    assert "Timeout" in type(exc.value).__name__
    assert time.monotonic() - start < 2
    fake.wait_until(lambda: fake.requests[0].disconnected, timeout=3)
    assert fake.requests[0].headers["x-server-timeout"] == "1"  # ceil(0.3 s)


def test_stop_does_not_wait_for_a_hanging_answer() -> None:
    fake = FakeGemini(expect_key=KEY)
    fake.enqueue(hang(30))
    client = fake.client()
    outcome: list[BaseException] = []

    def call() -> None:
        try:
            client.models.generate_content(model=MODEL, contents="x")
        except BaseException as e:  # the connection goes away under it
            outcome.append(e)

    worker = threading.Thread(target=call)
    worker.start()
    fake.wait_for_requests(1)
    start = time.monotonic()
    fake.stop()
    worker.join(5)
    assert time.monotonic() - start < 3 and not worker.is_alive()
    assert outcome and not isinstance(outcome[0], errors.APIError)
    assert fake.requests[0].outcome == "stopped" and not fake.requests[0].completed
    fake.stop()  # idempotent


def test_requests_are_recorded_from_many_threads(fake: FakeGemini) -> None:
    n = 8
    fake.enqueue(*(text(f"r{i}") for i in range(n)))
    client = fake.client()
    results: list[str | None] = []
    lock = threading.Lock()

    def call(i: int) -> None:
        r = client.models.generate_content(model=MODEL, contents=f"q{i}")
        with lock:
            results.append(r.text)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(results, key=str) == sorted((f"r{i}" for i in range(n)), key=str)
    reqs: list[RecordedRequest] = fake.requests
    assert sorted(r.last_user_text for r in reqs) == sorted(f"q{i}" for i in range(n))
    assert [r.index for r in reqs] == list(range(n))
    fake.assert_done()
