"""Skills per agent against the real agents (docs/reference.md "Skills").

Each tree of ``skills/cases.yaml`` is run through the real agent (offline, the recording fake
model; every pinned version that is installed, MEMLENS_AGENT_VERSIONS as elsewhere) and the
skills listing cut out of its first request is compared, byte for byte, with what
``memlens skills list --agent A --json`` says it sends:

* Claude Code: the ``role: "system"`` message's text from ``The following skills are available
  for use with the Skill tool:`` — memlens's ``listing`` (the user's and the project's lines),
  then exactly the built-in skills' lines the same release sends with no skills of the user's
  (a run on an empty tree), then the date line.
* Codex: the developer message's ``<skills_instructions>`` block, whole.
* Gemini CLI 0.61: the ``<available_skills>`` entries of its system instruction (its built-in
  ones left out) and memlens's offered skills, in order.
"""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conformance.agents import PINNED, is_installed, run_agent, scratch_for
from tests.conformance.conftest import REPLAY
from tests.conformance.predict import memlens
from tests.conformance.scenarios import Scenario, build_tree, scenario_env

CASES = Path(__file__).parent / "skills" / "cases.yaml"
CLAUDE_HEAD = "The following skills are available for use with the Skill tool:\n\n"
EMPTY = Scenario(id="skills-empty", agents=["claude"], tree={".git": None})


@functools.cache
def _scenarios() -> tuple[Scenario, ...]:
    data = yaml.safe_load(CASES.read_text(encoding="utf-8")) or []
    return tuple(Scenario.model_validate(item) for item in data)


def _params() -> list[Any]:
    """(agent, version, scenario) for every installed pinned version (skipped otherwise, and
    under MEMLENS_CONFORMANCE_REPLAY=1: these cases keep no goldens, they need the agents)."""
    out = []
    for scenario in _scenarios():
        for agent in scenario.agents:
            versions = PINNED.get(agent, ())
            if agent == "gemini":
                versions = tuple(v for v in versions if not v.startswith("0.43"))
            for version in versions:
                marks = [] if is_installed(agent, version) else [pytest.mark.skip(
                    reason=f"{agent}@{version} not installed: bash scripts/agents/install.sh")]
                if REPLAY:
                    marks = [pytest.mark.skip(reason="needs the live agents (no goldens)")]
                out.append(pytest.param(agent, version, scenario,
                                        id=f"{agent}@{version}:{scenario.id}", marks=marks))
    return out


def _run(agent: str, version: str, scenario: Scenario) -> tuple[dict[str, Any], Any]:
    """(the first request's body, the capture) of one run of `scenario`."""
    base = Path(tempfile.mkdtemp(prefix="memlens-skills-"))
    try:
        workspace, home = base / scenario.id, base / "home"
        build_tree(workspace, scenario.tree)
        build_tree(home, scenario.home)
        capture = run_agent(agent, version, workspace, home, scenario.cwd, None,
                            name=scenario.id, env=scenario_env(
                                scenario, scratch_for(agent, version, scenario.id) / "home")
                            or None)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    result = json.loads((scratch_for(agent, version, scenario.id) / "result.json")
                        .read_text(encoding="utf-8"))
    assert result["requests"], f"{agent} sent no request: {capture.notes}"
    return result["requests"][-1]["body"], capture


@functools.cache
def _all_runs() -> dict[tuple[str, str, str], tuple[dict[str, Any], Any]]:
    """Every wanted run at once (two at a time: the machine is shared)."""
    wanted = [(a, v, s) for a, v, s in
              ((p.values[0], p.values[1], p.values[2]) for p in _params()
               if not p.marks)]
    wanted += [("claude", v, EMPTY) for v in {v for a, v, _ in wanted if a == "claude"}]
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = list(pool.map(lambda w: _run(*w), wanted))
    return {(a, v, s.id): r for (a, v, s), r in zip(wanted, done, strict=True)}


def _texts(body: dict[str, Any], key: str) -> list[str]:
    out = []
    for message in body.get(key, []):
        content = message.get("content")
        parts = [content] if isinstance(content, str) else content or []
        out += [p if isinstance(p, str) else p.get("text", "") for p in parts]
    return out


def _claude_listing(body: dict[str, Any]) -> str:
    """The skills listing of Claude Code's request: from its head to the line before the
    date (the blank line that closes it)."""
    text = next((t for t in _texts(body, "messages") if CLAUDE_HEAD in t), "")
    assert text, "no skills listing in the request"
    start = text.index(CLAUDE_HEAD)
    end = text.find("\n\n", start + len(CLAUDE_HEAD))
    return text[start:end if end >= 0 else len(text)]


def _codex_block(body: dict[str, Any]) -> str:
    found = [t for t in _texts(body, "input") if t.startswith("<skills_instructions>")]
    assert len(found) == 1, f"{len(found)} skills blocks in the request"
    return found[0]


