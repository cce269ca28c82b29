"""The fake Gemini server (tests/fake_gemini/) as a process of its own, for the e2e suite.

    python tests/e2e/fake_gemini_server.py [--script FILE.json] --port-file PATH
                                           [--key KEY] [--exit-with-pid PID]

Starts ``FakeGemini(expect_key=KEY)`` on a free 127.0.0.1 port, writes its base URL
(``http://127.0.0.1:PORT``) to PATH (atomically, once it listens) and serves until killed
(SIGTERM / SIGINT), or until the process PID ends (``--exit-with-pid``: run-e2e.sh passes
its own, so a killed run leaves no server behind). KEY: ``--key``, else
``$MEMLENS_FAKE_GEMINI_KEY``, else ``e2e-fake-gemini-key``.

The script is a set of *conversations*, each answering the chat turns whose user message
contains ``match``; requests are routed by content, not by arrival order, so tests are
independent of their order, can be re-run, and a stray request cannot eat another test's
turns::

    {"conversations": [
      {"match": "e2e-7f3a: write the notes",
       "turns": [
         [{"text": ["Sure, ", "I will write it."]},
          {"functionCall": {"name": "write_file",
                            "args": {"file_path": "/abs/path", "content": "x"}}}],
         [{"delay": 0.3}, {"text": "Done."}]
       ]}
    ]}

``turns[n]`` answers the request that has ``n`` model turns after the matching user message
(0: the first model call of that chat turn; 1: the call after the first function responses;
...). A turn is a list of pieces joined in order: ``{"text": "a" | ["a", "b", ...]}`` (one
streamed chunk per string), ``{"thought": "..."}``, ``{"functionCall": {"name", "args",
"id"?}}``, ``{"delay": SECONDS}``, ``{"raw": {...}}``, ``{"drop": true}``; or a single
``{"error": {"status": 503, "message": "..."}}``. A request that matches no conversation, or
has no turn left, gets HTTP 400 (an error the agent does not retry), so a mistake shows at
once in the panel instead of after minutes of back-off.

Control endpoints (JSON), for tests that script themselves or check what the agent sent:

* ``POST /__fake/conversations`` ``{"conversations": [...]}`` (or one conversation) adds
  conversations (matched before those added earlier) and answers ``{"count": N}``.
* ``GET /__fake/requests`` answers ``{"requests": [...]}``: one summary per generate request
  (model, action, outcome, status, apiKeyMatches, conversation and turn routed to, the last
  user text, function calls and responses in the history); no key, no system prompt.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.fake_gemini import (  # noqa: E402
    FakeGemini,
    RecordedRequest,
    Turn,
    drop,
    error,
    function_call,
    hang,
    raw,
    text,
    thought,
)

DEFAULT_KEY = "e2e-fake-gemini-key"
CONTROL_PREFIX = "/__fake/"


class ScriptError(ValueError):
    pass


def build_turn(pieces: Any, where: str) -> Turn:
    """A Turn from its JSON form (see the module docstring)."""
    if isinstance(pieces, dict):
        pieces = [pieces]
    if not isinstance(pieces, list) or not pieces:
        raise ScriptError(f"{where}: a turn is a non-empty list of pieces")
    if len(pieces) == 1 and isinstance(pieces[0], dict) and "error" in pieces[0]:
        spec = pieces[0]["error"]
        if not isinstance(spec, dict) or not isinstance(spec.get("status"), int):
            raise ScriptError(f"{where}: error needs {{\"status\": int}}")
        return error(spec["status"], spec.get("message"))
    turn: Turn | None = None
    for i, piece in enumerate(pieces):
        at = f"{where}[{i}]"
        if not isinstance(piece, dict) or len(piece) != 1:
            raise ScriptError(f"{at}: a piece is an object with one key")
        (kind, value), = piece.items()
        if kind == "text":
            chunks = [value] if isinstance(value, str) else value
            if not isinstance(chunks, list) or not chunks or not all(
                    isinstance(c, str) for c in chunks):
                raise ScriptError(f"{at}: text is a string or a list of strings")
            part = text(*chunks)
        elif kind == "thought" and isinstance(value, str):
            part = thought(value)
        elif kind == "functionCall" and isinstance(value, dict) and isinstance(
                value.get("name"), str):
            part = function_call(value["name"], value.get("args") or {}, value.get("id"))
        elif kind == "delay" and isinstance(value, int | float):
            part = hang(float(value))
        elif kind == "raw" and isinstance(value, dict):
            part = raw(value)
        elif kind == "drop":
            part = drop()
        elif kind == "error":
            raise ScriptError(f"{at}: an error is a turn of its own")
        else:
            raise ScriptError(f"{at}: unknown piece {piece!r}")
        turn = part if turn is None else turn + part
    assert turn is not None
    return turn


class Conversation:
    def __init__(self, spec: Any, where: str) -> None:
        if not isinstance(spec, dict) or not isinstance(spec.get("match"), str) or not spec[
                "match"]:
            raise ScriptError(f"{where}: a conversation needs a non-empty \"match\" string")
        turns = spec.get("turns")
        if not isinstance(turns, list) or not turns:
            raise ScriptError(f"{where}: a conversation needs a non-empty \"turns\" list")
        self.match: str = spec["match"]
        self.turns = [build_turn(t, f"{where}.turns[{n}]") for n, t in enumerate(turns)]


def parse_conversations(data: Any, where: str) -> list[Conversation]:
    if isinstance(data, dict) and "conversations" in data:
        data = data["conversations"]
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ScriptError(f"{where}: expected {{\"conversations\": [...]}}")
    return [Conversation(c, f"{where}[{i}]") for i, c in enumerate(data)]


def _texts(content: dict[str, Any]) -> str:
    return "".join(p["text"] for p in content.get("parts", []) if isinstance(p, dict)
                   and isinstance(p.get("text"), str) and not p.get("thought"))


def locate(request: RecordedRequest) -> tuple[str, int]:
    """The chat turn's user message (the last user content with text) and how many model
    turns follow it in this request's history."""
    contents = [c for c in request.contents if isinstance(c, dict)]
    for i in range(len(contents) - 1, -1, -1):
        content = contents[i]
        if content.get("role", "user") == "user" and _texts(content):
            step = sum(1 for c in contents[i + 1:] if c.get("role") == "model")
            return _texts(content), step
    return "", 0


