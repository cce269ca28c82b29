"""The differential runner (differential/core.py) under pytest, for every agent with a
generator (differential/gen_<agent>.py): its kept regression trees and ``--diff-cases`` trees
of its fixed CI seed (else MEMLENS_DIFF_CASES / MEMLENS_DIFF_SEED, else the agent's own
``ci_cases`` / ``ci_seed``), each run through the real agent offline and through memlens, every
payload compared. Long runs: ``python -m tests.conformance.differential --agent A --cases N``.

A tree listed in known_differences.yaml under the check ``differential`` is a strict xfail.
"""

from __future__ import annotations

import os
import threading
import warnings

import pytest

from tests.conformance.agents import PINNED, is_installed
from tests.conformance.cases import Case, class_title, difference_class
from tests.conformance.differential import core

_LOCK = threading.Lock()
_OUTCOMES: dict[str, dict[str, core.Outcome]] = {}


def _count(config: pytest.Config, option: str, env: str, default: int) -> int:
    given = config.getoption(option, default=None)
    if given is not None:
        return int(given)
    return int(os.environ.get(env, default))


def _specs() -> list[core.AgentSpec]:
    names = os.environ.get("MEMLENS_DIFF_AGENTS")
    wanted = names.split(",") if names else core.available_agents()
    specs = []
    for name in wanted:
        try:
            spec = core.load_spec(name)
        except KeyError:  # an agent MEMLENS_AGENT_VERSIONS leaves out
            continue
        if spec.version in PINNED.get(spec.agent, ()):
            specs.append(spec)
    return specs


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.name != "test_differential":
        return
    params = []
    for spec in _specs():
        seed = _count(metafunc.config, "--diff-seed", "MEMLENS_DIFF_SEED", spec.ci_seed)
        count = _count(metafunc.config, "--diff-cases", "MEMLENS_DIFF_CASES", spec.ci_cases)
        for scenario in [*core.regressions(spec), *core.generated(spec, seed, count)]:
            cls = difference_class(Case(spec.agent, spec.version, scenario), "differential")
            marks = ([pytest.mark.xfail(strict=True, reason=f"{cls}: {class_title(cls)}")]
                     if cls else [])
            params.append(pytest.param(spec, scenario, id=f"{spec.target}:{scenario.id}",
                                       marks=marks))
    metafunc.parametrize(("spec", "scenario"), params)


def _outcome(spec: core.AgentSpec, scenario: core.Scenario,
             all_of: list[core.Scenario]) -> core.Outcome:
    """Every tree of this agent runs once, in one parallel batch, on first use."""
    with _LOCK:
        if spec.target not in _OUTCOMES:
            jobs = int(os.environ.get("MEMLENS_CONFORMANCE_JOBS", 0)) or 2
            outcomes = core.check_many(spec, all_of, jobs)
            _OUTCOMES[spec.target] = {o.scenario.id: o for o in outcomes}
        done = _OUTCOMES[spec.target]
        if scenario.id not in done:
            done[scenario.id] = core.check(spec, scenario, keep_scratch=False)
        return done[scenario.id]


def test_differential(spec: core.AgentSpec, scenario: core.Scenario,
                      request: pytest.FixtureRequest) -> None:
    if os.environ.get("MEMLENS_CONFORMANCE_REPLAY") == "1":
        pytest.skip("MEMLENS_CONFORMANCE_REPLAY=1: the differential runs need the live agent")
    if not is_installed(spec.agent, spec.version):
        pytest.skip(f"{spec.target} not installed: bash scripts/agents/install.sh")
    siblings = [item.callspec.params["scenario"] for item in request.session.items
                if getattr(item, "callspec", None) is not None
                and item.callspec.params.get("spec") == spec]
    outcome = _outcome(spec, scenario, siblings)
    if outcome.found:
        # Run alone once more: in the parallel batch, on a loaded machine, Claude Code 2.1.330
        # now and then sends the skills a read of a missing file finds a turn late (its own
        # timing: regression-claude-5401-0006, regression-claude-skills-missing-file; each
        # identical when run alone). A difference of memlens's stays a difference.
        alone = core.check(spec, scenario, keep_scratch=False)
        if not alone.found:
            warnings.warn(f"{scenario.id} differed in {outcome.found} in the parallel batch "
                          "and was identical run alone", stacklevel=1)
        outcome = alone
    assert not outcome.found, f"{scenario.id} differs in {outcome.found}"
