"""Codex CLI 0.169.0 against memlens's codex dialect
(docs/reference.md "Which agent, which version"): the `# AGENTS.md instructions for CWD` user
message it sends at start, byte for byte (``memlens show --agent codex --json``'s ``payloads``; []
when Codex sends no such message). Codex loads nothing later."""

from __future__ import annotations

import pytest

from tests.conformance.agents import PINNED
from tests.conformance.cases import Case, cases
from tests.conformance.conftest import Runs
from tests.conformance.predict import memlens
from tests.conformance.scenarios import all_scenarios


@pytest.mark.parametrize("case", cases("codex", check="instructions"))
def test_instructions_message(case: Case, runs: Runs) -> None:
    outcome = runs.get(case)
    assert outcome.prediction is not None
    assert outcome.capture.requests, outcome.capture.notes
    sent = [p.text for p in outcome.capture.startup]
    assert len(sent) <= 1, sent
    assert outcome.prediction["payloads"] == sent
    assert outcome.capture.on_read == []


def _refused_cases() -> list[object]:
    return [pytest.param(Case("codex", version, scenario), id=f"codex@{version}:{scenario.id}")
            for version in PINNED["codex"] for scenario in all_scenarios()
            if scenario.applies_to("codex-refused")]


@pytest.mark.parametrize("case", _refused_cases())
def test_refused_config(case: Case, runs: Runs) -> None:
    """A config.toml Codex cannot load (scenarios/codex_refused.yaml): Codex exits without a
    request; memlens predicts no message and reports agent-config-invalid on that file."""
    outcome = runs.get(case)
    assert outcome.capture.exit_code != 0 and not outcome.capture.requests
    assert any("Error loading config.toml" in note for note in outcome.capture.notes)
    assert outcome.prediction is not None and outcome.prediction["payloads"] == []
    show = memlens("show", "--json", "--home", outcome.capture.home, "--trusted", "--agent",
                   "codex", outcome.capture.cwd, cwd=outcome.capture.cwd,
                   home=outcome.capture.home)
    config = f"{outcome.capture.home}/.codex/config.toml"
    assert [d["path"] for d in show["diagnostics"] if d["code"] == "agent-config-invalid"] == [
        config]
