"""`memlens bench`: the benchmarks (docs/reference.md "Benchmarks"), measured in one run on one
machine.

Generates (or reuses) the synthetic monorepo of `bench.generate` in the cache folder, then
times a bare `os.scandir` walk of it, classic discovery with no folder cap, jit start-up,
`memlens show` start-up on a tiny tree against the interpreter's own start-up plus the
dependencies' import time, and `memlens check` on the big tree. Ratios are printed next to
their targets with PASS/OVER; nothing is asserted (timings depend on the machine).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from memlens.agents.gemini.discovery import MemoryEngine, MemoryLoad
from memlens.model import MemorySettings

from .editor import load as load_editor
from .floor import bare_walk
from .generate import MEMORY_NAME, Stats, generate

T = TypeVar("T")

TINY_SCALE = 0.001
SUBPROCESS_RUNS = 5
CLASSIC_TARGET = 2.0  # classic discovery ≤ 2 × the bare walk
SHOW_TARGET = 2.0  # `memlens show` ≤ 2 × (python -c pass + dependency imports)
DEPS_IMPORT = "import pydantic, yaml, pathspec"
# `import pydantic` is lazy (pydantic 2 loads BaseModel's machinery on first use); this variant,
# reported for information only, includes what any pydantic model costs to import.
DEPS_IMPORT_MODELS = "from pydantic import BaseModel; import yaml, pathspec"


@dataclass
class Timing:
    """Wall-clock seconds of every run; `best` is what the table reports."""

    name: str
    runs: list[float] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def best(self) -> float:
        return min(self.runs)

    def to_json(self) -> dict[str, Any]:
        return {"best_s": round(self.best, 6), "runs_s": [round(r, 6) for r in self.runs],
                **self.detail}


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memlens"


def repeats(scale: float) -> int:
    """Best of 3 at full scale; small trees are cheap and noisier, so they get more runs."""
    if scale >= 0.5:
        return 3
    return 5 if scale >= 0.1 else 15


def best_of(name: str, runs: int, action: Callable[[], T]) -> tuple[Timing, T]:
    timing = Timing(name)
    result: T | None = None
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        result = action()
        timing.runs.append(time.perf_counter() - start)
    assert result is not None
    return timing, result


def classic_settings(home: str) -> MemorySettings:
    return MemorySettings(home=home, jit_context=False, discovery_max_dirs=-1,
                          discover_gemini_extensions=False)


def jit_settings(home: str) -> MemorySettings:
    return MemorySettings(home=home, jit_context=True, discover_gemini_extensions=False)


def memlens_command() -> list[str]:
    checkout = Path(__file__).resolve().parents[1]
    for candidate in (checkout / ".venv" / "bin" / "memlens",
                      Path(sys.executable).parent / "memlens"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return [str(candidate)]
    found = shutil.which("memlens")
    return [found] if found else [sys.executable, "-m", "memlens"]


def subprocess_env(pycache: Path) -> dict[str, str]:
    """The environment for timed subprocesses: bytecode caching on, in our own cache folder.

    With PYTHONDONTWRITEBYTECODE set (as in some sandboxes and CI images) an editable install
    has no `.pyc` for its own modules, so every `memlens` start would compile the engine from
    source while the dependencies (compiled by pip) would not: the comparison would be unfair.
    PYTHONPYCACHEPREFIX gives every measured command the same warm bytecode cache, written
    outside the source tree.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def time_command(name: str, command: Sequence[str], runs: int, env: dict[str, str],
                 warmup: bool = True) -> tuple[Timing, subprocess.CompletedProcess[bytes]]:
    """Best wall-clock time of `runs` runs of a subprocess (after one untimed warm-up)."""
    if warmup:
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=env, check=False)
    timing = Timing(name)
    completed: subprocess.CompletedProcess[bytes] | None = None
    for _ in range(runs):
        start = time.perf_counter()
        completed = subprocess.run(command, capture_output=True, env=env, check=False)
        timing.runs.append(time.perf_counter() - start)
    assert completed is not None
    timing.detail["exit_status"] = completed.returncode
    return timing, completed


def _seconds(value: float) -> str:
    if value < 1.0:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"


def _verdict(ratio: float, target: float) -> str:
    return "PASS" if ratio <= target else "OVER"


def _progress(message: str) -> None:
    print(f"memlens bench: {message}", file=sys.stderr, flush=True)


