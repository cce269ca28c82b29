"""GitHub Copilot CLI 1.0.102 against memlens's copilot profile
(docs/reference.md "Which agent, which version"): the instructions of its system message at start
and the `<system_reminder>` message it adds after its `view` tool reads a path, byte for byte
(``memlens show --agent copilot --json``'s ``payloads`` and ``memlens jit --agent copilot
--json``'s)."""

from __future__ import annotations

import pytest

from tests.conformance.cases import Case, cases
from tests.conformance.conftest import Runs


@pytest.mark.parametrize("case", cases("copilot", check="startup"))
def test_startup_instructions(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.capture.requests, outcome.capture.notes
    assert not [n for n in outcome.capture.notes if "system message" in n], outcome.capture.notes
    sent = [p.text for p in outcome.capture.startup]
    assert outcome.prediction["payloads"] == sent


@pytest.mark.parametrize("case", [c for c in cases("copilot", check="on-read")
                                  if c.values[0].scenario.read])
def test_after_view(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.capture.requests >= 2, outcome.capture.notes
    sent = [p.text for p in outcome.capture.on_read]
    assert outcome.prediction["jit_payloads"] == sent
