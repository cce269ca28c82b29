"""The conformance suite's plumbing.

* It runs only when asked for: ``pytest -m conformance tests/conformance`` (the main run,
  whose -m does not name the marker, deselects it); ``MEMLENS_SKIP_CONFORMANCE=1`` skips it.
* Every selected case's agent run happens once, all of them in parallel on first use
  (``runs`` fixture; MEMLENS_CONFORMANCE_JOBS workers, default the CPUs), each run covering
  start-up and the after-read request, followed by memlens's predictions for it.
* A case whose agent is not installed is skipped with the command that installs it.
* ``MEMLENS_CONFORMANCE_REPLAY=1`` compares memlens with the goldens under captured/ instead
  of live runs: the engine work can check itself in seconds without any agent installed.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conformance.agents import Capture, is_installed, reference_version
from tests.conformance.cases import Case
from tests.conformance.predict import PREDICTORS
from tests.conformance.scenarios import capture_scenario, replay_scenario

MARKER = "conformance"
# Compare memlens with the stored goldens instead of live runs (no agents needed).
REPLAY = os.environ.get("MEMLENS_CONFORMANCE_REPLAY") == "1"
SUITE_TIMEOUT = 1800  # one test may wait for the whole parallel batch


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    mine = [item for item in items if str(item.path).startswith(here)]
    if MARKER not in (config.option.markexpr or ""):
        if mine:
            config.hook.pytest_deselected(items=mine)
            items[:] = [item for item in items if item not in set(mine)]
        return
    skip_all = os.environ.get("MEMLENS_SKIP_CONFORMANCE") == "1"
    for item in mine:
        item.add_marker(pytest.mark.conformance)
        item.add_marker(pytest.mark.timeout(SUITE_TIMEOUT))
        if skip_all:
            item.add_marker(pytest.mark.skip(reason="MEMLENS_SKIP_CONFORMANCE=1"))
            continue
        case = _case_of(item)
        if REPLAY and "test_goldens" in item.nodeid:
            item.add_marker(pytest.mark.skip(reason="MEMLENS_CONFORMANCE_REPLAY=1 compares "
                                                    "with the goldens themselves"))
        elif case and not REPLAY and not is_installed(case.agent, case.version):
            item.add_marker(pytest.mark.skip(
                reason=f"{case.target} not installed: bash scripts/agents/install.sh"
            ))


def _case_of(item: pytest.Item) -> Case | None:
    callspec = getattr(item, "callspec", None)
    case = callspec.params.get("case") if callspec else None
    return case if isinstance(case, Case) else None


@dataclass
class Outcome:
    capture: Capture
    prediction: dict[str, Any] | None  # None where memlens predicts nothing yet


class Runs:
    """Captures (and predictions) of every selected case, made in one parallel batch."""

    def __init__(self, wanted: list[Case]) -> None:
        self._wanted = wanted
        self._results: dict[Case, Outcome | BaseException] = {}
        self._lock = threading.Lock()
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.wall = 0.0

    def get(self, case: Case) -> Outcome:
        with self._lock:
            if not self._results:
                self._run_all()
            if case not in self._results:
                self._results[case] = self._attempt(case)
        result = self._results[case]
        if isinstance(result, BaseException):
            raise result
        return result

    def _attempt(self, case: Case) -> Outcome | BaseException:
        try:
            return self._one(case)
        except Exception as error:  # reported by the test that asks for it
            return error

    def _one(self, case: Case) -> Outcome:
        if REPLAY:
            capture = replay_scenario(case.agent, case.version, case.scenario)
        else:
            capture = capture_scenario(case.agent, case.version, case.scenario)
            self.seconds[case.target].append(capture.seconds)
        predictor: Callable[[Capture], dict[str, Any]] | None = PREDICTORS.get(
            (case.agent, reference_version(case.agent, case.version))
        )
        return Outcome(capture, predictor(capture) if predictor else None)

    def _run_all(self) -> None:
        wanted = [
            c for c in dict.fromkeys(self._wanted) if REPLAY or is_installed(c.agent, c.version)
        ]
        jobs = int(os.environ.get("MEMLENS_CONFORMANCE_JOBS", 0)) or (os.cpu_count() or 2)
        started = time.monotonic()
        # slowest agents first, so the batch does not end on one long straggler
        order = {"gemini": 0, "claude": 1, "codex": 2}
        wanted.sort(key=lambda c: order.get(c.agent, 3))
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for case, result in zip(wanted, pool.map(self._attempt, wanted), strict=True):
                self._results[case] = result
        self.wall = time.monotonic() - started


_RUNS: list[Runs] = []


@pytest.fixture(scope="session")
def runs(request: pytest.FixtureRequest) -> Runs:
    wanted = [
        case for item in request.session.items
        if (case := _case_of(item)) is not None and item.get_closest_marker("skip") is None
    ]
    made = Runs(wanted)
    _RUNS.append(made)
    return made


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for made in _RUNS:
        if not made.seconds:
            continue
        terminalreporter.write_line(
            f"conformance: {sum(len(v) for v in made.seconds.values())} agent runs in "
            f"{made.wall:.0f} s wall"
        )
        for target, seconds in sorted(made.seconds.items()):
            terminalreporter.write_line(
                f"  {target}: {len(seconds)} runs, {sum(seconds) / len(seconds):.1f} s each "
                f"(max {max(seconds):.1f} s)"
            )
