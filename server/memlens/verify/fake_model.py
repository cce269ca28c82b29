"""One local fake model server for the real agents
(docs/reference.md "Conformance with the real agents").

It listens on 127.0.0.1, speaks just enough of three wire formats for an agent to finish a
prompt, records every request body, and follows a two-turn script:

* first turn: when ``read_path`` is set, a tool call that reads that path (Gemini CLI's
  ``read_file``, Claude Code's ``Read``, Copilot CLI's ``view``), so the memory an agent
  loads on read shows up in the next request; when ``tool_call`` is set, that call instead
  (Gemini's ``save_memory``, an MCP server's tool: on every wire format, when the agent
  offers a tool of that name); otherwise the final answer;
* second turn (the request already carries a tool result): the final answer.

The turn is decided from the request itself (does it hold a tool result?), not from a counter,
so retries and side requests (Gemini's router, Claude's small helper calls) cannot derail it.

Served:

* Gemini (generativelanguage REST): ``POST /v1beta/models/M:generateContent`` — JSON mode
  requests (the router) get a minimal instance of their ``responseJsonSchema``, others a text
  answer — and ``POST /v1beta/models/M:streamGenerateContent?alt=sse`` (the turn), one SSE
  ``data:`` chunk.
* Anthropic: ``POST /v1/messages`` (streamed: message_start, content_block_start/delta/stop,
  message_delta, message_stop; or one JSON message when ``stream`` is false) and
  ``/v1/messages/count_tokens``.
* OpenAI Responses: ``POST /v1/responses`` (response.created, response.output_item.done,
  response.completed). Codex loads nothing later: it gets the final answer, or
  ``tool_call`` as a ``function_call`` item on its first turn.
* OpenAI Chat Completions: ``POST /v1/chat/completions`` (streamed chunks then ``data:
  [DONE]``, or one JSON completion): GitHub Copilot CLI; with ``read_path`` its first turn calls
  the ``view`` tool on that path.

Anything else is recorded and answered 404.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

FINAL_TEXT = "Done."
_GEMINI_ROUTE = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<action>\w+)$")


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the agent sent it (the body parsed when it is JSON)."""

    method: str
    path: str
    query: str
    body: Any
    raw: bytes = field(repr=False)

    @property
    def route(self) -> str:
        """Which API the request belongs to: gemini-router, gemini-generate, gemini-stream,
        anthropic, anthropic-count, openai (Responses), openai-chat (Chat Completions), or
        other."""
        match = _GEMINI_ROUTE.match(self.path)
        if match:
            if match["action"] == "streamGenerateContent":
                return "gemini-stream"
            config = self.body.get("generationConfig", {}) if isinstance(self.body, dict) else {}
            if config.get("responseJsonSchema") or config.get("responseSchema"):
                return "gemini-router"
            return "gemini-generate"
        if self.path.endswith("/messages/count_tokens"):
            return "anthropic-count"
        if self.path.endswith("/messages"):
            return "anthropic"
        if self.path.endswith("/responses"):
            return "openai"
        if self.path.endswith("/chat/completions"):
            return "openai-chat"
        return "other"


def minimal_instance(schema: Any) -> Any:
    """The smallest value a JSON schema accepts, for the JSON-mode calls an agent makes
    (Gemini CLI's model router retries until it gets one)."""
    if not isinstance(schema, dict):
        return None
    for combiner in ("anyOf", "oneOf"):
        if schema.get(combiner):
            return minimal_instance(schema[combiner][0])
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    kind = str(kind).lower() if kind is not None else ("object" if "properties" in schema else "")
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        return {name: minimal_instance(properties.get(name, {})) for name in required}
    if kind == "array":
        return [minimal_instance(schema.get("items", {}))] * int(schema.get("minItems", 0))
    if kind in ("number", "integer"):
        # 1, not 0: Gemini CLI's classifier wants a score of 1..100 and its schema omits it
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "string":
        return "x" * int(schema.get("minLength", 0))
    return None


