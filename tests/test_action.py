"""The composite GitHub Action (action.yml) run as the runner runs it, on this machine: each
`run:` step in order, through `bash --noprofile --norc -eo pipefail`, with the runner's
variables (GITHUB_ACTION_PATH, GITHUB_WORKSPACE, RUNNER_TEMP, GITHUB_OUTPUT, ...) and the
step's `env:` with its `${{ }}` expressions evaluated (inputs, github.*, runner.*, steps.*).
The `uses:` steps are GitHub's own: setup-python is this interpreter, and the upload step's
inputs are checked (the SARIF file it would upload exists and is the log memlens wrote).
pip is offline (PIP_NO_INDEX, the wheelhouse of tests/dist_support.py)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from .dist_support import ROOT, clean_env, copy_demo, copy_sources, offline_pip_env, wheelhouse

pytestmark = pytest.mark.timeout(900)
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
ARTIFACT_URL = "https://github.invalid/artifacts/1"  # what upload-artifact would output


@dataclass
class Run:
    """One run of the action: each step's exit code, output and outputs."""

    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    failed: str | None = None
    uploaded: dict[str, str] | None = None
    artifacts: list[dict[str, str]] = field(default_factory=list)  # upload-artifact's `with`

    def log(self) -> str:
        return "\n".join(f"--- {name}\n{text}" for name, text in self.logs.items())


def _action() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "action.yml").read_text())
    assert isinstance(data, dict)
    return data


def _evaluate(text: str, context: dict[str, Any]) -> str:
    def one(match: re.Match[str]) -> str:
        value: Any = context
        for part in match.group(1).split("."):
            assert isinstance(value, dict) and part in value, \
                f"action.yml uses an expression this test does not know: {match.group(0)}"
            value = value[part]
        return str(value)
    return EXPRESSION.sub(one, text)


def _condition(text: str, context: dict[str, Any]) -> bool:
    """The `if:` forms action.yml uses: `inputs.NAME == 'literal'`."""
    found = re.fullmatch(r"inputs\.([\w-]+) == '([^']*)'", text.strip())
    assert found, f"action.yml has an if: this test does not know: {text}"
    return bool(context["inputs"][found.group(1)] == found.group(2))


@dataclass
class Runner:
    """The module's runner machine: the action's checkout, setup-python's interpreter, RUNNER_TEMP
    and the environment every step starts from (HOME, PATH, the offline wheelhouse). The install
    step reads only its script and its own `env:` (the version input, the action's checkout,
    RUNNER_TEMP; see test_the_install_step_reads_only_its_own_env), so on this machine its result
    is kept and replayed while those stay the same: the module pays for one venv and one
    `pip install`, not one per run. All else in RUNNER_TEMP is emptied before each run."""

    env: dict[str, str]
    action_path: Path
    bin_dir: Path
    temp: Path
    installs: dict[str, Installed] = field(default_factory=dict)


@dataclass
class Installed:
    """A run of the install step: its exit code, output, outputs, what it made in RUNNER_TEMP."""

    returncode: int
    log: str
    outputs: str
    made: set[str]


INSTALL_STEP = "install"  # the id of action.yml's install step