class ScriptedGemini(FakeGemini):
    """FakeGemini whose every generate request is routed to a conversation by content."""

    def __init__(self, key: str, conversations: list[Conversation]) -> None:
        super().__init__(expect_key=key, start=False)
        self.conversations = list(conversations)
        self.routes: dict[int, tuple[str | None, int]] = {}
        self.lock = threading.Lock()
        # FakeGemini pops one script item per request; this queue always yields the router.
        self._script = _Always(self.route)  # type: ignore[assignment]

    def route(self, request: RecordedRequest) -> Turn:
        prompt, step = locate(request)
        with self.lock:
            conversation = next((c for c in self.conversations if c.match in prompt), None)
            self.routes[request.index] = (conversation.match if conversation else None, step)
        if conversation is None:
            return error(400, "FakeGemini (e2e): no scripted conversation matches the user "
                         f"message {prompt[-200:]!r}")
        if step >= len(conversation.turns):
            return error(400, f"FakeGemini (e2e): the conversation {conversation.match!r} has "
                         f"{len(conversation.turns)} turn(s); turn {step + 1} was asked for")
        return conversation.turns[step]

    def add(self, conversations: list[Conversation]) -> int:
        with self.lock:
            self.conversations[:0] = conversations
            return len(self.conversations)

    def summaries(self) -> list[dict[str, Any]]:
        out = []
        for r in self.generate_requests:
            match, step = self.routes.get(r.index, (None, None))
            calls, responses = [], []
            for content in r.contents:
                for p in content.get("parts", []) if isinstance(content, dict) else []:
                    if isinstance(p, dict) and "functionCall" in p:
                        calls.append(p["functionCall"])
                    if isinstance(p, dict) and "functionResponse" in p:
                        responses.append(p["functionResponse"])
            out.append({
                "index": r.index, "model": r.model, "action": r.action,
                "apiVersion": r.api_version, "outcome": r.outcome, "status": r.status,
                "completed": r.completed, "apiKeyMatches": r.api_key_matches,
                "conversation": match, "turn": step,
                "lastUserText": locate(r)[0][-500:],
                "functionCalls": calls, "functionResponses": responses,
            })
        return out

    # ---- the control endpoints, ahead of FakeGemini's own handling
    def _handle(self, h: Any) -> None:
        if not h.path.startswith(CONTROL_PREFIX):
            super()._handle(h)
            return
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        path = h.path.split("?", 1)[0]
        try:
            if h.command == "GET" and path == CONTROL_PREFIX + "requests":
                self._reply(h, 200, {"requests": self.summaries()})
            elif h.command == "POST" and path == CONTROL_PREFIX + "conversations":
                added = parse_conversations(json.loads(body or b"null"), "body")
                self._reply(h, 200, {"count": self.add(added)})
            else:
                self._reply(h, 404, {"error": f"no control endpoint {h.command} {path}"})
        except (ValueError, ScriptError) as err:
            self._reply(h, 400, {"error": str(err)})

    @staticmethod
    def _reply(h: Any, status: int, payload: Any) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        h.send_response(status)
        h.send_header("Content-Type", "application/json; charset=UTF-8")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)


class _Always:
    """Stands in for FakeGemini's script queue: never empty, always the router."""

    def __init__(self, item: Any) -> None:
        self.item = item

    def popleft(self) -> Any:
        return self.item

    def __bool__(self) -> bool:
        return True

    def __len__(self) -> int:
        return 0

    def clear(self) -> None:
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", help="JSON file of conversations (see the docstring)")
    parser.add_argument("--port-file", required=True, help="where to write the base URL")
    parser.add_argument("--key", default=os.environ.get("MEMLENS_FAKE_GEMINI_KEY") or
                        DEFAULT_KEY, help="the API key the fake accepts")
    parser.add_argument("--exit-with-pid", type=int, help="stop when this process ends")
    args = parser.parse_args(argv)

    conversations: list[Conversation] = []
    if args.script:
        try:
            with open(args.script, encoding="utf-8") as handle:
                conversations = parse_conversations(json.load(handle), args.script)
        except (OSError, ValueError, ScriptError) as err:
            print(f"fake_gemini_server: bad script: {err}", file=sys.stderr)
            return 2

    fake = ScriptedGemini(args.key, conversations)
    fake.start()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: stop.set())
    tmp = f"{args.port_file}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(fake.base_url + "\n")
    os.replace(tmp, args.port_file)
    print(f"fake_gemini_server: serving {fake.base_url} ({len(conversations)} scripted "
          "conversation(s))", file=sys.stderr, flush=True)
    while not stop.wait(1.0):
        if args.exit_with_pid is not None:
            try:
                os.kill(args.exit_with_pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                pass
    fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
