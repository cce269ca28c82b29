"""Differential test: Gemini CLI 0.43.0's own memory loader, driven from its npm bundle
(gemini043_loader.mjs, no model server), against ``memlens show --json`` / ``memlens jit``,
on every Gemini scenario, the kept regressions (scenarios/regressions.yaml) and generated
adversarial trees (generator.py ``fuzz_gemini``: names, imports, ignore files, settings and
trust). The machinery, and a long run outside pytest, are in fuzz.py.

    pytest -m conformance tests/conformance/test_loader.py [--cases N] [--fuzz-seed S]

``--cases`` (else MEMLENS_CONFORMANCE_FUZZ, else fuzz.CI_CASES) trees of seed ``--fuzz-seed``
(else MEMLENS_CONFORMANCE_FUZZ_SEED, else the fixed CI seed fuzz.CI_SEED). A generated tree
that differs is minimised and kept in regressions.yaml, so the case stays in the suite.

The loader is checked against the real agent too: on the hand-written scenarios its session
memory and JIT appendix equal the 0.43.0 goldens, so a difference found here is one the agent
itself would show.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.conformance import fuzz
from tests.conformance.agents import is_installed
from tests.conformance.cases import Case, class_title, difference_class
from tests.conformance.fuzz import VERSION, Tree
from tests.conformance.scenarios import Scenario, all_scenarios, read_golden
from tests.conformance.scenarios.generator import fuzz_gemini


def _option(config: pytest.Config, name: str, env: str, default: int) -> int:
    given = config.getoption(name, default=None)
    if given is not None:
        return int(given)
    return int(os.environ.get(env, default))


def _scenarios(config: pytest.Config) -> list[Scenario]:
    mine = [s for s in all_scenarios() if s.applies_to("gemini") or s.applies_to("gemini-loader")]
    seed = _option(config, "--fuzz-seed", "MEMLENS_CONFORMANCE_FUZZ_SEED", fuzz.CI_SEED)
    count = _option(config, "--cases", "MEMLENS_CONFORMANCE_FUZZ", fuzz.CI_CASES)
    return mine + fuzz_gemini(seed, count)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.definition.name != "test_loader_matches_memlens":
        return
    params = []
    for scenario in _scenarios(metafunc.config):
        cls = difference_class(Case("gemini", VERSION, scenario), "loader")
        marks = [pytest.mark.xfail(strict=True, reason=f"{cls}: {class_title(cls)}")] if cls else []
        params.append(pytest.param(scenario, id=f"loader@{VERSION}:{scenario.id}", marks=marks))
    metafunc.parametrize("scenario", params)


@pytest.fixture(scope="session")
def loaded(request: pytest.FixtureRequest) -> Iterator[dict[str, tuple[dict[str, Any], Any]]]:
    """scenario id -> (what the loader reported, what memlens predicts)."""
    if not is_installed("gemini", VERSION):
        pytest.skip(f"gemini@{VERSION} not installed: bash scripts/agents/install.sh")
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    trees = [Tree(s) for s in _scenarios(request.config)]
    for tree in trees:
        tree.build()
    jobs = int(os.environ.get("MEMLENS_CONFORMANCE_JOBS", 0)) or (os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        predictions = pool.map(fuzz.predict, trees)
        answers = fuzz.run_loader(trees)
        yield {
            t.scenario.id: (a, p) for t, a, p in zip(trees, answers, predictions, strict=True)
        }


def test_loader_matches_memlens(scenario: Scenario, loaded: dict[str, Any]) -> None:
    real, predicted = loaded[scenario.id]
    found = fuzz.differences(scenario, real, predicted)
    if found and scenario.generated:
        minimiser = fuzz.Minimiser()
        try:
            kept = fuzz.keep(minimiser.shrink(scenario, found, 120.0), found)
        finally:
            minimiser.close()
        pytest.fail(f"differs in {found}; minimised and kept as {kept.id} in "
                    f"{fuzz.REGRESSIONS.name}")
    assert not found, found


@pytest.mark.parametrize(
    "scenario", [pytest.param(s, id=s.id) for s in all_scenarios()
                 if s.applies_to("gemini") and not s.generated]
)
def test_loader_agrees_with_agent(scenario: Scenario, loaded: dict[str, Any]) -> None:
    """The fast path is only worth its differences if it sends what the agent sends."""
    golden = read_golden("gemini", VERSION, scenario.id)
    if golden is None:
        pytest.fail(f"no 0.43.0 golden for {scenario.id}: bash scripts/agents/capture-goldens.sh")
    real, _ = loaded[scenario.id]
    tree = Tree(scenario)

    def as_agent(text: str) -> str:
        return text.replace(str(tree.workspace), golden["workspace"]).replace(
            str(tree.home), golden["home"]
        )

    session = [p["text"] for p in golden["startup"] if p["where"] == "session_context"]
    assert session == [as_agent(real["sessionMemory"])]
    if scenario.read:
        appended = "".join(p["text"] for p in golden["on_read"])
        assert as_agent(real["jit"][0]["context"]) == appended


@pytest.mark.parametrize("scenario_id", ["gemini-file-name-setting", "gemini-classic-mode"])
def test_serve_mode_is_a_fresh_process(scenario_id: str, loaded: dict[str, Any]) -> None:
    """--serve answers what one process per tree answers (settings and the context file
    name do not leak from one request into the next)."""
    tree = Tree(next(s for s in all_scenarios() if s.id == scenario_id))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tree.home), "TZ": "UTC",
        "LANG": "C.UTF-8", "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    args = ["node", str(fuzz.LOADER), "--bundle", str(fuzz.bundle())]
    if tree.read:
        args += ["--jit", tree.read]
    done = subprocess.run(args, cwd=tree.cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == loaded[scenario_id][0]
