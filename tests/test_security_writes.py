"""Issue 15, hostile repositories and hostile models: writes, secrets, output, streams.

Every test reproduces the attack for real: the `memlens` command line as a subprocess (several
at once where the finding is a race), a writer killed with SIGKILL, a pseudo-terminal answering
the approval prompt, or the chat against the fake Gemini server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MEMLENS = Path(sys.executable).parent / "memlens"
_SCRUBBED = ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
             "GEMINI_API_KEY", "GOOGLE_API_KEY", "MEMLENS_GEMINI_BASE_URL")


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """A scrubbed environment with a throw-away HOME; the workspace is trusted explicitly."""
    environ = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    environ.update({"HOME": str(home), "GEMINI_CLI_HOME": str(home),
                    "GEMINI_CLI_TRUST_WORKSPACE": "true"})
    environ.update(extra)
    return environ


# --- 15: the project registry is created and updated under its lock ----------------------

def test_concurrent_project_adds_on_a_fresh_home_all_land(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    (project / ".git").mkdir(parents=True)
    env = cli_env(home)
    procs = [subprocess.Popen([str(MEMLENS), "add", f"fact number {n}", "--scope", "project"],
                              cwd=project, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for n in range(6)]
    results = [(p.wait(timeout=100), p.stderr.read() if p.stderr else "") for p in procs]
    for proc in procs:
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert [code for code, _ in results] == [0] * 6, results
    registry = json.loads((home / ".gemini" / "projects.json").read_text())
    assert registry == {"projects": {str(project.resolve()): "proj"}}
    memory = home / ".gemini" / "tmp" / "proj" / "memory" / "MEMORY.md"
    assert sorted(memory.read_text().splitlines()) == sorted(
        f"- fact number {n}" for n in range(6))
    # No temp file or lock of the registry is left behind.
    assert sorted(p.name for p in (home / ".gemini").iterdir()) == ["history", "projects.json",
                                                                 "tmp"]