def _predicted(agent: str, version: str, capture: Any, scenario: Scenario
               ) -> dict[str, Any]:
    """`skills list --agent A --json` with the scenario's environment (CLAUDE_CONFIG_DIR,
    CODEX_HOME), `<HOME>` the run's HOME."""
    pin = f"{agent}@{version}" if agent != "gemini" else "gemini@0.44"
    answer: dict[str, Any] = memlens("skills", "list", "--json", "--home", capture.home,
                                     "--trusted", "--agent", pin, cwd=capture.cwd,
                                     home=capture.home,
                                     extra=scenario_env(scenario, Path(capture.home)))
    return answer


@pytest.mark.parametrize(("agent", "version", "scenario"), _params())
def test_skills_listing(agent: str, version: str, scenario: Scenario) -> None:
    body, capture = _all_runs()[(agent, version, scenario.id)]
    predicted = _predicted(agent, version, capture, scenario)
    if agent == "claude":
        builtins = _claude_listing(_all_runs()[(agent, version, EMPTY.id)][0])
        ours = predicted["listing"]
        expected = (ours + "\n" + builtins[len(CLAUDE_HEAD):]) if ours else builtins
        assert _claude_listing(body) == expected
    elif agent == "codex":
        assert _codex_block(body) == predicted["listing"]
    else:
        sent = [s for s in capture.skills or []
                if s["location"].startswith((capture.workspace, capture.home))]
        offered = [{"name": s["name"], "description": s["description"],
                    "location": s["location"]} for s in predicted["skills"] if s["offered"]]
        assert sent == offered
        assert sent, "the tree's skills were not listed at all"


@pytest.mark.parametrize(("agent", "version", "scenario"),
                         [p for p in _params() if p.values[0] != "gemini"])
def test_dropped_skills_are_absent(agent: str, version: str, scenario: Scenario) -> None:
    """A skill memlens says is not offered is nowhere in the listing (by its file), and every
    one it offers is there (Claude Code's found on a read below the folder are in no listing at
    start: `onRead`)."""
    body, capture = _all_runs()[(agent, version, scenario.id)]
    predicted = _predicted(agent, version, capture, scenario)
    sent = _claude_listing(body) if agent == "claude" else _codex_block(body)
    for skill in predicted["skills"]:
        if skill.get("onRead"):
            continue
        shown = skill["description"]
        if skill.get("cutTo") is not None:  # Codex past its budget: the start of it
            shown = shown[:skill["cutTo"]]
        line = f"- {skill['name']}: {shown}"
        if skill["offered"] and not skill["nameOnly"]:
            assert line in sent, skill
        elif not skill["offered"] and skill["description"]:
            assert line not in sent, skill


# The admin tier, /etc/codex/skills: never written to. As root, in a mount namespace of its own
# the run sees a copy of /etc holding codex/skills (bound over /etc), and so does memlens.
_ADMIN_RUN = r"""
import json, sys
from pathlib import Path
from tests.conformance.agents import run_agent
from tests.conformance.predict import memlens
from tests.conformance.scenarios import build_tree
from memlens.verify.capture import skills_listing
from memlens.verify.sandbox import Request
base = Path(sys.argv[1])
build_tree(base / "codex-skills-admin", {".git": None, "AGENTS.md": "x\n",
    ".agents/skills/dup/SKILL.md": "---\nname: dup\ndescription: Repo dup.\n---\n"})
build_tree(base / "home", {".agents/skills/mine/SKILL.md":
    "---\nname: mine\ndescription: User skill.\n---\n"})
capture = run_agent("codex", sys.argv[2], base / "codex-skills-admin", base / "home", ".", None)
result = json.loads((Path(capture.workspace).parent / "result.json").read_text())
sent = skills_listing("codex", [Request(**r) for r in result["requests"]])
predicted = memlens("skills", "list", "--json", "--home", capture.home, "--trusted", "--agent",
                    "codex", cwd=capture.cwd, home=capture.home)
print(json.dumps({"sent": sent, "predicted": predicted}))
"""


def _can_bind_etc() -> bool:
    import os

    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    done = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.parametrize("version", [v for v in PINNED.get("codex", ())])
def test_codex_admin_skills(version: str, tmp_path: Path) -> None:
    """`/etc/codex/skills` is listed after Codex's own skills and before the repository's."""
    if REPLAY or not is_installed("codex", version) or not _can_bind_etc():
        pytest.skip("needs codex, root and a mount namespace (unshare -m)")
    etc = tmp_path / "etc"
    shutil.copytree("/etc", etc, symlinks=True, ignore_dangling_symlinks=True,
                    ignore=shutil.ignore_patterns("codex"))
    build_tree(etc / "codex" / "skills", {
        "admin-skill/SKILL.md": "---\nname: admin-skill\ndescription: From the admin.\n---\n",
        "dup/SKILL.md": "---\nname: dup\ndescription: Admin dup.\n---\n"})
    script = ('mount --make-rprivate / && mount --bind "$1" /etc && '
              'exec "$2" -c "$3" "$4" "$5"')
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", str(etc), sys.executable, _ADMIN_RUN,
         str(tmp_path / "run"), version],
        capture_output=True, text=True, timeout=300, check=False,
        cwd=str(Path(__file__).resolve().parents[2]))
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert "(file: r" in answer["sent"] and "/etc/codex/skills" in answer["sent"]
    assert answer["sent"] == answer["predicted"]["listing"]
