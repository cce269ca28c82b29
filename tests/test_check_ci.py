"""`memlens check` in CI (issue 24): a check is static analysis, so a folder Gemini CLI does not
trust yet (a fresh runner has no trustedFolders.json) is checked all the same — one short line
says Gemini CLI would not load it — and the exit code and SARIF carry what was found;
`--budget [AGENT=]N` gates on each agent's own token estimate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import build_tree
from .test_cli import MEMLENS, Run, memlens

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo"
GIT = ("git", "-c", "user.email=ci@example.com", "-c", "user.name=CI", "-c",
       "init.defaultBranch=main")


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run([*GIT, *args], cwd=cwd, env=env, check=True, capture_output=True)


def _runner(*args: str, cwd: Path, home: Path) -> Run:
    """memlens as a fresh CI runner runs it: an empty HOME, no Gemini CLI trust variable, no
    agent pinned, nothing but the system's tools and memlens on PATH."""
    env = {"HOME": str(home), "PATH": f"{MEMLENS.parent}:/usr/bin:/bin", "LANG": "C.UTF-8",
           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    proc = subprocess.run([str(MEMLENS), *args], cwd=cwd, env=env, capture_output=True,
                          stdin=subprocess.DEVNULL, text=True, timeout=120)
    return Run(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def demo_clone(root: Path) -> Path:
    """A fresh clone of examples/demo (its own repository, as a user's project is)."""
    origin = root / "origin"
    shutil.copytree(DEMO, origin, symlinks=True)
    _git(origin, "init", "-q")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "demo")
    _git(root, "clone", "-q", str(origin), "clone")
    (root / "home").mkdir()
    return root / "clone"


def test_the_readme_code_scanning_snippet_on_a_fresh_runner_reports_the_demos_errors(
        demo_clone: Path, root: Path) -> None:
    home = root / "home"
    assert not (home / ".gemini").exists()  # no trustedFolders.json: the folder is untrusted
    sarif = _runner("check", ".", "--format", "sarif", cwd=demo_clone, home=home)
    assert sarif.code == 1, sarif.err
    results = json.loads(sarif.out)["runs"][0]["results"]
    found = {(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]
              ["uri"]) for r in results}
    assert ("import-not-found", "error", "GEMINI.md") in found
    assert ("hidden-text", "error", "docs/onboarding.md") in found
    # One short line says Gemini CLI would not load the files yet; nothing else on stderr.
    assert sarif.err.count("\n") == 1, sarif.err
    assert "not trusted" in sarif.err and "checked anyway" in sarif.err
    assert len(sarif.err.replace(str(demo_clone), "")) < 160, sarif.err
    # The text report finds the same, and the exit code says so.
    text = _runner("check", ".", cwd=demo_clone, home=home)
    assert text.code == 1
    assert "GEMINI.md:10:26: error[import-not-found]" in text.out
    assert "docs/onboarding.md:3:71: error[hidden-text]" in text.out
    # ...exactly what a run in a trusted folder reports.
    trusted = _runner("check", ".", "--trusted", "--format", "json", cwd=demo_clone, home=home)
    untrusted = _runner("check", ".", "--format", "json", cwd=demo_clone, home=home)
    assert json.loads(untrusted.out) == json.loads(trusted.out) != []


def test_untrusted_workspace_settings_stay_unread_when_checking(root: Path) -> None:
    """Checked whatever the trust, but the workspace's .gemini/settings.json is still Gemini
    CLI's to ignore in an untrusted folder: its context file name does not apply."""
    build_tree(root, {"home": None, "repo/.git": None, "repo/GEMINI.md": "Gone: @./gone.md\n",
                      "repo/RULES.md": "Also gone: @./missing.md\n",
                      "repo/.gemini/settings.json": json.dumps(
                          {"context": {"fileName": "RULES.md"}})})
    run = memlens("check", "repo", "--format", "json", cwd=root, home=root / "home")
    assert run.code == 1
    assert [(Path(d["path"]).name, d["code"]) for d in json.loads(run.out)] == [
        ("GEMINI.md", "import-not-found")]
    # --untrusted is the user's own choice for the run: what Gemini CLI loads untrusted.
    chosen = memlens("check", "repo", "--untrusted", "--format", "json", cwd=root,
                     home=root / "home")
    assert (chosen.code, json.loads(chosen.out)) == (0, [])


@pytest.fixture
def budgeted(root: Path) -> Path:
    build_tree(root, {"home": None, "repo/.git": None,
                      "repo/GEMINI.md": "Gemini rules.\n" * 20,  # 280 chars: ~70 tokens
                      "repo/CLAUDE.md": "Claude rules.\n" * 4})  # 56 chars: ~14 tokens
    return root


