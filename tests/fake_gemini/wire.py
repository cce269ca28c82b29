"""The fake Gemini API's wire details: GenerateContentResponse envelopes (with running
usage), merging stream chunks into one response, reading a request body, and noticing a
client that went away."""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

from .recording import RecordedRequest
from .script import Turn, _Chunk, _Raw


class _Envelope:
    """Builds GenerateContentResponse chunks for one turn, with running usage."""

    def __init__(self, turn: Turn, rec: RecordedRequest, response_id: str) -> None:
        self.turn = turn
        self.model = rec.model or "gemini"
        self.response_id = response_id
        body = rec.body if isinstance(rec.body, dict) else {}
        prompt = json.dumps([body.get("systemInstruction"), body.get("contents")])
        self.prompt_tokens = max(1, len(prompt) // 4)
        self.candidate_tokens = 0
        self.thought_tokens = 0
        content_idx = [i for i, p in enumerate(turn.pieces) if isinstance(p, _Chunk)]
        self.last_content = content_idx[-1] if content_idx else None
        self.any_content = any(isinstance(p, _Chunk | _Raw) for p in turn.pieces)

    def build(self, piece: _Chunk | _Raw, position: int) -> dict[str, Any]:
        if isinstance(piece, _Raw):
            return json.loads(json.dumps(piece.body))  # a private copy
        for p in piece.parts:
            tokens = _tokens(p)
            if p.get("thought") is True:
                self.thought_tokens += tokens
            else:
                self.candidate_tokens += tokens
        final = position == self.last_content
        return self._envelope([dict(p) for p in piece.parts], final=final)

    def empty_final(self) -> dict[str, Any]:
        return self._envelope([], final=True)

    def _envelope(self, parts: list[dict[str, Any]], *, final: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        if final and self.turn.finish_reason is not None:
            candidate["finishReason"] = self.turn.finish_reason
        candidate["index"] = 0
        usage: dict[str, Any] = {"promptTokenCount": self.prompt_tokens}
        if self.candidate_tokens:
            usage["candidatesTokenCount"] = self.candidate_tokens
        usage["totalTokenCount"] = self.prompt_tokens + self.candidate_tokens + self.thought_tokens
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": self.prompt_tokens}]
        if self.thought_tokens:
            usage["thoughtsTokenCount"] = self.thought_tokens
        if final and self.turn.usage:
            usage.update(self.turn.usage)
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": self.model,
            "responseId": self.response_id,
        }


def _tokens(p: dict[str, Any]) -> int:
    if "text" in p:
        return max(1, len(p["text"]) // 4)
    return max(1, len(json.dumps(p)) // 4)


def _merge(bodies: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Stream chunks -> the single response generateContent gives: parts concatenated,
    adjacent plain texts joined, other fields from the later chunks."""
    if len(bodies) == 1:
        return bodies[0]
    merged: dict[str, Any] = {}
    candidate: dict[str, Any] = {}
    parts: list[dict[str, Any]] = []
    for b in bodies:
        for k, v in b.items():
            if k != "candidates":
                merged[k] = v
        cands = b.get("candidates") or []
        if cands:
            c = cands[0]
            parts.extend((c.get("content") or {}).get("parts") or [])
            candidate.update({k: v for k, v in c.items() if k != "content"})
    joined: list[dict[str, Any]] = []
    for p in parts:
        prev = joined[-1] if joined else None
        if (
            prev is not None
            and set(p) <= {"text", "thought"}
            and set(prev) <= {"text", "thought"}
            and p.get("thought") == prev.get("thought")
        ):
            joined[-1] = {**prev, "text": prev["text"] + p["text"]}
        else:
            joined.append(dict(p))
    result = {"candidates": [{"content": {"parts": joined, "role": "model"}, **candidate}]}
    result.update(merged)
    return result


def _read_body(h: BaseHTTPRequestHandler) -> bytes:
    if "chunked" in h.headers.get("Transfer-Encoding", "").lower():
        out = bytearray()
        while True:
            size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(out)
            out += h.rfile.read(size)
            h.rfile.readline()
    length = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(length) if length else b""


def _client_gone(sock: socket.socket) -> bool:
    """True once the peer has closed its end (HTTP/1.1 clients send nothing while
    they wait for an answer, so a readable socket means EOF or a reset)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):
        return True

