"""Differential test: Gemini CLI 0.43.0's own memory loader, driven from its npm bundle
(gemini043_loader.mjs, no model server), against ``memlens show --json`` / ``memlens jit``,
on every Gemini scenario plus MEMLENS_CONFORMANCE_FUZZ (default 60) more generated trees.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.agents import SCRATCH_ROOT, cache_root, is_installed, prepare_home
from tests.conformance.cases import Case, class_title, difference_class
from tests.conformance.predict import memlens
from tests.conformance.scenarios import Scenario, all_scenarios, build_tree, read_golden
from tests.conformance.scenarios.generator import fuzz_gemini

LOADER = Path(__file__).with_name("gemini043_loader.mjs")
VERSION = "0.43.0"
FUZZ_SEED = int(os.environ.get("MEMLENS_CONFORMANCE_FUZZ_SEED", "1000"))
FUZZ_COUNT = int(os.environ.get("MEMLENS_CONFORMANCE_FUZZ", "60"))


def _scenarios() -> list[Scenario]:
    mine = [s for s in all_scenarios() if s.applies_to("gemini")]
    return mine + fuzz_gemini(FUZZ_SEED, FUZZ_COUNT)


@dataclass(frozen=True)
class Tree:
    """One scenario built for the loader at SCRATCH_ROOT/loader-0.43.0/<id>."""

    scenario: Scenario

    @property
    def root(self) -> Path:
        return SCRATCH_ROOT / f"loader-{VERSION}" / self.scenario.id

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def cwd(self) -> Path:
        return Path(os.path.normpath(self.workspace / self.scenario.cwd))

    @property
    def read(self) -> str | None:
        return str(self.workspace / self.scenario.read) if self.scenario.read else None

    def build(self) -> None:
        if self.root.exists():
            shutil.rmtree(self.root)
        build_tree(self.workspace, self.scenario.tree)
        build_tree(self.home, self.scenario.home)
        prepare_home("gemini", self.home)


def _bundle() -> Path:
    return cache_root() / f"gemini-{VERSION}" / "node_modules" / "@google" / "gemini-cli" / "bundle"


def _run_loader(trees: list[Tree]) -> list[dict[str, Any]]:
    requests = "".join(
        json.dumps({"cwd": str(t.cwd), "home": str(t.home), "jit": [t.read] if t.read else []})
        + "\n"
        for t in trees
    )
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(trees[0].home),
        "TZ": "UTC", "LANG": "C.UTF-8", "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    done = subprocess.run(
        ["node", str(LOADER), "--bundle", str(_bundle()), "--serve"], input=requests, env=env,
        capture_output=True, text=True, timeout=600, check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or len(answers) != len(trees):
        raise RuntimeError(f"loader exited {done.returncode}: {done.stderr[-3000:]}")
    return answers


def _predict(tree: Tree) -> dict[str, Any]:
    common = ["--home", str(tree.home), "--trusted"]
    show = memlens("show", "--json", *common, str(tree.cwd), cwd=str(tree.cwd))
    jit = None
    if tree.read:
        jit = memlens("jit", "--json", *common, "--cwd", str(tree.cwd), tree.read,
                      cwd=str(tree.cwd))[0]["context"]
    return {"show": show, "jit": jit}


@pytest.fixture(scope="session")
def loaded() -> Iterator[dict[str, tuple[dict[str, Any], dict[str, Any]]]]:
    """scenario id -> (what the loader reported, what memlens predicts)."""
    if not is_installed("gemini", VERSION):
        pytest.skip(f"gemini@{VERSION} not installed: bash scripts/agents/install.sh")
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    trees = [Tree(s) for s in _scenarios()]
    for tree in trees:
        tree.build()
    jobs = int(os.environ.get("MEMLENS_CONFORMANCE_JOBS", 0)) or (os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        predictions = pool.map(_predict, trees)
        answers = _run_loader(trees)
        yield {
            t.scenario.id: (a, p) for t, a, p in zip(trees, answers, predictions, strict=True)
        }


def _params() -> list[Any]:
    params = []
    for scenario in _scenarios():
        cls = difference_class(Case("gemini", VERSION, scenario), "loader")
        marks = [pytest.mark.xfail(strict=True, reason=f"{cls}: {class_title(cls)}")] if cls else []
        params.append(pytest.param(scenario, id=f"loader@{VERSION}:{scenario.id}", marks=marks))
    return params


@pytest.mark.parametrize("scenario", _params())
def test_loader_matches_memlens(scenario: Scenario, loaded: dict[str, Any]) -> None:
    real, predicted = loaded[scenario.id]
    assert "error" not in real, real.get("error")
    show = predicted["show"]
    assert show["mode"] == real["mode"]
    assert show["content"] == real["flattened"]
    assert show["sessionMemory"] == real["sessionMemory"]
    assert show["files"] == real["filePaths"]
    assert show["fileCount"] == real["fileCount"]
    if scenario.read:
        assert predicted["jit"] == real["jit"][0]["context"]


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
    tree = Tree(next(s for s in _scenarios() if s.id == scenario_id))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tree.home), "TZ": "UTC",
        "LANG": "C.UTF-8", "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    args = ["node", str(LOADER), "--bundle", str(_bundle())]
    if tree.read:
        args += ["--jit", tree.read]
    done = subprocess.run(args, cwd=tree.cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == loaded[scenario_id][0]