def test_check_budget_fails_a_folder_over_it_in_text_json_and_sarif(budgeted: Path) -> None:
    home = budgeted / "home"
    under = memlens("check", "repo", "--budget", "100", cwd=budgeted, home=home)
    assert (under.code, under.out) == (0, ""), under.err
    over = memlens("check", "repo", "--budget", "50", cwd=budgeted, home=home)
    assert over.code == 1
    assert over.out == ("repo/GEMINI.md:1:1: error[context-over-budget] This folder's memory is "
                        "~70 tokens for Gemini CLI, over the budget of 50 (--budget) — 1 file(s), "
                        "280 chars, 280 bytes; tokens: Gemini CLI's estimate\n")
    assert over.err.endswith("memlens: 1 error(s), 0 warning(s), 0 info(s) "
                             "(Gemini CLI, Claude Code)\n")
    # Per agent: Claude Code's own estimate (56 UTF-16 units / 4 = 14).
    claude = memlens("check", "repo", "--budget", "claude=10", "--format", "json",
                     cwd=budgeted, home=home)
    assert claude.code == 1
    assert [(Path(d["path"]).name, d["severity"], d["code"]) for d in json.loads(claude.out)] == [
        ("CLAUDE.md", "error", "context-over-budget")]
    assert "~14 tokens for Claude Code, over the budget of 10" in claude.out
    # An agent's own value wins over the one for every agent.
    both = memlens("check", "repo", "--budget", "10", "--budget", "gemini=1000", "--format",
                   "sarif", cwd=budgeted, home=home)
    results = json.loads(both.out)["runs"][0]["results"]
    assert both.code == 1
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]
             ["uri"]) for r in results] == [("context-over-budget", "error", "CLAUDE.md")]


def test_check_budget_usage_errors(budgeted: Path) -> None:
    home = budgeted / "home"
    for bad in ("0", "-3", "many", "windsurf=10", "claude="):
        run = memlens("check", "repo", "--budget", bad, cwd=budgeted, home=home)
        assert run.code == 2 and run.err.startswith("memlens: error:"), (bad, run.err)
        assert run.err.count("\n") == 1
    left_out = memlens("check", "repo", "--agent", "gemini", "--budget", "claude=5",
                       cwd=budgeted, home=home)
    assert left_out.code == 2 and "--agent gemini leaves out" in left_out.err


def test_check_summary_counts_infos(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None,
                      "repo/GEMINI.md": "Rules\n<!-- a note for reviewers -->\n"})
    run = memlens("check", "repo", cwd=root, home=root / "home")
    assert run.code == 0
    assert "info[hidden-comment]" in run.out
    assert run.err.endswith("memlens: 0 error(s), 0 warning(s), 1 info(s) (Gemini CLI)\n")


# --- `--fail-on`: CI that gates on warnings (issue 33) ----------------------------------------

# One tree per most severe finding: an import diamond (info), an import in prose (warning), a
# missing import (error).
_WORST = {
    "info": {"proj/GEMINI.md": "@./a.md\n@./b.md\n", "proj/a.md": "@./d.md",
             "proj/b.md": "@./d.md", "proj/d.md": "D"},
    "warning": {"proj/GEMINI.md": "ask @user\n"},
    "error": {"proj/GEMINI.md": "@./gone.md\n"},
}


def _worst_tree(root: Path, worst: str) -> Path:
    build_tree(root, {"home/.gemini/trustedFolders.json": json.dumps({str(root): "TRUST_FOLDER"}),
                      "proj/.git": None, **_WORST[worst]})
    return root


@pytest.mark.parametrize("worst", ["info", "warning", "error"])
@pytest.mark.parametrize("fail_on", [None, "error", "warning", "info"])
def test_fail_on_exits_1_at_or_above_its_level(root: Path, worst: str,
                                                fail_on: str | None) -> None:
    tree = _worst_tree(root, worst)
    option = [] if fail_on is None else ["--fail-on", fail_on]
    run = memlens("check", "proj", "--agent", "gemini", *option, cwd=tree, home=tree / "home")
    assert f"{worst}[" in run.out, run.out  # the tree's finding is there, whatever the gate
    levels = ["error", "warning", "info"]
    gate = levels.index(fail_on or "error")  # no --fail-on: errors only, as before
    assert run.code == (1 if levels.index(worst) <= gate else 0), (run.out, run.err)


@pytest.mark.parametrize("output", ["text", "json", "sarif", "github"])
def test_fail_on_warning_gates_every_format(root: Path, output: str) -> None:
    tree = _worst_tree(root, "warning")
    args = ("check", "proj", "--agent", "gemini", "--format", output)
    assert memlens(*args, cwd=tree, home=tree / "home").code == 0
    gated = memlens(*args, "--fail-on", "warning", cwd=tree, home=tree / "home")
    assert gated.code == 1, gated.err
    assert "import-in-prose" in gated.out


def test_fail_on_takes_only_a_severity(root: Path) -> None:
    tree = _worst_tree(root, "warning")
    run = memlens("check", "proj", "--fail-on", "never", cwd=tree, home=tree / "home")
    assert run.code == 2 and "invalid choice" in run.err and run.err.count("\n") == 1
