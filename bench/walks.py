"""The walks of whole `memlens` runs, as ratios to a bare walk (docs/architecture.md, "One
walk per root"): `memlens check` with every agent, and the classic discovery of the whole tree
as one process against a bare walk as one process.

`check` is measured twice, each side like the other: the whole process against a bare walk as
a process, and the command's own work (in a fresh process, a second run of the command after a
first has loaded its modules: only the second counts, as a long-lived process pays it) against
the bare walk in this process. The first mixes in what any Python process costs before it
reads a folder (interpreter, pydantic, the agents' modules); the second is the walk-and-check
itself.

For the check, every agent's files are laid over the benchmark tree for the run (removed
after): a `CLAUDE.md` and an `AGENTS.md` at the root, Cursor's `.cursor/rules` with a glob,
Copilot's instructions with an `applyTo`, Claude Code's `.claude/rules` with `paths:`, and
Antigravity's `.agents/rules`; every glob is matched against the tree's files.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from memlens.agents import AGENT_IDS

from . import floor
from .floor import bare_walk

CHECK_TARGET = 6.0  # check with every agent ≤ 6 × the bare walk
PROCESS_TARGET = 2.0  # the classic discovery as a process ≤ 2 × a bare walk as a process

OVERLAY = {
    "CLAUDE.md": "# Claude Code\n\n- Read @AGENTS.md first.\n",
    "AGENTS.md": "# Agents\n\n- Run the tests before every commit.\n",
    ".cursor/rules/typescript.mdc": "---\nglobs: **/*.ts\n---\nStrict TypeScript.\n",
    ".github/copilot-instructions.md": "Prefer small pull requests.\n",
    ".github/instructions/python.instructions.md":
        "---\napplyTo: \"**/*.py\"\n---\nType hints everywhere.\n",
    ".claude/rules/packages.md": "---\npaths: [\"packages/**/*.md\"]\n---\nKeep docs short.\n",
    ".agents/rules/style.md": "Follow the style guide.\n",
}


@contextlib.contextmanager
def every_agents_files(root: str) -> Iterator[None]:
    """`OVERLAY` written under `root` for the block: the files, and the folders it made."""
    made: list[str] = []
    written: list[str] = []
    try:
        for rel, text in OVERLAY.items():
            path = os.path.join(root, rel)
            folder = os.path.dirname(path)
            missing: list[str] = []
            while not os.path.isdir(folder):
                missing.append(folder)
                folder = os.path.dirname(folder)
            for new in reversed(missing):
                os.mkdir(new)
                made.append(new)
            if os.path.exists(path):
                continue  # never overwrite the tree's own file
            with open(path, "w", encoding="utf-8") as out:
                out.write(text)
            written.append(path)
        yield
    finally:
        for path in written:
            with contextlib.suppress(OSError):
                os.unlink(path)
        for folder in reversed(made):
            shutil.rmtree(folder, ignore_errors=True)


def cpu_seconds(command: list[str], env: dict[str, str], runs: int
                ) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """The least CPU time (user + system) of `runs` runs of a subprocess, after a warm-up:
    CPU time, not wall-clock, so that other work on the machine does not count."""
    subprocess.run(command, capture_output=True, env=env, check=False)
    best = float("inf")
    done: subprocess.CompletedProcess[bytes] | None = None
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(command, capture_output=True, env=env, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    assert done is not None
    return best, done


# Run in a fresh interpreter: the command once to load its modules and build its models (what
# a long-lived process, the language server, pays once), then the command again, timed. Nothing
# of the tree is kept between the two (each command is its own `one_walk()`).
_ENGINE_WORK = """
import sys, time
from memlens.cli.main import main
main(sys.argv[1:])
start = time.process_time()
main(sys.argv[1:])
sys.stderr.write(f"\\nmemlens-bench-cpu {time.process_time() - start}\\n")
"""


def engine_cpu_seconds(args: list[str], env: dict[str, str], runs: int) -> float:
    """The least CPU time of `memlens ARGS`'s own work (`_ENGINE_WORK`), after a warm-up."""
    best = float("inf")
    for attempt in range(runs + 1):
        done = subprocess.run([sys.executable, "-c", _ENGINE_WORK, *args], capture_output=True,
                              env=env, check=False)
        line = done.stderr.rsplit(b"memlens-bench-cpu ", 1)
        if len(line) != 2:
            raise RuntimeError("memlens " + " ".join(args) + " failed: "
                               + done.stderr.decode(errors="replace")[-500:])
        if attempt:  # the first run warms the caches
            best = min(best, float(line[1].split()[0]))
    return best


