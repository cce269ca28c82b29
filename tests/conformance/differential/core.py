"""The differential runner every agent shares: a generated tree goes through the real agent
(offline, the capture harness of agents.py) and through memlens (predict.py, its command line
only); every payload the agent's comparison names is compared; a tree that differs is minimised
by delta debugging (fuzz.py's minimiser) and appended to the agent's regression file.

The agent is a parameter: an ``AgentSpec`` names the real agent and version, the generator
``(seed, index) -> Scenario`` (pure and deterministic), the predictor (from predict.py) and the
comparison ``(scenario, capture, prediction) -> [what differs]``. Each agent's module
``gen_<agent>.py`` in this folder has ``spec(version: str | None) -> AgentSpec``; ``--agent
claude`` or ``--agent claude@2.1.332`` finds it by name, so adding an agent touches no shared
file.

    python -m tests.conformance.differential --agent claude --seed 1 --cases 1000 [--jobs 2]

A tree's texts may say ``<WS>``, ``<HOME>`` and ``<ROOT>``: they are replaced by the paths the
agent sees (the staged copies under MEMLENS_CONFORMANCE_SCRATCH).
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.conformance.agents import PINNED, Capture, is_installed, run_agent, scratch_for
from tests.conformance.fuzz import minimise as _greedy_minimise
from tests.conformance.scenarios import Scenario, build_tree, substitute

HERE = Path(__file__).parent
Generator = Callable[[int, int], Scenario]
Predictor = Callable[[Capture], dict[str, Any]]
Comparison = Callable[[Scenario, Capture, dict[str, Any]], list[str]]
# A run that could not compare (the agent failed, or memlens did): reported, not minimised.
AGENT_FAILED = "agent-failed"
PREDICT_FAILED = "memlens-failed"


@dataclass(frozen=True)
class AgentSpec:
    """One real agent at one version, and how to test memlens against it."""

    agent: str  # the agents.py name: gemini, claude, codex
    version: str
    generate: Generator
    predict: Predictor
    compare: Comparison
    ci_seed: int = 1
    ci_cases: int = 30
    # Where minimised trees are appended (default: regressions_<agent>.yaml beside this file).
    regressions: Path | None = None
    # Treated as one kind of difference when minimising (default: the field names before ':').
    kind: Callable[[list[str]], str] | None = None
    # A deliberate difference (KNOWN_DIFFERENCES.md) a tree is expected to show: its class
    # (`G5`), or None. Long runs count such trees apart and do not minimise them.
    deliberate: Callable[[Scenario], str | None] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def target(self) -> str:
        return f"{self.agent}@{self.version}"

    @property
    def regression_file(self) -> Path:
        return self.regressions or HERE / f"regressions_{self.agent}.yaml"

    def kind_of(self, found: list[str]) -> str:
        if self.kind is not None:
            return self.kind(found)
        return ",".join(sorted({f.split(":")[0] for f in found}))


def load_spec(name: str) -> AgentSpec:
    """``claude`` (its first pinned version) or ``claude@2.1.332``: gen_claude.spec(version)."""
    agent, _, version = name.partition("@")
    module = importlib.import_module(f"tests.conformance.differential.gen_{agent}")
    made: AgentSpec = module.spec(version or None)
    return made


def available_agents() -> list[str]:
    """The agents that have a generator here (gen_<agent>.py)."""
    return sorted(p.stem.removeprefix("gen_") for p in HERE.glob("gen_*.py"))


def default_version(agent: str) -> str:
    return PINNED[agent][0]


# ----------------------------------------------------------------------------- one tree


@dataclass
class Outcome:
    scenario: Scenario
    found: list[str]
    capture: Capture | None = None
    prediction: dict[str, Any] | None = None
    error: str | None = None


def capture(spec: AgentSpec, scenario: Scenario, name: str | None = None) -> Capture:
    """Run the real agent on the scenario's trees (built at the paths the agent will see, so
    ``<WS>``/``<HOME>``/``<ROOT>`` name its staged copies)."""
    name = name or scenario.id
    scratch = scratch_for(spec.agent, spec.version, name)
    ws_final, home_final = scratch / "ws", scratch / "home"
    with tempfile.TemporaryDirectory(prefix="memlens-diff-") as folder:
        workspace, home = Path(folder) / "ws", Path(folder) / "home"
        build_tree(workspace, substitute(scenario.tree, ws_final, home_final))
        build_tree(home, substitute(scenario.home, ws_final, home_final))
        (Path(os.path.normpath(workspace / scenario.cwd))).mkdir(parents=True, exist_ok=True)
        return run_agent(spec.agent, spec.version, workspace, home, scenario.cwd, scenario.read,
                         name=name, tool_call=scenario.tool_call)


def check(spec: AgentSpec, scenario: Scenario, name: str | None = None,
          keep_scratch: bool = True) -> Outcome:
    """The tree through the agent and through memlens; what differs ([] when identical)."""
    try:
        got = capture(spec, scenario, name)
        if got.exit_code != 0 and not got.requests:
            # An agent that exits before its first request, on a loaded machine, once in
            # thousands of runs (Copilot CLI: exit 1, nothing on stderr; alone it passes):
            # asked once more. A tree that makes the agent fail fails both times.
            got = capture(spec, scenario, name)
    except Exception as error:  # the harness itself failed: reported as the agent's failure
        return Outcome(scenario, [f"{AGENT_FAILED}: {error}"], error=str(error))
    if got.exit_code != 0 or got.notes:  # notes say only what went wrong
        return Outcome(scenario, [f"{AGENT_FAILED}: {'; '.join(got.notes)[:300]}"], got,
                       error="; ".join(got.notes))
    try:
        predicted = spec.predict(got)
    except Exception as error:  # memlens failed on a tree the agent handled: a difference
        return Outcome(scenario, [f"{PREDICT_FAILED}: {str(error)[:300]}"], got,
                       error=str(error))
    found = spec.compare(scenario, got, predicted)
    if not keep_scratch:
        shutil.rmtree(scratch_for(spec.agent, spec.version, name or scenario.id),
                      ignore_errors=True)
    return Outcome(scenario, found, got, predicted)


# ----------------------------------------------------------------------------- minimising


class Minimiser:
    """Shrinks a differing tree while it still differs in the same way (fuzz.py's greedy
    delta debugging; both sides re-run on each candidate, each under a fresh name)."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec
        self._count = itertools.count()
        self._prefix = f"min-{os.getpid()}-{threading.get_ident() % 10000}"

    def differs(self, scenario: Scenario, want: list[str]) -> bool:
        name = f"{self._prefix}-{next(self._count)}"
        outcome = check(self.spec, scenario, name, keep_scratch=False)
        shutil.rmtree(scratch_for(self.spec.agent, self.spec.version, name), ignore_errors=True)
        if not outcome.found or outcome.found[0].startswith(AGENT_FAILED):
            return False
        return self.spec.kind_of(outcome.found) == self.spec.kind_of(want)

    def shrink(self, scenario: Scenario, found: list[str], budget_seconds: float = 300.0
               ) -> Scenario:
        return _greedy_minimise(scenario, lambda s: self.differs(s, found), budget_seconds)


