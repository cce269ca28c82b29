"""What memlens predicts today, asked through its command line only (`python -m memlens`):
the conformance suite tests the shipped tool, not engine internals that are being reshaped.

Every agent through ``show --agent A --json`` and ``jit --agent A --json``
(docs/reference.md "Which agent, which version"): the files it reads (``when``: startup, on-read)
and ``payloads``, the exact strings it sends at start and after a tool touches a path.
* Gemini CLI 0.43 (``--agent gemini@0.43``) and 0.61 (``gemini@0.44``): besides, ``prompt``
  (the system instruction's memory part) and ``sessionMemory`` (the first user message's).
* Claude Code (``claude``): the files at start and on read, the start-up ``<system-reminder>``
  and the messages after the read.
* Codex (``codex``): the ``# AGENTS.md instructions`` message.
* GitHub Copilot CLI (``copilot``): the system message's instructions and the user message
  of `<system_reminder>` blocks after the `view`.
* OpenCode (``opencode``): the system message's ``Instructions from:`` blocks and the
  ``<system-reminder>`` its `read` result ends with.
* pi (``pi``): what of its system message comes from files; nothing is added on read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from memlens.agents.gemini.render import collapse_blank_lines
from memlens.agents.gemini.skills import Skill, render_available_skills
from memlens.verify.capture import skills_in_system_instruction
from tests.conformance.agents import HOME_BEFORE, Capture, memory_files
from tests.conformance.sandbox import REPO

# The variables that move an agent's global folder: a run gets only its scenario's (the
# developer's own would point the prediction elsewhere), so the prediction drops the others.
GLOBAL_FOLDER_VARIABLES = ("XDG_CONFIG_HOME", "OPENCODE_CONFIG_DIR", "COPILOT_HOME",
                           "PI_CODING_AGENT_DIR", "CODEX_HOME", "CLAUDE_CONFIG_DIR",
                           "OPENCODE_CONFIG")


def memlens(*args: str, cwd: str, home: str | None = None,
            extra: dict[str, str] | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if k not in GLOBAL_FOLDER_VARIABLES}
    env |= extra or {}
    if home is not None:  # settings may say $HOME, which the agent read as its own HOME
        env["HOME"] = home
    # MEMLENS_PREDICT_SERVER: another engine's source (an older commit's server/, to minimise
    # the trees it got wrong into regression scenarios).
    server = os.environ.get("MEMLENS_PREDICT_SERVER") or str(REPO / "server")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (server, env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-m", "memlens", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=120, check=False,
    )
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise RuntimeError(f"memlens {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


def _common(capture: Capture, agent: str) -> list[str]:
    return ["--home", capture.home, "--trusted", "--agent", agent]


def _scenario_env(capture: Capture) -> dict[str, str]:
    """The variables the run's scenario set (XDG_CONFIG_HOME, OPENCODE_CONFIG_DIR,
    COPILOT_HOME, PI_CODING_AGENT_DIR, CODEX_HOME, CLAUDE_CONFIG_DIR...), `<HOME>` the run's
    HOME; none for a generated tree of the differential run."""
    from tests.conformance.scenarios import scenario_by_id, scenario_env

    try:
        scenario = scenario_by_id(Path(capture.workspace).parent.name)
    except KeyError:
        return {}
    return scenario_env(scenario, Path(capture.home))


def _jit(capture: Capture, agent: str, read_tool: bool = False,
         extra: dict[str, str] | None = None) -> dict[str, Any] | None:
    """`jit --agent A --json`'s entry for the scripted read (None without a read); with
    `read_tool`, as the agent's read tool reads it (a missing file loads nothing)."""
    if not capture.read_path:
        return None
    answer = memlens("jit", "--json", *_common(capture, agent), "--cwd", capture.cwd,
                     *(["--read-tool"] if read_tool else []),
                     capture.read_path, cwd=capture.cwd, home=capture.home, extra=extra)
    entry: dict[str, Any] = answer[0]
    return entry


def gemini(capture: Capture, profile: str = "gemini@0.43") -> dict[str, Any]:
    """{show: the `show --agent --json` object (`prompt`, `sessionMemory`, `payloads`), jit:
    the appended string and jit_payloads (None without a read), skills: `skills list --json`
    ({name, description, location}, in order), written: what `memlens add` writes for the
    scripted save_memory call ({path under HOME: text}; {} without one)}."""
    show = memlens("show", "--json", *_common(capture, profile), capture.cwd, cwd=capture.cwd,
                   home=capture.home)
    jit = _jit(capture, profile, read_tool=True)  # the scripted call is read_file
    listed = memlens("skills", "list", "--json", *_common(capture, profile), cwd=capture.cwd,
                     home=capture.home)
    return {"show": show, "payloads": show["payloads"],
            "jit": None if jit is None else jit["context"],
            "jit_payloads": None if jit is None else jit["payloads"],
            "skills": _as_listed(listed),
            "written": _written(capture, profile)}


def _as_listed(listed: list[dict[str, Any]] | dict[str, Any]) -> list[dict[str, str]]:
    """The skills as the model reads them: Gemini CLI's listing, then its system instruction's
    sanitising (three newlines or more become two, also inside a description). `skills list
    --agent gemini --json` answers with the agent's object (its skills, offered or not)."""
    if isinstance(listed, dict):
        listed = [s for s in listed["skills"] if s["offered"]]
    skills = [Skill(s["name"], s["description"], s["location"], "") for s in listed]
    system = collapse_blank_lines(render_available_skills(skills))
    return skills_in_system_instruction(system, []) or []


