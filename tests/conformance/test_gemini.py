"""Gemini CLI against memlens (docs/reference.md "Conformance with the real agents").

What the real agent sent is compared with ``memlens show --json`` (``prompt``: the system
instruction's memory part; ``sessionMemory``: the first user message's) and ``memlens jit
--json`` (what the read_file output gained): 0.43.0 with the default profile (``gemini@0.43``),
0.61.0 with ``--agent gemini@0.44`` (the ``gemini@0.44+`` profile); the versions are the
harness's (``MEMLENS_AGENT_VERSIONS`` runs another release as the reference it follows).
"""

from __future__ import annotations

import pytest

from tests.conformance.cases import Case, cases
from tests.conformance.conftest import Runs


def _payload(case: Case, runs: Runs, where: str) -> str:
    outcome = runs.get(case)
    texts = [p.text for p in outcome.capture.startup if p.where == where]
    assert texts, f"no {where} payload captured: {outcome.capture.notes}"
    return texts[0]


@pytest.mark.parametrize("case", cases("gemini", check="system"))
def test_system_instruction_memory(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.prediction["show"]["prompt"] == _payload(case, runs, "systemInstruction")


@pytest.mark.parametrize("case", cases("gemini", check="session"))
def test_session_memory(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.prediction["show"]["sessionMemory"] == _payload(case, runs, "session_context")


@pytest.mark.parametrize(
    "case", [c for c in cases("gemini", check="on-read") if c.values[0].scenario.read]
)
def test_after_read(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    sent = "".join(p.text for p in outcome.capture.on_read)
    assert not [n for n in outcome.capture.notes if "never answered" in n], outcome.capture.notes
    assert outcome.prediction["jit"] == sent


@pytest.mark.parametrize("case", cases("gemini", check="session"))
def test_payloads(case: Case, runs: Runs) -> None:
    """`payloads` (docs/reference.md "Which agent, which version"): the memory parts of the system
    instruction and of the first user message, in that order, the empty ones left out; after the
    read, the appended string."""
    outcome = runs.get(case)
    assert outcome.prediction is not None
    sent = [_payload(case, runs, "systemInstruction"), _payload(case, runs, "session_context")]
    assert outcome.prediction["payloads"] == [text for text in sent if text]
    if case.scenario.read:
        appended = "".join(p.text for p in outcome.capture.on_read)
        assert outcome.prediction["jit_payloads"] == ([appended] if appended else [])