def keep(spec: AgentSpec, scenario: Scenario, found: list[str], source_id: str,
         path: Path | None = None) -> Scenario:
    """Append the minimised tree to the agent's regression file (once per id)."""
    path = path or spec.regression_file
    kept = scenario.model_copy(update={
        "id": f"regression-{source_id.removeprefix('diff-')}",
        "agents": [spec.agent], "generated": False,
        "about": f"minimised by the differential runner ({spec.target}) from {source_id}: "
                 f"differed in {spec.kind_of(found).replace(',', ', ')}",
    })
    existing = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    if any(item.get("id") == kept.id for item in existing or []):
        return kept
    item = kept.model_dump(exclude_defaults=True, exclude={"generated"})
    item = {"id": item.pop("id"), **item}
    if not path.exists():
        path.write_text(
            f"# Trees the differential runner (core.py) found differing between {spec.agent} "
            "and memlens,\n# minimised and kept so each stays in the suite "
            "(test_differential.py). Appended by the runner.\n", encoding="utf-8")
    with path.open("a", encoding="utf-8") as out:
        out.write("\n" + yaml.safe_dump([item], allow_unicode=True, sort_keys=False,
                                         default_flow_style=False, width=100))
    return kept


def regressions(spec: AgentSpec) -> list[Scenario]:
    path = spec.regression_file
    if not path.exists():
        return []
    return [Scenario.model_validate(item)
            for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []]