def render_table(report: dict[str, Any]) -> str:
    tree = report["tree"]
    t = report["timings"]
    r = report["ratios"]
    rows: list[tuple[str, str, str, str, str, str]] = []

    def row(label: str, key: str, ratio: float | None = None, target: float | None = None,
            runs: str | None = None) -> None:
        timing = t[key]
        rows.append((label, _seconds(timing["best_s"]),
                     runs or str(len(timing["runs_s"])),
                     "" if ratio is None else f"{ratio:.3f}×" if ratio < 0.1 else f"{ratio:.2f}×",
                     "" if target is None else f"≤ {target:g}×",
                     "" if ratio is None or target is None else _verdict(ratio, target)))

    row("bare walk (os.scandir, no symlinks)", "bare_walk", 1.0)
    row("classic discovery, no folder cap", "classic", r["classic_vs_walk"], CLASSIC_TARGET)
    row("  of which: downward search only", "classic_search", r["classic_search_vs_walk"])
    row("jit start-up (load_jit)", "jit", r["jit_vs_walk"])
    row("memlens show, tiny tree", "show", r["show_vs_baseline"], SHOW_TARGET)
    row("  python -c pass", "python_pass")
    row(f"  python -c '{DEPS_IMPORT}'", "python_deps")
    row("  the same, pydantic.BaseModel loaded (*)", "python_deps_models",
        r["show_vs_models_baseline"])
    row("memlens check, benchmark tree", "check")

    header = ("measurement", "best", "runs", "ratio", "target", "verdict")
    widths = [max(len(x[i]) for x in [header, *rows]) for i in range(6)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    check = t["check"]
    classic = t["classic"]
    origin = ("generated in " + _seconds(tree["seconds"])) if tree["generated"] else "reused"
    out = [
        f"Memory Lens benchmarks — scale {report['scale']:g}: {tree['dirs']:,} folders, "
        f"{tree['files']:,} files, {tree['memory_files']:,} {MEMORY_NAME}, "
        f"{tree['imports']:,} imports",
        f"tree: {tree['root']} ({origin})",
        f"python {report['python']} on {report['platform']}, {report['cpus']} CPU(s)",
        f"subprocesses use the bytecode cache PYTHONPYCACHEPREFIX={report['pycache_prefix']}",
        "",
        line(header),
        line(["-" * w for w in widths]),
        *(line(x) for x in rows),
        "",
        "classic, jit: ratio to the bare walk. show: ratio to python -c pass + dependency "
        f"imports = {_seconds(t['python_pass']['best_s'])} + {_seconds(r['deps_import_s'])} "
        f"= {_seconds(r['show_baseline_s'])}.",
        f"(*) python -c '{DEPS_IMPORT_MODELS}' (pydantic 2 imports lazily);",
        "    its ratio is show to that command, for information only.",
        f"classic loaded {classic['files_loaded']:,} files ({classic['project_chars']:,} chars, "
        f"{classic['dirs_scanned']:,} folders scanned).",
        f"check found {check['diagnostics']} (exit status {check['exit_status']}).",
    ]
    from .walks import render as render_walks

    out += render_walks(report.get("walks", {}), _seconds)
    from .lsp import render as render_lsp

    out += render_lsp(report["lsp"])
    from .editor import render as render_editor

    out += render_editor(report.get("editor", {}))
    out += ["", f"total bench time: {_seconds(report['total_s'])}"]
    out += [f"WARNING: {w}" for w in report["warnings"]]
    return "\n".join(out) + "\n"


def run(scale: float) -> dict[str, Any]:
    started = time.perf_counter()
    warnings: list[str] = []
    cache = cache_dir()
    _progress(f"generating (or reusing) the scale-{scale:g} tree under {cache}")
    stats: Stats = generate(cache / f"bench-{scale:g}", scale)
    tiny: Stats = generate(cache / f"bench-{TINY_SCALE:g}", TINY_SCALE)
    if stats.generated or tiny.generated:
        os.sync()  # let write-back finish before anything is timed
    root, n = stats.root, repeats(scale)
    bare_walk(root)  # warm the dentry and inode caches (untimed)
    timings: dict[str, Timing] = {}

    with tempfile.TemporaryDirectory(prefix="memlens-bench-home-") as home:
        # The user trusts both trees, as a Gemini CLI user would (a folder no rule matches is
        # untrusted and loads no project memory): every run below measures the full load.
        os.mkdir(os.path.join(home, ".gemini"))
        with open(os.path.join(home, ".gemini", "trustedFolders.json"), "w",
                  encoding="utf-8") as rules:
            json.dump({stats.root: "TRUST_FOLDER", tiny.root: "TRUST_FOLDER"}, rules)
        _progress("bare walk")
        timings["bare_walk"], counts = best_of("bare_walk", n, lambda: bare_walk(root))
        timings["bare_walk"].detail.update(dirs=counts[0], files=counts[1])
        if counts != (stats.dirs, stats.files):
            warnings.append(f"the walk saw {counts[0]:,} folders and {counts[1]:,} files, "
                            f"the generator wrote {stats.dirs:,} and {stats.files:,}")

        _progress("classic discovery")

        def classic() -> MemoryLoad:
            return MemoryEngine(classic_settings(home)).load_classic(root)

        timings["classic"], load = best_of("classic", n, classic)
        timings["classic"].detail.update(
            files_loaded=load.file_count, project_chars=len(load.memory.project),
            dirs_scanned=sum(s.scanned for s in load.searches), truncated=load.truncated)
        if load.file_count != stats.memory_files or load.truncated:
            warnings.append(f"classic discovery loaded {load.file_count} files "
                            f"(expected {stats.memory_files}), truncated={load.truncated}")

        def search_only() -> list[str]:
            engine = MemoryEngine(classic_settings(home))
            return engine.downward_search(root, MEMORY_NAME, None, None)[0]

        timings["classic_search"], found = best_of("classic_search", n, search_only)
        timings["classic_search"].detail.update(found=len(found))

        _progress("jit start-up")

        def jit() -> MemoryLoad:
            return MemoryEngine(jit_settings(home)).load_jit(root)

        timings["jit"], jit_load = best_of("jit", n, jit)
        timings["jit"].detail.update(files_loaded=jit_load.file_count,
                                     project_chars=len(jit_load.memory.project))

        _progress("memlens show start-up (subprocesses)")
        memlens = memlens_command()
        env = subprocess_env(cache / "pycache")
        timings["python_pass"], _ = time_command(
            "python_pass", [sys.executable, "-c", "pass"], SUBPROCESS_RUNS, env)
        timings["python_deps"], _ = time_command(
            "python_deps", [sys.executable, "-c", DEPS_IMPORT], SUBPROCESS_RUNS, env)
        timings["python_deps_models"], _ = time_command(
            "python_deps_models", [sys.executable, "-c", DEPS_IMPORT_MODELS], SUBPROCESS_RUNS,
            env)
        timings["show"], shown = time_command(
            "show", [*memlens, "show", tiny.root, "--home", home], SUBPROCESS_RUNS, env)
        timings["show"].detail.update(command=[*memlens, "show", tiny.root, "--home", home],
                                      stdout_bytes=len(shown.stdout))
        if shown.returncode != 0 or not shown.stdout:
            warnings.append(f"memlens show exited {shown.returncode}: "
                            f"{shown.stderr.decode(errors='replace').strip()[:300]}")

        _progress("memlens check on the big tree")
        check_runs = 1 if scale >= 0.25 else 3
        timings["check"], checked = time_command(
            "check", [*memlens, "check", root, "--home", home, "--format", "json"],
            check_runs, env, warmup=False)
        try:
            diagnostics = json.loads(checked.stdout)
            by_severity: dict[str, int] = {}
            for d in diagnostics:
                by_severity[d["severity"]] = by_severity.get(d["severity"], 0) + 1
            summary = ", ".join(f"{v} {k}" for k, v in sorted(by_severity.items()))
            timings["check"].detail.update(diagnostics=summary or "no diagnostics",
                                           by_severity=by_severity)
        except (ValueError, TypeError, KeyError):
            timings["check"].detail.update(diagnostics="unparsable output")
            warnings.append(f"memlens check exited {checked.returncode}: "
                            f"{checked.stderr.decode(errors='replace').strip()[:300]}")

        _progress("memlens check with every agent; classic discovery as a process")
        from .walks import run_walks

        walks_report = run_walks(root, home, env, memlens, check_runs)
        warnings += [f"memlens {name} failed in the walk benchmarks"
                     for name in walks_report["failed"]]

        _progress("language server (1,000 hovers and definitions)")
        from .lsp import run_lsp

        memory_bytes = sum(p.stat().st_size for p in Path(root).rglob(MEMORY_NAME))
        lsp_report = run_lsp(Path(root), home, env, memory_bytes, timings["bare_walk"].best)

    walk = timings["bare_walk"].best
    deps_import = max(timings["python_deps"].best - timings["python_pass"].best, 0.0)
    baseline = timings["python_pass"].best + deps_import
    ratios = {
        "classic_vs_walk": timings["classic"].best / walk,
        "classic_search_vs_walk": timings["classic_search"].best / walk,
        "jit_vs_walk": timings["jit"].best / walk,
        "deps_import_s": deps_import,
        "show_baseline_s": baseline,
        "show_vs_baseline": timings["show"].best / baseline,
        "show_vs_models_baseline": timings["show"].best / timings["python_deps_models"].best,
    }
    return {
        "scale": scale,
        "tree": stats.to_json(),
        "tiny_tree": tiny.to_json(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpus": os.cpu_count(),
        "pycache_prefix": str(cache / "pycache"),
        "timings": {k: v.to_json() for k, v in timings.items()},
        "ratios": {k: round(v, 4) for k, v in ratios.items()},
        "targets": {
            "classic_vs_walk": {"max": CLASSIC_TARGET,
                                "verdict": _verdict(ratios["classic_vs_walk"], CLASSIC_TARGET)},
            "show_vs_baseline": {"max": SHOW_TARGET,
                                 "verdict": _verdict(ratios["show_vs_baseline"], SHOW_TARGET)},
        },
        "lsp": lsp_report,
        "walks": walks_report,
        "warnings": warnings,
        "editor": load_editor(),
        "total_s": round(time.perf_counter() - started, 3),
    }


def main(scale: float = 1.0, as_json: bool = False) -> int:
    """Run every benchmark once; print the table (stderr too when `as_json`, whose JSON goes
    to stdout). Exit status 1 only when a sanity check failed, never because of a timing."""
    if not scale > 0:
        print("memlens bench: --scale must be positive", file=sys.stderr)
        return 2
    report = run(scale)
    table = render_table(report)
    if as_json:
        sys.stderr.write(table)
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        sys.stdout.write(table)
    return 1 if report["warnings"] else 0


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0, "--json" in sys.argv))
