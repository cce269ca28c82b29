"""What memlens predicts today, asked through its command line only (`python -m memlens`):
the conformance suite tests the shipped tool, not engine internals that are being reshaped.

* Gemini CLI 0.43 (SPEC §7): ``show --json`` gives ``prompt`` (the system instruction's memory
  part), ``sessionMemory`` (the first user message's), ``content``/``files``/``fileCount``
  (what /memory show and the loader report); ``jit --json`` gives the string appended after a
  tool touches a path.
* Gemini CLI 0.61 (the ``gemini@0.44+`` profile): the same, with ``--agent gemini@0.44``.
* Claude Code: ``show --dialect claude --json`` and ``jit --dialect claude --json`` give the
  files it loads at start and on read, and the text it sends then.
* Codex: ``show --dialect codex --json`` gives the exact ``# AGENTS.md instructions`` message
  (``content``) and the files in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.conformance.agents import Capture
from tests.conformance.sandbox import REPO


def memlens(*args: str, cwd: str) -> Any:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "server"), env.get("PYTHONPATH", "")) if p
    )
    done = subprocess.run(
        [sys.executable, "-m", "memlens", *args], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=120, check=False,
    )
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise RuntimeError(f"memlens {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


def _common(capture: Capture, dialect: str | None) -> list[str]:
    args = ["--home", capture.home, "--trusted"]
    return [*args, "--dialect", dialect] if dialect else args


def gemini(capture: Capture, *profile: str) -> dict[str, Any]:
    """{show: the show --json object, jit: the appended string or None without a read}."""
    common = [*_common(capture, None), *profile]
    show = memlens("show", "--json", *common, capture.cwd, cwd=capture.cwd)
    jit = None
    if capture.read_path:
        answer = memlens("jit", "--json", *common, "--cwd", capture.cwd,
                         capture.read_path, cwd=capture.cwd)
        jit = answer[0]["context"]
    return {"show": show, "jit": jit}


def gemini_044(capture: Capture) -> dict[str, Any]:
    """Gemini CLI 0.44 and later (verified on 0.61.0): the ``gemini@0.44+`` profile."""
    return gemini(capture, "--agent", "gemini@0.44")


def claude(capture: Capture) -> dict[str, Any]:
    """{startup: [paths], payload: the start-up message, on_read: [paths] and context: what
    is sent after the read (None without a read)}."""
    show = memlens("show", "--json", *_common(capture, "claude"), capture.cwd, cwd=capture.cwd)
    on_read = context = None
    if capture.read_path:
        answer = memlens("jit", "--json", *_common(capture, "claude"), "--cwd", capture.cwd,
                         capture.read_path, cwd=capture.cwd)
        on_read = list(answer[0]["files"])
        context = answer[0]["context"]
    return {"startup": list(show["files"]), "payload": show["payload"], "on_read": on_read,
            "context": context}


def codex(capture: Capture) -> dict[str, Any]:
    """{text: the `# AGENTS.md instructions` message ('' when none), files: [paths]}."""
    show = memlens("show", "--json", *_common(capture, "codex"), capture.cwd, cwd=capture.cwd)
    return {"text": show["content"], "files": list(show["files"])}


PREDICTORS = {
    ("gemini", "0.43.0"): gemini,
    ("gemini", "0.61.0"): gemini_044,
    ("claude", "2.1.330"): claude,
    ("codex", "0.169.0"): codex,
}