# ------------------------------------------------------------------------- Gemini


def _gemini_has_tool_result(body: dict[str, Any]) -> bool:
    return any(
        "functionResponse" in part
        for content in body.get("contents", [])
        for part in content.get("parts", [])
    )


def _gemini_read_args(body: dict[str, Any], path: str) -> dict[str, Any]:
    """read_file's path parameter is named differently across versions: take the required
    one from the tool declaration the agent sent."""
    for tool in body.get("tools", []):
        for declaration in tool.get("functionDeclarations", []):
            if declaration.get("name") == "read_file":
                schema = declaration.get("parametersJsonSchema") or declaration.get(
                    "parameters", {}
                )
                required = schema.get("required") or ["file_path"]
                return {required[0]: path}
    return {"file_path": path}


def _gemini_response(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
        "modelVersion": "fake-model",
    }


# ------------------------------------------------------------------------- Anthropic


def _anthropic_has_tool_result(body: dict[str, Any]) -> bool:
    return any(
        isinstance(message.get("content"), list)
        and any(block.get("type") == "tool_result" for block in message["content"])
        for message in body.get("messages", [])
    )


def _anthropic_blocks(body: dict[str, Any], read_path: str | None,
                      tool_call: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    offered = {tool.get("name") for tool in body.get("tools", [])}
    if tool_call and tool_call["name"] in offered and not _anthropic_has_tool_result(body):
        return [{"type": "tool_use", "id": "toolu_fake_call", "name": tool_call["name"],
                 "input": tool_call.get("args", {})}]
    if read_path and "Read" in offered and not _anthropic_has_tool_result(body):
        return [
            {"type": "tool_use", "id": "toolu_fake_read", "name": "Read",
             "input": {"file_path": read_path}}
        ]
    return [{"type": "text", "text": FINAL_TEXT}]


def _anthropic_events(body: dict[str, Any], blocks: list[dict[str, Any]]) -> Iterator[
    tuple[str, dict[str, Any]]
]:
    usage = {"input_tokens": 1, "output_tokens": 1}
    yield "message_start", {
        "type": "message_start",
        "message": {
            "id": "msg_fake", "type": "message", "role": "assistant",
            "model": body.get("model", "fake-model"), "content": [], "stop_reason": None,
            "stop_sequence": None, "usage": usage,
        },
    }
    for index, block in enumerate(blocks):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        yield "content_block_start", {
            "type": "content_block_start", "index": index, "content_block": start
        }
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop_reason = "tool_use" if blocks[-1]["type"] == "tool_use" else "end_turn"
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": 1},
    }
    yield "message_stop", {"type": "message_stop"}


# ------------------------------------------------------------------------- OpenAI


def _responses_has_tool_result(body: dict[str, Any]) -> bool:
    return any(isinstance(item, dict)
               and item.get("type") in ("function_call_output", "custom_tool_call_output")
               for item in body.get("input", []) or [])


def _responses_tool_names(tools: Any) -> Iterator[str]:
    """Every tool name offered, namespaces opened (Codex sends its tools as namespaces in an
    ``additional_tools`` input item rather than in ``tools``)."""
    for tool in tools or []:
        if isinstance(tool, dict):
            if tool.get("type") == "namespace":
                yield from _responses_tool_names(tool.get("tools"))
            elif isinstance(tool.get("name"), str):
                yield tool["name"]


def _responses_offers(body: dict[str, Any], name: str) -> bool:
    extra = [item.get("tools") for item in body.get("input", []) or []
             if isinstance(item, dict) and item.get("type") == "additional_tools"]
    return any(name in _responses_tool_names(tools) for tools in [body.get("tools"), *extra])


