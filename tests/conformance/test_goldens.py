"""Every agent, every scenario: the memory it sends today equals the golden under captured/
(the truth the profile work tests against where memlens predicts nothing yet, and a guard
that the agents are deterministic). Regenerate: bash scripts/agents/capture-goldens.sh."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.agents import PINNED, reference_version
from tests.conformance.cases import Case, cases
from tests.conformance.conftest import Runs
from tests.conformance.scenarios import golden_path, read_golden

MEMORY_FIELDS = ("workspace", "home", "cwd", "read_path", "startup", "on_read", "blocks")


def _memory(data: dict[str, Any], scratch: str | None = None) -> Any:
    """The memory fields; with ``scratch``, the golden's scratch folder is replaced by it
    (MEMLENS_CONFORMANCE_SCRATCH may put the runs elsewhere than where goldens were made)."""
    text = json.dumps({key: data.get(key) for key in MEMORY_FIELDS}, ensure_ascii=False)
    if scratch is not None:
        text = text.replace(json.dumps(str(Path(data["workspace"]).parent))[1:-1], scratch)
    return json.loads(text)


@pytest.mark.parametrize("case", [p for agent in PINNED for p in cases(agent)])
def test_matches_golden(case: Case, runs: Runs) -> None:
    # A release run as another (MEMLENS_AGENT_VERSIONS) must send what the reference sent.
    reference = reference_version(case.agent, case.version)
    golden = read_golden(case.agent, reference, case.scenario.id)
    if golden is None:
        pytest.fail(f"no golden {golden_path(case.agent, reference, case.scenario.id)}: "
                    "bash scripts/agents/capture-goldens.sh")
    capture = runs.get(case).capture
    assert capture.exit_code == 0, capture.notes
    here = json.dumps(str(Path(capture.workspace).parent))[1:-1]
    assert _memory(capture.golden()) == _memory(golden, here)