def _written(capture: Capture, profile: str) -> dict[str, str]:
    """`memlens add` run for the scripted save_memory call on a copy of HOME as it was before
    the agent ran (the memory files it created or changed, by path under HOME)."""
    call = capture.tool_call
    if not call or call.get("name") != "save_memory":
        return {}
    before = Path(capture.home).parent / HOME_BEFORE
    home = Path(capture.home).parent / "home-memlens"
    if home.exists():
        shutil.rmtree(home)
    shutil.copytree(before, home, symlinks=True)
    args = call.get("args", {})
    scope = ["--scope", args["scope"]] if args.get("scope") else []
    common = ["--home", str(home), "--trusted", "--agent", profile]
    memlens("add", "--json", *common, *scope, "--", str(args.get("fact", "")), cwd=capture.cwd)
    old, new = memory_files(before), memory_files(home)
    return {rel: data.decode("utf-8", "replace") for rel, data in sorted(new.items())
            if old.get(rel) != data}


def gemini_044(capture: Capture) -> dict[str, Any]:
    """Gemini CLI 0.44 and later (verified on 0.61.0): the ``gemini@0.44+`` profile."""
    return gemini(capture, "gemini@0.44")


def claude(capture: Capture) -> dict[str, Any]:
    """{startup: [paths], payloads: the start-up message, diagnostics, on_read: [paths] and
    jit_payloads: the text blocks sent after the read (None without a read)}; with the
    scenario's environment (CLAUDE_CONFIG_DIR)."""
    # The release that ran (its grammar: Claude Code 2.1.332 changed one lexer rule, C8).
    agent = f"claude@{capture.version}"
    extra = _scenario_env(capture)
    show = memlens("show", "--json", *_common(capture, agent), capture.cwd, cwd=capture.cwd,
                   home=capture.home, extra=extra)
    jit = _jit(capture, agent, extra=extra)
    return {"startup": [f["path"] for f in show["files"] if f["when"] == "startup"],
            "payloads": show["payloads"], "diagnostics": show.get("diagnostics", []),
            "on_read": None if jit is None else list(jit["files"]),
            "jit_payloads": None if jit is None else jit["payloads"],
            "skills": _skills(capture, agent, extra)}


def _skills(capture: Capture, agent: str, extra: dict[str, str] | None = None
            ) -> dict[str, Any]:
    """`skills list --agent A --json`: the listing it sends and every skill it looks at."""
    answer: dict[str, Any] = memlens("skills", "list", "--json", *_common(capture, agent),
                                     cwd=capture.cwd, home=capture.home, extra=extra)
    return answer


def codex(capture: Capture) -> dict[str, Any]:
    """{payloads: [the `# AGENTS.md instructions` message] ([] when none), files: [paths]};
    with the scenario's environment (CODEX_HOME)."""
    extra = _scenario_env(capture)
    show = memlens("show", "--json", *_common(capture, "codex"), capture.cwd, cwd=capture.cwd,
                   home=capture.home, extra=extra)
    return {"payloads": show["payloads"], "files": [f["path"] for f in show["files"]],
            "skills": _skills(capture, f"codex@{capture.version}", extra)}


def copilot(capture: Capture) -> dict[str, Any]:
    """{payloads: the system message's memory part ([] when none), files: [paths at start],
    jit_payloads: the user message after the view (None without a read)}; with the
    scenario's environment (COPILOT_HOME, XDG_CONFIG_HOME)."""
    extra = _scenario_env(capture)
    show = memlens("show", "--json", *_common(capture, "copilot"), capture.cwd,
                   cwd=capture.cwd, home=capture.home, extra=extra)
    jit = _jit(capture, "copilot", extra=extra)
    return {"payloads": show["payloads"],
            "files": [f["path"] for f in show["files"] if f["when"] == "startup"],
            "jit_payloads": None if jit is None else jit["payloads"]}


def opencode(capture: Capture) -> dict[str, Any]:
    """{payloads: the system message's instructions ([] when none), files: [paths at start],
    jit_payloads: the reminder its read result ends with (None without a read)}; with the
    scenario's environment (XDG_CONFIG_HOME, OPENCODE_CONFIG_DIR...)."""
    extra = _scenario_env(capture)
    show = memlens("show", "--json", *_common(capture, "opencode"), capture.cwd,
                   cwd=capture.cwd, home=capture.home, extra=extra)
    jit = _jit(capture, "opencode", extra=extra)
    return {"payloads": show["payloads"],
            "files": [f["path"] for f in show["files"] if f["when"] == "startup"],
            "jit_payloads": None if jit is None else jit["payloads"]}


def pi(capture: Capture) -> dict[str, Any]:
    """{payloads: what of the system message comes from files ([] when nothing), files:
    [paths]}; with the scenario's environment (PI_CODING_AGENT_DIR), when the run was one."""
    show = memlens("show", "--json", *_common(capture, "pi"), capture.cwd, cwd=capture.cwd,
                   home=capture.home, extra=_scenario_env(capture))
    return {"payloads": show["payloads"], "files": [f["path"] for f in show["files"]]}


PREDICTORS = {
    ("gemini", "0.43.0"): gemini,
    ("gemini", "0.61.0"): gemini_044,
    ("claude", "2.1.330"): claude,
    ("codex", "0.169.0"): codex,
    ("copilot", "1.0.102"): copilot,
    ("opencode", "1.18.33"): opencode,
    ("pi", "0.73.1"): pi,
}