def _openai_events(body: dict[str, Any], tool_call: dict[str, Any] | None = None) -> Iterator[
    tuple[str, dict[str, Any]]
]:
    item: dict[str, Any] = {
        "type": "message", "id": "msg_fake", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}],
    }
    if (tool_call and _responses_offers(body, tool_call["name"])
            and not _responses_has_tool_result(body)):
        if "input" in tool_call:  # a freeform tool (Codex's `exec`): its input is raw text
            item = {"type": "custom_tool_call", "id": "ctc_fake", "call_id": "call_fake",
                    "name": tool_call["name"], "status": "completed",
                    "input": tool_call["input"]}
        else:
            item = {"type": "function_call", "id": "fc_fake", "call_id": "call_fake",
                    "name": tool_call["name"], "status": "completed",
                    "arguments": json.dumps(tool_call.get("args", {}))}
    response: dict[str, Any] = {
        "id": "resp_fake", "object": "response", "created_at": 0, "status": "in_progress",
        "model": body.get("model", "fake-model"), "output": [],
    }
    yield "response.created", {"type": "response.created", "response": response}
    yield "response.output_item.added", {
        "type": "response.output_item.added", "output_index": 0, "item": item
    }
    yield "response.output_item.done", {
        "type": "response.output_item.done", "output_index": 0, "item": item
    }
    usage = {
        "input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2,
    }
    yield "response.completed", {
        "type": "response.completed",
        "response": {**response, "status": "completed", "output": [item], "usage": usage},
    }


# ------------------------------------------------------------------------- OpenAI chat


def _chat_has_tool_result(body: dict[str, Any]) -> bool:
    return any(message.get("role") == "tool" for message in body.get("messages", []))


def _chat_offers(body: dict[str, Any], name: str) -> bool:
    return any(tool.get("function", {}).get("name") == name for tool in body.get("tools", []))


def _chat_tool_parameters(body: dict[str, Any], name: str) -> list[str]:
    """The parameters the offered tool `name` declares ([] when it is not offered)."""
    for tool in body.get("tools", []):
        function = tool.get("function") or {}
        if function.get("name") == name:
            properties = (function.get("parameters") or {}).get("properties") or {}
            return list(properties) if isinstance(properties, dict) else []
    return []


