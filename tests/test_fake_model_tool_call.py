"""The recording fake model's scripted tool call on every wire format (memlens.verify.
fake_model): on the first turn it calls `tool_call` when the agent offers a tool of that name
(how the MCP host tests, tests/conformance/test_mcp_host.py, make an agent call memlens mcp),
never a tool the agent did not offer, and answers once a tool result is back."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from memlens.verify.fake_model import FINAL_TEXT, FakeModel

CALL = {"name": "mcp__memlens__what_agent_reads", "args": {"agent": "claude", "path": "a.py"}}


def _post(fake: FakeModel, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(fake.base_url + path, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        raw = response.read().decode()
    if raw.startswith(("event:", "data:")):
        return [json.loads(line[6:]) for line in raw.splitlines()
                if line.startswith("data: ") and line != "data: [DONE]"]
    return json.loads(raw)


def test_anthropic_calls_the_offered_tool_then_answers() -> None:
    offered = {"stream": False, "tools": [{"name": CALL["name"]}],
               "messages": [{"role": "user", "content": "go"}]}
    with FakeModel(tool_call=CALL) as fake:
        first = _post(fake, "/v1/messages", offered)
        assert first["content"] == [{"type": "tool_use", "id": "toolu_fake_call",
                                     "name": CALL["name"], "input": CALL["args"]}]
        back = {**offered, "messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_fake_call", "content": "x"}]}]}
        assert _post(fake, "/v1/messages", back)["content"][0]["text"] == FINAL_TEXT
        assert _post(fake, "/v1/messages", {**offered, "tools": []})["content"][0]["type"] \
            == "text"


def test_responses_calls_a_tool_offered_inside_a_namespace_freeform_or_not() -> None:
    namespaced = {"input": [{"type": "additional_tools", "tools": [
        {"type": "namespace", "name": "functions", "tools": [{"type": "custom", "name": "exec"},
                                                             {"type": "function", "name": "f"}]}]}]}
    with FakeModel(tool_call={"name": "exec", "input": "text(1);"}) as fake:
        done = _post(fake, "/v1/responses", namespaced)[-1]["response"]["output"][0]
        assert done == {"type": "custom_tool_call", "id": "ctc_fake", "call_id": "call_fake",
                        "name": "exec", "status": "completed", "input": "text(1);"}
        back = {"input": [*namespaced["input"], {"type": "custom_tool_call_output",
                                                 "call_id": "call_fake", "output": "1"}]}
        assert _post(fake, "/v1/responses", back)[-1]["response"]["output"][0]["type"] \
            == "message"
    with FakeModel(tool_call={"name": "f", "args": {"a": 1}}) as fake:
        done = _post(fake, "/v1/responses", namespaced)[-1]["response"]["output"][0]
        assert (done["type"], done["name"], json.loads(done["arguments"])) == \
            ("function_call", "f", {"a": 1})
    with FakeModel(tool_call={"name": "absent", "args": {}}) as fake:
        assert _post(fake, "/v1/responses", namespaced)[-1]["response"]["output"][0]["type"] \
            == "message"


def test_chat_completions_calls_the_offered_tool_before_reading() -> None:
    name = "memlens-what_agent_reads"
    body = {"stream": False, "messages": [{"role": "user", "content": "go"}],
            "tools": [{"type": "function", "function": {"name": "view"}},
                      {"type": "function", "function": {"name": name}}]}
    with FakeModel(read_path="/w/a.py", tool_call={"name": name, "args": {"path": "a.py"}}) \
            as fake:
        message = _post(fake, "/v1/chat/completions", body)["choices"][0]["message"]
        call = message["tool_calls"][0]
        assert (call["id"], call["function"]["name"], json.loads(call["function"]["arguments"])) \
            == (f"call_fake_{name}", name, {"path": "a.py"})
        back = {**body, "messages": [*body["messages"], {"role": "tool", "content": "x"}]}
        assert _post(fake, "/v1/chat/completions", back)["choices"][0]["message"]["content"] \
            == FINAL_TEXT
