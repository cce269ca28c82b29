"""pi 0.73.1 against memlens's pi profile (docs/reference.md "pi"): what of its system message
comes from files (its appended prompt, a SYSTEM.md, the `# Project Context` of its context
files), byte for byte (``memlens show --agent pi --json``'s ``payloads``), and its `read` tool
adding nothing to what it returns."""

from __future__ import annotations

import pytest

from tests.conformance.cases import Case, cases
from tests.conformance.conftest import Runs


@pytest.mark.parametrize("case", cases("pi", check="startup"))
def test_startup_context(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.capture.exit_code == 0, outcome.capture.notes
    assert not outcome.capture.notes, outcome.capture.notes
    sent = [p.text for p in outcome.capture.startup]
    assert outcome.prediction["payloads"] == sent


@pytest.mark.parametrize("case", [c for c in cases("pi", check="on-read")
                                  if c.values[0].scenario.read])
def test_a_read_adds_nothing(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.capture.requests >= 2, outcome.capture.notes
    assert outcome.capture.on_read == []
