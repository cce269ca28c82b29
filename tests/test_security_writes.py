"""Issue 15, hostile repositories and hostile models: writes, secrets, output, streams.

Every test reproduces the attack for real: the `memlens` command line as a subprocess (several
at once where the finding is a race), a writer killed with SIGKILL, a pseudo-terminal answering
the approval prompt, or the chat against the fake Gemini server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
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


# --- 20: a writer killed mid-write leaves nothing behind for long ------------------------

SLOW_WRITER = """
import sys
import threading
from memlens.writing import atomic_write
while True:
    atomic_write(sys.argv[1], "## Gemini Added Memories\\n- killed\\n" + "x" * 60_000_000)
"""


def test_a_killed_writers_temp_file_is_removed_by_the_next_write(tmp_path: Path) -> None:
    home = tmp_path / "home"
    gemini = home / ".gemini"
    gemini.mkdir(parents=True)
    (tmp_path / "proj").mkdir()
    target = gemini / "GEMINI.md"
    target.write_text("# Mine\n")
    writer = subprocess.Popen([sys.executable, "-c", SLOW_WRITER, str(target)],
                              env=cli_env(home))
    try:
        deadline = time.monotonic() + 60
        while not [n for n in os.listdir(gemini) if n != "GEMINI.md" and "lock" not in n]:
            assert time.monotonic() < deadline, "the writer never created its temp file"
            assert writer.poll() is None
            time.sleep(0.005)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert len(os.listdir(gemini)) > 1  # the killed writer's temp file (and lock) remain
    run = subprocess.run([str(MEMLENS), "add", "after the crash"], cwd=tmp_path / "proj",
                         env=cli_env(home), capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert os.listdir(gemini) == ["GEMINI.md"]  # no temp file, no lock sidecar
    text = target.read_text()
    assert text.endswith("## Gemini Added Memories\n- after the crash\n")
    assert text.startswith("# Mine\n") or text.startswith("## Gemini Added Memories\n- killed")


def test_threads_of_one_process_writing_one_file_lose_nothing(tmp_path: Path) -> None:
    # The LSP server writes from worker threads (chat tools, Add Memory) at once.
    from memlens.writing import save_memory

    target = tmp_path / "GEMINI.md"

    def write(who: int) -> None:
        for i in range(15):
            assert save_memory(f"thread {who} fact {i}", str(target)).success

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    facts = [line for line in target.read_text().splitlines() if line.startswith("- ")]
    assert sorted(facts) == sorted(f"- thread {n} fact {i}" for n in range(4) for i in range(15))
    assert os.listdir(tmp_path) == ["GEMINI.md"]