def run_action(runner: Runner, tmp: Path, workspace: Path, **inputs: str) -> Run:
    action = _action()
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    unknown = set(inputs) - set(values)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    values.update(inputs)
    temp = runner.temp  # a fresh RUNNER_TEMP but for what a replayed install step made there
    kept = {name for installed in runner.installs.values() for name in installed.made}
    for entry in temp.iterdir():
        if entry.name in kept:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    summary = tmp / "step-summary.md"
    runner_env = {**runner.env, "GITHUB_ACTIONS": "true", "CI": "true",
                  "GITHUB_ACTION_PATH": str(runner.action_path),
                  "GITHUB_WORKSPACE": str(workspace),
                  "RUNNER_TEMP": str(temp), "GITHUB_STEP_SUMMARY": str(summary),
                  # setup-python: this interpreter's folder first on PATH, as python3
                  "PATH": f"{runner.bin_dir}:{runner.env.get('PATH', '/usr/bin:/bin')}"}
    for name, value in values.items():  # the runner also exports every input as INPUT_*
        runner_env[f"INPUT_{name.upper()}"] = value
    context: dict[str, Any] = {
        "inputs": values, "github": {"action_path": str(runner.action_path),
                                     "workspace": str(workspace)},
        "runner": {"temp": str(temp)}, "steps": {}}
    result = Run()
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        if "if" in step and not _condition(step["if"], context):
            continue
        if "uses" in step:
            if "upload-sarif" in step["uses"]:
                result.uploaded = {k: _evaluate(str(v), context)
                                   for k, v in step.get("with", {}).items()}
            elif "upload-artifact" in step["uses"]:
                result.artifacts.append({k: _evaluate(str(v), context)
                                         for k, v in step.get("with", {}).items()})
                context["steps"][step["id"]] = {"outputs": {"artifact-url": ARTIFACT_URL}}
            continue
        assert step.get("shell") == "bash", f"{name}: a run step without shell: bash"
        output_file = tmp / f"output-{index}"
        output_file.write_text("")
        own_env = {k: _evaluate(str(v), context) for k, v in step.get("env", {}).items()}
        step_env = {**runner_env, "GITHUB_OUTPUT": str(output_file), **own_env}
        script = tmp / f"step-{index}.sh"
        script.write_text(step["run"])
        cwd = _evaluate(step.get("working-directory", "${{ github.workspace }}"), context)
        key = json.dumps([step["run"], own_env], sort_keys=True)
        replay = runner.installs.get(key) if step.get("id") == INSTALL_STEP else None
        if replay is None:
            before = {entry.name for entry in temp.iterdir()}
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd, env=step_env, capture_output=True, text=True, timeout=600)
            ran = Installed(done.returncode, done.stdout + done.stderr,
                            output_file.read_text(),
                            {entry.name for entry in temp.iterdir()} - before)
            if step.get("id") == INSTALL_STEP:
                runner.installs[key] = ran
        else:
            ran = replay
        result.logs[name] = ran.log
        outputs = dict(line.split("=", 1) for line in ran.outputs.splitlines() if "=" in line)
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": outputs}
            result.outputs[step["id"]] = outputs
        if ran.returncode != 0:
            result.failed = name
            break
    return result


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    home = tmp_path_factory.mktemp("home")  # a fresh runner: no trustedFolders.json
    env = offline_pip_env(wheelhouse(), HOME=str(home), PATH="/usr/local/bin:/usr/bin:/bin")
    machine = tmp_path_factory.mktemp("runner")
    action_path = copy_sources(machine / "action")  # the runner checks the action out there
    bin_dir = machine / "python-bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    temp = machine / "runner-temp"
    temp.mkdir()
    return Runner(env, action_path, bin_dir, temp)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh checkout of a repository holding the demo's memory files."""
    repo = copy_demo(tmp_path / "workspace")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    return repo


def _sarif_results(path: Path) -> list[dict[str, Any]]:
    log = json.loads(path.read_text())
    assert log["version"] == "2.1.0"
    return [r for run in log["runs"] for r in run.get("results", [])]


def test_the_action_checks_the_demo_uploads_sarif_and_fails_on_its_errors(
        tmp_path: Path, workspace: Path, runner: Runner) -> None:
    run = run_action(runner, tmp_path, workspace)
    assert run.failed == "Fail on findings", run.log()
    sarif = workspace / "memlens.sarif"
    results = _sarif_results(sarif)
    rules = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
             for r in results}
    assert ("import-not-found", "GEMINI.md") in rules
    assert ("hidden-text", "docs/onboarding.md") in rules
    errors = sum(r["level"] == "error" for r in results)
    assert run.outputs["check"]["errors"] == str(errors) and errors >= 2
    assert run.uploaded == {"sarif_file": "memlens.sarif", "category": "memlens"}
    log = run.log()
    assert "::error file=" in log  # the pull request's annotations (--format github)
    assert f"{errors} finding(s) at level 'error'" in log
    # installed from the action's own checkout, into the runner's temp folder
    assert (runner.temp / "memlens-venv" / "bin" / "memlens").is_file()
    summary = (tmp_path / "step-summary.md").read_text()
    assert f"memlens: {errors} error(s)" in summary
    # The agent matrix in the job summary, the HTML report attached and linked from it.
    assert "| `CLAUDE.md` | " in summary and "| File | Gemini CLI | Claude Code |" in summary
    report = Path(run.outputs["report"]["report-file"])
    assert report.is_file() and "<th scope=\"col\">Claude Code<br>" in report.read_text()
    assert run.artifacts == [{"name": "memlens-report", "path": str(report)}]
    assert f"[memlens-report]({ARTIFACT_URL})" in summary