def walk_cpu_seconds(root: str, runs: int) -> float:
    """The least CPU time of the bare walk (`floor.bare_walk`), in this process."""

    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        bare_walk(root)
        best = min(best, time.process_time() - start)
    return best


def run_walks(root: str, home: str, env: dict[str, str], memlens: list[str], runs: int
              ) -> dict[str, Any]:
    """CPU seconds and ratios: `check` with every agent against the bare walk in this
    process; classic discovery as a process against a bare walk as a process."""
    every = {**env, "MEMLENS_AGENTS": ",".join(AGENT_IDS)}
    # The classic search exists in Gemini CLI 0.43 only (0.44+ loads just in time): pinned,
    # or the row would time a just-in-time `show` (docs/reference.md, `--mode`).
    gemini = {**env, "MEMLENS_AGENTS": "gemini@0.43.0"}
    current = {**env, "MEMLENS_AGENTS": "gemini"}
    walk = walk_cpu_seconds(root, max(runs, 3))
    with every_agents_files(root):
        check_args = ["check", root, "--home", home, "--format", "json"]
        check, checked = cpu_seconds([*memlens, *check_args], every, runs)
        check_work = engine_cpu_seconds(check_args, every, runs)
    walk_process, _ = cpu_seconds([sys.executable, floor.__file__, root], env, runs)
    discovery, shown = cpu_seconds([*memlens, "show", root, "--home", home, "--mode", "classic",
                                    "--max-dirs", "-1"], gemini, runs)
    if b"--- Context from:" not in shown.stdout:
        # the search loaded nothing: a failure
        shown = subprocess.CompletedProcess(shown.args, 99, shown.stdout, shown.stderr)
    # `memlens show` under the current release: the one walk that finds every agent's files,
    # then the start-up chain (information: what a user's `memlens show ROOT` costs).
    jit_show, shown_jit = cpu_seconds([*memlens, "show", root, "--home", home], current, runs)
    failed = [name for name, done in (("check", checked), ("show", shown),
                                      ("show (jit)", shown_jit))
              if done.returncode not in (0, 1)]
    return {
        "cpu_s": {"bare_walk": round(walk, 6), "check_every_agent": round(check, 6),
                  "check_every_agent_work": round(check_work, 6),
                  "bare_walk_process": round(walk_process, 6),
                  "classic_process": round(discovery, 6), "show_process": round(jit_show, 6)},
        "ratios": {"check_every_agent_vs_walk": round(check / walk, 4),
                   "check_work_vs_walk": round(check_work / walk, 4),
                   "check_process_vs_walk_process": round(check / walk_process, 4),
                   "classic_process_vs_walk_process": round(discovery / walk_process, 4),
                   "show_process_vs_walk_process": round(jit_show / walk_process, 4)},
        "failed": failed,
    }


def render(report: dict[str, Any], seconds: Callable[[float], str]) -> list[str]:
    if not report:
        return []
    t, r = report["cpu_s"], report["ratios"]

    def verdict(ratio: float, target: float) -> str:
        return "PASS" if ratio <= target else "OVER"

    work = r["check_work_vs_walk"]
    check = r["check_process_vs_walk_process"]
    process = r["classic_process_vs_walk_process"]
    return [
        "",
        "One walk per root (CPU time):",
        f"  memlens check, every agent: its work {seconds(t['check_every_agent_work']):>9}"
        f"  {work:6.2f}× the bare walk         ≤ {CHECK_TARGET:g}×  "
        f"{verdict(work, CHECK_TARGET)}",
        f"  the same, whole process             {seconds(t['check_every_agent']):>10}"
        f"  {check:6.2f}× a bare-walk process  ≤ {CHECK_TARGET:g}×  "
        f"{verdict(check, CHECK_TARGET)}",
        f"  classic discovery (show, 0.43)      {seconds(t['classic_process']):>10}"
        f"  {process:6.2f}× a bare-walk process  ≤ {PROCESS_TARGET:g}×  "
        f"{verdict(process, PROCESS_TARGET)}",
        f"  memlens show (0.44+, every agent's files found)"
        f"  {seconds(t['show_process']):>10}  {r['show_process_vs_walk_process']:6.2f}× a "
        "bare-walk process (information)",
        f"  bare walk, as a process             {seconds(t['bare_walk_process']):>10}",
        f"  bare walk, in this process          {seconds(t['bare_walk']):>10}",
        "  (CPU time, user + system, least of the runs: other work on the machine does not "
        "count)",
    ]
