"""`memlens verify` runs the agents at once on one shared copy of the workspace: stand-in
agents (shell scripts, in the real sandbox) that each wait to see the others start, and a
stand-in Copilot that must see a repository marker the others do not. Each says what it saw on
stderr, which verify reports (they send the model nothing: "offline")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlens.agent_versions import InstalledAgent
from memlens.verify.run import verify
from memlens.verify.sandbox import bubblewrap

pytestmark = pytest.mark.skipif(bubblewrap() is None, reason="needs bubblewrap")

# Each marks its start in the shared copy, then waits (up to 60 s) for the three marks.
_WAITS = """#!/bin/sh
: > "$PWD/.started-{name}"
i=0
while [ $i -lt 600 ]; do
  if [ -e "$PWD/.started-gemini" ] && [ -e "$PWD/.started-claude" ] \\
     && [ -e "$PWD/.started-copilot" ]; then break; fi
  /bin/sleep 0.1; i=$((i + 1))
done
n=0
for who in gemini claude copilot; do [ -e "$PWD/.started-$who" ] && n=$((n + 1)); done
if [ -e "$PWD/.git/HEAD" ]; then git=repository; else git=marker; fi
echo "saw $n started, .git a $git" >&2
"""


def _agent(folder: Path, name: str) -> InstalledAgent:
    path = folder / name
    path.write_text(_WAITS.replace("{name}", name), encoding="utf-8")
    path.chmod(0o755)
    return InstalledAgent(name, "9.9.9", str(path))


def test_the_agents_run_at_once_on_one_copy(tmp_path: Path) -> None:
    ws, bins, home = tmp_path / "ws", tmp_path / "bins", tmp_path / "home"
    for folder in (ws / ".git", bins, home):
        folder.mkdir(parents=True)
    (ws / "README.md").write_text("hello\n", encoding="utf-8")
    installed = {name: _agent(bins, name) for name in ("gemini", "claude", "copilot")}
    steps: list[str] = []
    result = verify(str(ws), installed, home=str(home), remember=False, trusted=True,
                    timeout=90, progress=steps.append)
    said = {a.agent: a.message for a in result.agents}
    assert all(a.status == "offline" for a in result.agents), said
    for agent in ("gemini", "claude"):
        assert "saw 3 started, .git a marker" in said[agent]
    assert "saw 3 started, .git a repository" in said["copilot"]
    assert all(0 < a.seconds <= result.seconds for a in result.agents)
    assert steps[0].startswith("running Gemini CLI 9.9.9, Claude Code 9.9.9, GitHub Copilot")
    assert not (ws / ".started-gemini").exists() and not os.path.exists(ws / ".git" / "HEAD")
