"""Claude Code 2.1.330 against memlens's claude dialect: which files it sends at start and
after the scripted Read, in order, and the text it sends then, byte for byte."""

from __future__ import annotations

import pytest

from tests.conformance.cases import Case, cases
from tests.conformance.conftest import Runs


@pytest.mark.parametrize("case", cases("claude", check="startup-files"))
def test_startup_files(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    sent = [b.path for b in outcome.capture.blocks if b.when == "startup"]
    assert outcome.prediction["startup"] == sent


@pytest.mark.parametrize(
    "case", [c for c in cases("claude", check="on-read-files") if c.values[0].scenario.read]
)
def test_on_read_files(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert not [n for n in outcome.capture.notes if "never answered" in n], outcome.capture.notes
    sent = [b.path for b in outcome.capture.blocks if b.when == "on-read"]
    assert outcome.prediction["on_read"] == sent


@pytest.mark.parametrize("case", cases("claude", check="startup-payload"))
def test_startup_payload(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    sent = "".join(p.text for p in outcome.capture.startup)
    assert outcome.prediction["payloads"] == ([sent] if sent else [])


@pytest.mark.parametrize(
    "case", [c for c in cases("claude", check="on-read-payload") if c.values[0].scenario.read]
)
def test_on_read_payload(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    # One payload per text block: after a read each <system-reminder> is a block of its own.
    assert outcome.prediction["jit_payloads"] == [p.text for p in outcome.capture.on_read]