def test_fail_on_never_and_no_upload(
        tmp_path: Path, workspace: Path, runner: Runner) -> None:
    run = run_action(runner, tmp_path, workspace, **{"fail-on": "never",
                                                     "upload-sarif": "false",
                                                     "sarif-file": "out/m.sarif"})
    # the folder of sarif-file must exist: the action does not create it, so this fails loudly
    assert run.failed == "memlens check", run.log()
    (workspace / "out").mkdir()
    run = run_action(runner, tmp_path, workspace, **{"fail-on": "never",
                                                     "upload-sarif": "false",
                                                     "sarif-file": "out/m.sarif"})
    assert run.failed is None, run.log()
    assert run.uploaded is None
    assert _sarif_results(workspace / "out" / "m.sarif")


def test_a_clean_repository_passes_and_agents_reach_memlens(
        tmp_path: Path, runner: Runner) -> None:
    repo = tmp_path / "workspace"
    (repo / "docs").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("# Rules\n\n@docs/style.md\n")
    (repo / "docs" / "style.md").write_text("Use tabs.\n")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    run = run_action(runner, tmp_path, repo, agents="claude", **{"fail-on": "warning"})
    assert run.failed is None, run.log()
    assert "MEMLENS_AGENTS=claude" in run.log()
    (repo / "docs" / "style.md").unlink()  # now Claude Code's import is broken: it skips it
    run = run_action(runner, tmp_path, repo, agents="claude")
    assert run.failed is None, run.log()  # a warning for Claude Code: fail-on error passes
    assert run.outputs["check"]["warnings"] == "1"
    run = run_action(runner, tmp_path, repo, agents="claude", **{"fail-on": "warning"})
    assert run.failed == "Fail on findings", run.log()


def test_budgets_become_check_options(
        tmp_path: Path, workspace: Path, runner: Runner) -> None:
    run = run_action(runner, tmp_path, workspace, budget="100000, claude=50000",
                     **{"fail-on": "never", "upload-sarif": "false"})
    log = run.log()
    assert "memlens check . --trusted --budget 100000 --budget claude=50000" in log
    help_text = subprocess.run(
        [str(runner.temp / "memlens-venv" / "bin" / "memlens"), "check", "--help"],
        capture_output=True, text=True, env=clean_env(), timeout=60).stdout
    if "--budget" not in help_text:
        # `check --budget` comes with issue 24's other half; until then check says so, loudly
        assert run.failed == "memlens check" and "could not run" in log, log
        pytest.skip("memlens check has no --budget option in this checkout yet")
    assert run.failed is None, log


def test_every_input_is_passed_through_env_never_pasted_into_a_script() -> None:
    for step in _action()["runs"]["steps"]:
        if "run" in step:
            assert not EXPRESSION.search(step["run"]), step["name"]


def test_the_emulation_refuses_expressions_it_does_not_know() -> None:
    # so action.yml cannot drift past what this test runs
    with pytest.raises(AssertionError):
        _evaluate("${{ secrets.TOKEN }}", {"inputs": {}})
    assert _evaluate("${{ inputs.a }}/x", {"inputs": {"a": "1"}}) == "1/x"


def test_the_install_step_reads_only_its_own_env() -> None:
    """What lets Runner replay the install step: no input, workspace or earlier step reaches its
    script but through its `env:` (a change that reads more must change the replay too)."""
    (step,) = [s for s in _action()["runs"]["steps"] if s.get("id") == INSTALL_STEP]
    script = step["run"]
    assigned = set(re.findall(r"^\s*(\w+)=", script, re.MULTILINE))
    read = set(re.findall(r"\$\{?(\w+)", script))
    assert read <= set(step["env"]) | assigned | {"GITHUB_OUTPUT"}, read
    assert read & set(step["env"]) == set(step["env"])  # and the test sees what it reads
