"""Codex CLI 0.169.0 against memlens's codex dialect (SPEC §4): the `# AGENTS.md instructions
for CWD` user message it sends at start, byte for byte (``memlens show --agent codex
--json``'s ``payloads``; [] when Codex sends no such message). Codex loads nothing later."""

from __future__ import annotations

import pytest

from tests.conformance.cases import Case, cases
from tests.conformance.conftest import Runs


@pytest.mark.parametrize("case", cases("codex", check="instructions"))
def test_instructions_message(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.capture.requests, outcome.capture.notes
    sent = [p.text for p in outcome.capture.startup]
    assert len(sent) <= 1, sent
    assert outcome.prediction["payloads"] == sent
    assert outcome.capture.on_read == []
