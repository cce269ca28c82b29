"""The model's pass of `memlens conflicts --model` (docs/reference.md "Rules that disagree"):
off unless asked, with the chat's key and settings (google-genai).

Only pairs of files that one agent receives together (workspace/conflicts.py `file_sets`) are
asked about; each answer is cached by content (the model, this prompt's version and the two
texts) in `$XDG_CACHE_HOME/memlens/conflicts-model.json`. The model must quote both rules: a
quote not found verbatim in its file drops the finding. Its findings are its judgement, kept
apart from the rule set's."""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from memlens.agent.config import ChatSettings
from memlens.agent.gemini import make_client
from memlens.files.fsread import FileReader
from memlens.protocol.conflicts import ConflictRule, ModelFinding
from memlens.workspace.conflicts import file_sets
from memlens.workspace.reading import AgentReading

PROMPT_VERSION = 1
# Bounds on what one run asks: pairs, and characters of each file sent.
MAX_PAIRS = 25
MAX_CHARS = 20_000
PROMPT = """Two instruction files that a coding agent receives together follow. List only
rules in FILE A and FILE B that contradict each other: following one makes following the
other impossible (different package managers, commands, versions, styles; "never X" against
"always X"). Rules that only differ in detail, apply to different parts of the project, or
are examples, are not contradictions. Quote each rule exactly as written, one line each.
Answer an empty list when there are none."""


class ModelContradiction(BaseModel):
    """One contradiction as the model answers it (its response schema)."""

    quote_a: str
    quote_b: str
    explanation: str


class ModelAnswer(BaseModel):
    contradictions: list[ModelContradiction]


def cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memlens", "conflicts-model.json")


def review(readings: Sequence[AgentReading], chat: ChatSettings, api_key: str | None,
           reader: FileReader | None = None, cache: str | None = None
           ) -> tuple[list[ModelFinding], list[str]]:
    """The model's findings for the file pairs the agents receive together, and notes (pairs
    skipped, answers refused)."""
    reader = reader or FileReader()
    cache = cache or cache_path()
    pairs: dict[tuple[str, str], list[str]] = {}
    for reading in readings:
        for scope, paths in file_sets(reading):
            when = (f"{reading.agent.label} at start-up" if scope is None
                    else scope.replace("{agent}", reading.agent.label))
            fresh = paths if scope is None else paths[-1:]
            for b in fresh:
                for a in paths:
                    if a == b or (scope is None and paths.index(a) > paths.index(b)):
                        continue
                    pairs.setdefault((a, b), [])
                    if when not in pairs[(a, b)]:
                        pairs[(a, b)].append(when)
    notes: list[str] = []
    if len(pairs) > MAX_PAIRS:
        notes.append(f"{len(pairs)} pairs of files; the model was asked about the first "
                     f"{MAX_PAIRS}")
    kept = _load(cache)
    client: Any = None
    findings: list[ModelFinding] = []
    for (a, b), agents in list(pairs.items())[:MAX_PAIRS]:
        text_a, text_b = reader.read(a).content, reader.read(b).content
        if not text_a or not text_b:
            continue
        key = hashlib.sha256(json.dumps([chat.model, PROMPT_VERSION, text_a, text_b])
                             .encode("utf-8", "surrogatepass")).hexdigest()
        cached = key in kept
        if not cached:
            if client is None:
                client = make_client(api_key, chat)
            answer = _ask(client, chat, a, text_a, b, text_b)
            if answer is None:
                notes.append(f"the model's answer for {posixpath.basename(a)} and "
                             f"{posixpath.basename(b)} was not the JSON asked for: skipped")
                continue
            kept[key] = [c.model_dump() for c in answer.contradictions]
            _save(cache, kept)
        for item in kept[key]:
            try:
                said = ModelContradiction.model_validate(item)
            except ValidationError:
                continue
            first, second = _rule(a, text_a, said.quote_a), _rule(b, text_b, said.quote_b)
            if first is None or second is None:
                notes.append(f"a contradiction the model quoted between {posixpath.basename(a)}"
                             f" and {posixpath.basename(b)} is not in the files: dropped")
                continue
            findings.append(ModelFinding(model=chat.model, rules=[first, second],
                                         explanation=said.explanation, agents=agents,
                                         cached=cached))
    return findings, notes


def _ask(client: Any, chat: ChatSettings, a: str, text_a: str, b: str, text_b: str
         ) -> ModelAnswer | None:
    from google.genai import types

    contents = (f"{PROMPT}\n\nFILE A ({posixpath.basename(a)}):\n{text_a[:MAX_CHARS]}\n\n"
                f"FILE B ({posixpath.basename(b)}):\n{text_b[:MAX_CHARS]}\n")
    response = client.models.generate_content(
        model=chat.model, contents=contents,
        config=types.GenerateContentConfig(response_mime_type="application/json",
                                           response_schema=ModelAnswer, temperature=0))
    try:
        return ModelAnswer.model_validate_json(response.text or "")
    except ValidationError:
        return None


def _rule(path: str, text: str, quote: str) -> ConflictRule | None:
    """The quoted line of `text`, when the quote is there verbatim (white space aside)."""
    wanted = " ".join(quote.split())
    if not wanted:
        return None
    for number, line in enumerate(text.splitlines(), 1):
        flat = " ".join(line.split())
        if wanted in flat:
            col = line.find(wanted.split(" ")[0]) + 1
            return ConflictRule(path=path, line=number, col=max(col, 1),
                                end_col=len(line) + 1, value=wanted, quote=line.strip())
    return None


def _load(path: str) -> dict[str, list[Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != 1:
        return {}
    answers = data.get("answers")
    return answers if isinstance(answers, dict) else {}


def _save(path: str, answers: dict[str, list[Any]]) -> None:
    from memlens.files.atomic import atomic_write

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        atomic_write(path, json.dumps({"format": 1, "answers": answers}))
    except OSError:
        pass  # the cache is an optimisation: no answer is lost by not keeping it
