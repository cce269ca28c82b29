"""Conformance scenarios: small workspaces (and HOMEs) as data, plus a seeded generator.

Hand-written scenarios live in the YAML files beside this module, a list per file:

    - id: gemini-import-basic            # unique; names the golden and the scratch folder
      agents: [gemini]                   # gemini (both versions), claude, codex
      about: an import inlined in the root GEMINI.md
      tree:                              # the workspace; a value is a file's text, null a
        .git: null                       #   folder, {symlink: TARGET} a link,
        GEMINI.md: "root @./a.md\\n"      #   {hex: "ff00"} raw bytes, {parts: [...]} strings
                                         #   and {repeat: S, times: N} joined (long texts)
        a.md: "A\\n"
      home: {.gemini/GEMINI.md: "global\\n"}
      cwd: .                             # where the agent starts (relative to the workspace)
      read: sub/x.txt                    # what the scripted tool call reads (optional)
      folder_trust: false                # true: trust comes from HOME/.gemini/trustedFolders.json
                                         #   and the settings, not GEMINI_CLI_TRUST_WORKSPACE
                                         #   (the loader only, agents: [gemini-loader])
      tool_call: {name: save_memory, args: {fact: "x", scope: project}}   # Gemini: called
                                         #   instead of the read; what it writes is compared

Scenarios for the loader only (``agents: [gemini-loader]``: regressions.yaml, the fuzzer's
trees) may name paths that depend on where the tree is built: ``<WS>`` (the workspace),
``<HOME>`` and ``<ROOT>`` (the folder holding both) in file texts are replaced when it is built.

Generated ones come from ``generator.py`` (seeded, so the same ids always mean the same trees).
Which cases differ from memlens today is kept apart, in ../known_differences.yaml.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from tests.conformance.agents import Capture, extract, run_agent, scratch_for, stage
from tests.conformance.sandbox import JobResult

HERE = Path(__file__).parent
CAPTURED = HERE.parent / "captured"
TreeValue = str | dict[str, Any] | None


class Scenario(BaseModel):
    id: str
    agents: list[str]
    about: str = ""
    tree: dict[str, TreeValue] = Field(default_factory=dict)
    home: dict[str, TreeValue] = Field(default_factory=dict)
    cwd: str = "."
    read: str | None = None
    generated: bool = False
    folder_trust: bool = False
    # Gemini CLI: a tool the scripted first turn calls instead of the read ({name, args}:
    # save_memory with its fact and scope); the memory files it writes are compared.
    tool_call: dict[str, Any] | None = None
    # Variables added to the agent's environment; `<HOME>` in a value is the run's HOME
    # (pi's PI_CODING_AGENT_DIR).
    env: dict[str, str] = Field(default_factory=dict)

    def applies_to(self, agent: str) -> bool:
        return agent in self.agents


def build_tree(root: Path, tree: dict[str, TreeValue]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, value in tree.items():
        path = root / rel
        if value is None:
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, str):
            path.write_bytes(value.encode("utf-8"))
        elif "symlink" in value:
            os.symlink(value["symlink"], path)
        elif "hex" in value:
            path.write_bytes(bytes.fromhex(value["hex"]))
        elif "parts" in value:  # long texts: strings and {repeat: S, times: N}, joined
            path.write_bytes("".join(
                part if isinstance(part, str) else part["repeat"] * part["times"]
                for part in value["parts"]).encode("utf-8"))
        else:
            raise ValueError(f"{rel}: unknown tree value {value!r}")


def substitute(tree: dict[str, TreeValue], workspace: Path, home: Path) -> dict[str, TreeValue]:
    """The tree with ``<WS>``, ``<HOME>`` and ``<ROOT>`` in file texts replaced by the paths
    it is built at (JSON files get them JSON-escaped)."""
    paths = {"<WS>": str(workspace), "<HOME>": str(home), "<ROOT>": str(workspace.parent)}
    out: dict[str, TreeValue] = {}
    for rel, value in tree.items():
        if isinstance(value, str) and "<" in value:
            for token, path in paths.items():
                if rel.endswith(".json"):
                    path = json.dumps(path, ensure_ascii=False)[1:-1]
                value = value.replace(token, path)
        out[rel] = value
    return out


@functools.cache
def hand_written() -> tuple[Scenario, ...]:
    scenarios: list[Scenario] = []
    for file in sorted(HERE.glob("*.yaml")):
        for item in yaml.safe_load(file.read_text(encoding="utf-8")) or []:
            scenarios.append(Scenario.model_validate(item))
    return tuple(scenarios)


@functools.cache
def all_scenarios() -> tuple[Scenario, ...]:
    from tests.conformance.scenarios.generator import generated

    scenarios = (*hand_written(), *generated())
    ids = [s.id for s in scenarios]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate scenario ids: {duplicates}")
    return scenarios


def scenario_by_id(scenario_id: str) -> Scenario:
    for scenario in all_scenarios():
        if scenario.id == scenario_id:
            return scenario
    raise KeyError(f"no scenario {scenario_id!r}")


def capture_scenario(agent: str, version: str, scenario: Scenario) -> Capture:
    with tempfile.TemporaryDirectory(prefix="memlens-scenario-") as folder:
        workspace, home = Path(folder) / "ws", Path(folder) / "home"
        build_tree(workspace, scenario.tree)
        build_tree(home, scenario.home)
        return run_agent(agent, version, workspace, home, scenario.cwd, scenario.read,
                         name=scenario.id, tool_call=scenario.tool_call,
                         env=scenario_env(scenario, scratch_for(agent, version, scenario.id)
                                          / "home") or None)


def scenario_env(scenario: Scenario, home: Path) -> dict[str, str]:
    """The scenario's variables, `<HOME>` replaced by the HOME the run (or the prediction)
    uses."""
    return {k: v.replace("<HOME>", str(home)) for k, v in scenario.env.items()}


def replay_scenario(agent: str, version: str, scenario: Scenario) -> Capture:
    """The golden as a Capture, its trees staged at the paths the golden names (so memlens
    can predict on them): the comparisons without the agents (MEMLENS_CONFORMANCE_REPLAY=1)."""
    golden = read_golden(agent, version, scenario.id)
    if golden is None:
        raise FileNotFoundError(f"no golden {golden_path(agent, version, scenario.id)}")
    with tempfile.TemporaryDirectory(prefix="memlens-scenario-") as folder:
        workspace, home = Path(folder) / "ws", Path(folder) / "home"
        build_tree(workspace, scenario.tree)
        build_tree(home, scenario.home)
        stage(agent, version, workspace, home, scenario.cwd, scenario.read, name=scenario.id)
    return Capture.model_validate({**golden, "seconds": 0.0})


def reextract_scenario(agent: str, version: str, scenario: Scenario) -> Capture:
    """Extract again from the requests a previous run left in its scratch folder (after a
    change to the extraction, without running the agent)."""
    scratch = scratch_for(agent, version, scenario.id)
    result = JobResult.model_validate_json((scratch / "result.json").read_text(encoding="utf-8"))
    workspace, home = scratch / "ws", scratch / "home"
    cwd = Path(os.path.normpath(workspace / scenario.cwd))
    read = Path(os.path.normpath(workspace / scenario.read)) if scenario.read else None
    return extract(agent, version, result, workspace, home, cwd, read)


def run_many(
    pairs: Iterable[tuple[str, str, Scenario]], jobs: int | None = None
) -> list[Capture]:
    """Capture each (agent, version, scenario), ``jobs`` at a time (default: the CPUs; each
    run is a separate process, so threads are enough)."""
    work = list(pairs)
    workers = jobs or int(os.environ.get("MEMLENS_CONFORMANCE_JOBS", 0)) or (os.cpu_count() or 2)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda p: capture_scenario(*p), work))


def golden_path(agent: str, version: str, scenario_id: str) -> Path:
    return CAPTURED / f"{agent}-{version}" / f"{scenario_id}.json"


def write_golden(scenario: Scenario, capture: Capture) -> Path:
    path = golden_path(capture.agent, capture.version, scenario.id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(capture.golden(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return path


def read_golden(agent: str, version: str, scenario_id: str) -> dict[str, Any] | None:
    path = golden_path(agent, version, scenario_id)
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data