# ----------------------------------------------------------------------------- many trees


def generated(spec: AgentSpec, seed: int, cases: int, start: int = 0) -> list[Scenario]:
    return [spec.generate(seed, index) for index in range(start, start + cases)]


def check_many(spec: AgentSpec, scenarios: Iterable[Scenario], jobs: int = 2,
               keep_scratch: bool = False) -> list[Outcome]:
    work = list(scenarios)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda s: check(spec, s, keep_scratch=keep_scratch), work))


def run(spec: AgentSpec, seed: int, cases: int, start: int = 0, jobs: int = 2,
        minimise_found: bool = True, chunk: int = 50, minimise_budget: float = 240.0,
        log: Callable[[str], None] = print) -> dict[str, Any]:
    """A long run in chunks; the first tree of each new kind of difference is minimised and
    kept. Returns the summary (seconds, trees, which differed and how)."""
    if not is_installed(spec.agent, spec.version):
        raise SystemExit(f"{spec.target} is not installed: bash scripts/agents/install.sh "
                         f"{spec.agent}@{spec.version}")
    started = time.monotonic()
    differ: dict[str, list[str]] = {}
    deliberate: dict[str, str] = {}
    failed: dict[str, list[str]] = {}
    kinds: set[str] = set()
    kept: list[str] = []
    minimiser = Minimiser(spec)
    for first in range(start, start + cases, chunk):
        count = min(chunk, start + cases - first)
        for outcome in check_many(spec, generated(spec, seed, count, first), jobs):
            if not outcome.found:
                continue
            sid = outcome.scenario.id
            if any(f.startswith(AGENT_FAILED) for f in outcome.found):
                failed[sid] = outcome.found
                log(f"FAILED {sid}: {outcome.found}")
                continue
            known = spec.deliberate(outcome.scenario) if spec.deliberate else None
            if known is not None:
                deliberate[sid] = known
                log(f"DELIBERATE {sid}: {known} ({spec.kind_of(outcome.found)})")
                continue
            differ[sid] = outcome.found
            log(f"DIFF {sid}: {spec.kind_of(outcome.found)}")
            kind = spec.kind_of(outcome.found)
            if minimise_found and kind not in kinds:
                kinds.add(kind)
                small = minimiser.shrink(outcome.scenario, outcome.found, minimise_budget)
                made = keep(spec, small, outcome.found, sid)
                kept.append(made.id)
                log(f"  kept as {made.id} ({len(small.tree)} + {len(small.home)} entries)")
        done = first + count - start
        log(f"{spec.target} seed {seed}: {done}/{cases} trees, {len(differ)} differ, "
            f"{len(deliberate)} deliberate, {len(failed)} failed, "
            f"{time.monotonic() - started:.0f} s")
    return {"agent": spec.target, "seed": seed, "cases": cases, "start": start,
            "differ": differ, "deliberate": deliberate, "failed": failed, "kept": kept,
            "seconds": round(time.monotonic() - started, 1)}


def summary_line(summary: dict[str, Any]) -> str:
    brief = {k: v for k, v in summary.items() if k not in ("differ", "deliberate", "failed")}
    return json.dumps(brief | {"differ": len(summary["differ"]),
                               "deliberate": len(summary.get("deliberate", {})),
                               "failed": len(summary["failed"])})