def _chat_chunks(body: dict[str, Any], read_path: str | None,
                 tool_call: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One streamed Chat Completions answer: on the first turn ``tool_call`` when offered,
    else a `view` call of ``read_path`` (Copilot CLI's read tool), else the final text; then
    the finish and the usage."""
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
            "model": body.get("model", "fake-model")}
    first_turn = not _chat_has_tool_result(body)
    wanted: tuple[str, dict[str, Any]] | None = None
    if tool_call and _chat_offers(body, tool_call["name"]) and first_turn:
        wanted = (tool_call["name"], tool_call.get("args", {}))
    elif read_path and _chat_offers(body, "view") and first_turn:
        wanted = ("view", {"path": read_path})
    elif read_path and first_turn and "path" in _chat_tool_parameters(body, "read"):
        wanted = ("read", {"path": read_path})  # pi's read tool
    elif read_path and _chat_offers(body, "read") and first_turn:
        wanted = ("read", {"filePath": read_path})  # OpenCode's read tool
    if wanted:
        call = {"index": 0, "id": f"call_fake_{wanted[0]}", "type": "function",
                "function": {"name": wanted[0], "arguments": json.dumps(wanted[1])}}
        delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": FINAL_TEXT}, "stop"
    return [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        {**base, "choices": [],
         "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
    ]


# ------------------------------------------------------------------------- server


class FakeModel:
    """The server; use as a context manager. ``requests`` grows as the agent calls."""

    def __init__(self, read_path: str | None = None, port: int = 0,
                 tool_call: dict[str, Any] | None = None) -> None:
        self.read_path = read_path
        # a tool to call on the first turn instead, {name, args}: Gemini's save_memory, an
        # MCP server's tool (called only when the agent offers a tool of that name)
        self.tool_call = tool_call
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def recorded(self, *routes: str) -> list[RecordedRequest]:
        """The requests of the given routes (see RecordedRequest.route), in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.route in routes]

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body: Any = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                parts = urlsplit(self.path)
                request = RecordedRequest(self.command, parts.path, parts.query, body, raw)
                fake._record(request)
                fake._answer(self, request)

        return Handler

    # -- answers

    def _answer(self, handler: BaseHTTPRequestHandler, request: RecordedRequest) -> None:
        route = request.route
        body = request.body if isinstance(request.body, dict) else {}
        if route == "gemini-router":
            config = body.get("generationConfig", {})
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            text = json.dumps(minimal_instance(schema))
            _send_json(handler, _gemini_response([{"text": text}]))
        elif route == "gemini-generate":
            _send_json(handler, _gemini_response([{"text": FINAL_TEXT}]))
        elif route == "gemini-stream":
            if self.tool_call and not _gemini_has_tool_result(body):
                parts: list[dict[str, Any]] = [
                    {"functionCall": {"name": self.tool_call["name"],
                                      "args": self.tool_call.get("args", {})}}]
            elif self.read_path and not _gemini_has_tool_result(body):
                call = {"name": "read_file", "args": _gemini_read_args(body, self.read_path)}
                parts = [{"functionCall": call}]
            else:
                parts = [{"text": FINAL_TEXT}]
            _send_sse(handler, [(None, _gemini_response(parts))])
        elif route == "anthropic-count":
            _send_json(handler, {"input_tokens": 1})
        elif route == "anthropic":
            blocks = _anthropic_blocks(body, self.read_path, self.tool_call)
            if body.get("stream"):
                _send_sse(handler, list(_anthropic_events(body, blocks)))
            else:
                stop = "tool_use" if blocks[-1]["type"] == "tool_use" else "end_turn"
                _send_json(handler, {
                    "id": f"msg_fake{next(self._ids)}", "type": "message", "role": "assistant",
                    "model": body.get("model", "fake-model"), "content": blocks,
                    "stop_reason": stop, "stop_sequence": None,
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                })
        elif route == "openai":
            _send_sse(handler, list(_openai_events(body, self.tool_call)))
        elif route == "openai-chat":
            chunks = _chat_chunks(body, self.read_path, self.tool_call)
            if body.get("stream", False):
                _send_sse(handler, [(None, c) for c in chunks], done=True)
            else:
                delta = chunks[0]["choices"][0]["delta"]
                _send_json(handler, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                    "model": body.get("model", "fake-model"),
                    "choices": [{"index": 0, "message": delta,
                                 "finish_reason": chunks[1]["choices"][0]["finish_reason"]}],
                    "usage": chunks[2]["usage"]})
        else:
            _send_json(handler, {"error": {"code": 404, "message": "not faked"}}, status=404)


def _send_json(handler: BaseHTTPRequestHandler, payload: Any, status: int = 200) -> None:
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _send_sse(
    handler: BaseHTTPRequestHandler, events: list[tuple[str | None, dict[str, Any]]],
    *, done: bool = False,
) -> None:
    """The events as one SSE body; `done`: closed by `data: [DONE]` (Chat Completions)."""
    chunks = []
    for name, payload in events:
        head = f"event: {name}\n" if name else ""
        chunks.append(f"{head}data: {json.dumps(payload)}\n\n")
    if done:
        chunks.append("data: [DONE]\n\n")
    data = "".join(chunks).encode()
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def main() -> None:
    """Run the fake by hand: every request body is appended to --record as a JSON line."""
    parser = argparse.ArgumentParser(prog="python -m memlens.verify.fake_model")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--read", help="path the first turn asks the agent to read")
    parser.add_argument("--record", help="JSON-lines file to append each request to")
    args = parser.parse_args()
    with FakeModel(read_path=args.read, port=args.port) as fake:
        print(fake.base_url, flush=True)
        seen = 0
        try:
            while True:
                threading.Event().wait(0.2)
                with fake._lock:
                    new = fake.requests[seen:]
                seen += len(new)
                if args.record and new:
                    with open(args.record, "a", encoding="utf-8") as out:
                        for r in new:
                            out.write(json.dumps(
                                {"route": r.route, "path": r.path, "query": r.query,
                                 "body": r.body}) + "\n")
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
