"""The differential fuzzer's machinery: Gemini CLI 0.43.0's own memory loader, driven from its
npm bundle (gemini043_loader.mjs), against ``memlens show --json`` / ``memlens jit --json`` on
the same tree, and a minimiser that shrinks a tree that differs to a kept regression case.

test_loader.py runs it under pytest (``--cases N``, ``--fuzz-seed S``); a long hunt outside
pytest, in chunks, with each difference minimised into scenarios/regressions.yaml:

    python -m tests.conformance.fuzz --seed 7 --cases 1000 [--start 0] [--jobs 2]

What a difference is (``differences``): the mode, the flattened memory (/memory show), the
session memory (the first user message's), the file paths and count, and the JIT appendix
after the read. Where Gemini CLI fails at start (a missing include directory), memlens must
show an error diagnostic that names the folder (it still previews the rest).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.conformance.agents import SCRATCH_ROOT, cache_root, prepare_home
from tests.conformance.sandbox import REPO
from tests.conformance.scenarios import HERE, Scenario, build_tree, substitute

LOADER = Path(__file__).with_name("gemini043_loader.mjs")
VERSION = "0.43.0"
REGRESSIONS = HERE / "regressions.yaml"
CI_SEED = 1000
CI_CASES = 200


def bundle() -> Path:
    return cache_root() / f"gemini-{VERSION}" / "node_modules" / "@google" / "gemini-cli" / "bundle"


@dataclass(frozen=True)
class Tree:
    """One scenario built at ``base``/<id> (``ws/`` and ``home/`` side by side)."""

    scenario: Scenario
    base: Path = SCRATCH_ROOT / f"loader-{VERSION}"

    @property
    def root(self) -> Path:
        return self.base / self.scenario.id

    @property
    def workspace(self) -> Path:
        return self.root / "ws"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def cwd(self) -> Path:
        return Path(os.path.normpath(self.workspace / self.scenario.cwd))

    @property
    def read(self) -> str | None:
        if not self.scenario.read:
            return None
        return os.path.normpath(self.workspace / self.scenario.read)

    def build(self) -> None:
        if self.root.exists():
            shutil.rmtree(self.root)
        build_tree(self.workspace, substitute(self.scenario.tree, self.workspace, self.home))
        build_tree(self.home, substitute(self.scenario.home, self.workspace, self.home))
        _prepare_home(self.home)
        self.cwd.mkdir(parents=True, exist_ok=True)

    def request(self) -> str:
        return json.dumps({"cwd": str(self.cwd), "home": str(self.home),
                           "jit": [self.read] if self.read else [],
                           "trustEnv": not self.scenario.folder_trust}) + "\n"


def _prepare_home(home: Path) -> None:
    """prepare_home (Gemini CLI's offline settings), keeping a settings file's comment lines
    (the fuzzer writes JSONC, as users do)."""
    settings = home / ".gemini" / "settings.json"
    text = settings.read_text(encoding="utf-8") if settings.is_file() else ""
    comments = [line for line in text.splitlines(keepends=True) if line.lstrip().startswith("//")]
    parsed = _json_of(text) if text else {}
    if not isinstance(parsed, dict):
        return  # not JSON: Gemini CLI reports it; nothing to add to
    if comments:
        settings.write_text(json.dumps(parsed), encoding="utf-8")
    prepare_home("gemini", home)
    if comments:
        settings.write_text("".join(comments) + settings.read_text(encoding="utf-8"),
                            encoding="utf-8")


def _loader_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TZ": "UTC",
            "LANG": "C.UTF-8", "GEMINI_CLI_TRUST_WORKSPACE": "true"}


def run_loader(trees: list[Tree]) -> list[dict[str, Any]]:
    """One loader process answers every tree (its --serve mode is a fresh process per line)."""
    if not trees:
        return []
    done = subprocess.run(
        ["node", str(LOADER), "--bundle", str(bundle()), "--serve"],
        input="".join(t.request() for t in trees), env=_loader_env(trees[0].home),
        capture_output=True, text=True, timeout=600 + 2 * len(trees), check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or len(answers) != len(trees):
        raise RuntimeError(f"loader exited {done.returncode}: {done.stderr[-3000:]}")
    return answers


class Loader:
    """A long-lived loader process, one request at a time (the minimiser's)."""

    def __init__(self, home: Path) -> None:
        self._lock = threading.Lock()
        self._proc = subprocess.Popen(
            ["node", str(LOADER), "--bundle", str(bundle()), "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=_loader_env(home), text=True,
        )

    def ask(self, tree: Tree) -> dict[str, Any]:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        with self._lock:
            self._proc.stdin.write(tree.request())
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the loader process ended")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()


def _memlens(args: list[str], tree: Tree) -> Any:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_HOME",
                        "GEMINI_CLI_TRUSTED_FOLDERS_PATH")}
    env["HOME"] = str(tree.home)  # settings values may say $HOME, as Gemini CLI's do
    env["MEMLENS_AGENTS"] = "gemini@0.43"  # the profile of the loader it is compared with
    # MEMLENS_FUZZ_SERVER: another engine's source (an older commit's server/, to minimise
    # the trees it got wrong into regression cases).
    server = os.environ.get("MEMLENS_FUZZ_SERVER") or str(REPO / "server")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (server, env.get("PYTHONPATH", "")) if p)
    done = subprocess.run([sys.executable, "-m", "memlens", *args], cwd=str(tree.cwd), env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise RuntimeError(f"memlens {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return json.loads(done.stdout)


class Worker:
    """One long-lived ``python -m tests.conformance.fuzz --worker`` running memlens's command
    line (``memlens.cli.main``) per request, in the tree's folder with HOME set as for a
    process of its own: the same answers without a Python start-up per call (long runs)."""

    def __init__(self) -> None:
        env = dict(os.environ)
        env["MEMLENS_AGENTS"] = "gemini@0.43"  # the profile of the loader it is compared with
        server = os.environ.get("MEMLENS_FUZZ_SERVER") or str(REPO / "server")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (server, str(REPO)) if p)
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "tests.conformance.fuzz", "--worker"], env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def __call__(self, args: list[str], tree: Tree) -> Any:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps({"args": args, "cwd": str(tree.cwd),
                                           "home": str(tree.home)}) + "\n")
        self._proc.stdin.flush()
        answer = json.loads(self._proc.stdout.readline())
        if answer["code"] not in (0, 1) or not answer["stdout"].strip():
            raise RuntimeError(f"memlens {' '.join(args)} exited {answer['code']}")
        return json.loads(answer["stdout"])

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=30)


def _serve_worker() -> int:
    """The worker's side: one JSON request a line, one JSON answer a line."""
    import contextlib
    import io

    from memlens.cli import main as memlens_main

    for name in ("GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_HOME",
                 "GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        os.environ.pop(name, None)
    for line in sys.stdin:
        request = json.loads(line)
        os.environ["HOME"] = request["home"]
        os.chdir(request["cwd"])
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                code = memlens_main(request["args"])
            except Exception:  # reported as a failed call
                code = 99
        sys.stdout.write(json.dumps({"code": code, "stdout": out.getvalue()}) + "\n")
        sys.stdout.flush()
    return 0


def predict(tree: Tree, call: Callable[[list[str], Tree], Any] = _memlens) -> dict[str, Any]:
    common = ["--home", str(tree.home)]
    if not tree.scenario.folder_trust:
        common.append("--trusted")
    show = call(["show", "--json", *common, str(tree.cwd)], tree)
    jit = None
    if tree.read:
        jit = call(["jit", "--json", *common, "--cwd", str(tree.cwd), tree.read],
                   tree)[0]["context"]
    return {"show": show, "jit": jit}


_START_ERROR = re.compile(r"^Error: (Directory does not exist|Path is not a directory): (.*)$",
                          re.MULTILINE)


def differences(scenario: Scenario, real: dict[str, Any], predicted: dict[str, Any]) -> list[str]:
    """What differs, by field ([] when memlens predicts the loader)."""
    if "error" in real:
        failed = _START_ERROR.search(real["error"])
        if failed is None:
            return [f"loader-error: {real['error'].splitlines()[0]}"]
        named = [d for d in predicted["show"]["diagnostics"]
                 if d["severity"] == "error" and d["code"] == "settings-include-not-found"
                 and failed[2] in d["message"]]
        return [] if named else [f"start-failure: {failed[0]}"]
    show = predicted["show"]
    out = []
    for mine, theirs in (("mode", "mode"), ("content", "flattened"),
                         ("sessionMemory", "sessionMemory"), ("files", "filePaths"),
                         ("fileCount", "fileCount")):
        if show[mine] != real[theirs]:
            out.append(mine)
    if scenario.read and predicted["jit"] != real["jit"][0]["context"]:
        out.append("jit")
    return out


def check(tree: Tree, answer: dict[str, Any]) -> list[str]:
    return differences(tree.scenario, answer, predict(tree))


# --------------------------------------------------------------------------- minimiser


def _without_key(data: Any, path: tuple[str, ...]) -> Any:
    if len(path) == 1:
        return {k: v for k, v in data.items() if k != path[0]}
    return {k: (_without_key(v, path[1:]) if k == path[0] else v) for k, v in data.items()}


def _key_paths(data: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    if isinstance(data, dict):
        for key, value in data.items():
            out.append((*prefix, key))
            out += _key_paths(value, (*prefix, key))
    return out


def _json_of(text: str) -> Any:
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    try:
        return json.loads(body)
    except ValueError:
        return None


def _candidates(scenario: Scenario) -> Iterable[Scenario]:
    """Smaller variants of ``scenario``, biggest cuts first."""
    data = scenario.model_dump()
    for side in ("tree", "home"):
        for rel in list(data[side]):
            yield scenario.model_copy(update={side: {k: v for k, v in data[side].items()
                                                     if k != rel}})
    if scenario.read:
        yield scenario.model_copy(update={"read": None})
    if scenario.cwd != ".":
        yield scenario.model_copy(update={"cwd": "."})
    if scenario.folder_trust:
        yield scenario.model_copy(update={"folder_trust": False})
    for side in ("tree", "home"):
        for rel, value in data[side].items():
            if not isinstance(value, str):
                continue
            parsed = _json_of(value) if rel.endswith(".json") else None
            if isinstance(parsed, dict):
                for path in sorted(_key_paths(parsed), key=len):
                    smaller = json.dumps(_without_key(parsed, path), ensure_ascii=False)
                    yield scenario.model_copy(update={side: {**data[side], rel: smaller}})
                continue
            lines = value.splitlines(keepends=True)
            for i in range(len(lines)):
                text = "".join(lines[:i] + lines[i + 1:])
                yield scenario.model_copy(update={side: {**data[side], rel: text}})
            if value and value != "x\n":
                yield scenario.model_copy(update={side: {**data[side], rel: "x\n"}})


def minimise(scenario: Scenario, still_differs: Callable[[Scenario], bool],
             budget_seconds: float = 300.0) -> Scenario:
    """Greedy delta debugging: keep any one-step cut after which the tree still differs, until
    no cut does (or the time budget is spent)."""
    best = scenario
    deadline = time.monotonic() + budget_seconds
    improved = True
    while improved and time.monotonic() < deadline:
        improved = False
        for candidate in _candidates(best):
            if time.monotonic() > deadline:
                break
            if still_differs(candidate):
                best = candidate
                improved = True
                break
    return best


class Minimiser:
    """Re-runs both sides on each candidate, each at a fresh path (the loader caches real
    paths and settings by folder)."""

    def __init__(self, base: Path | None = None) -> None:
        self.base = base or SCRATCH_ROOT / f"minimise-{VERSION}-{os.getpid()}"
        self._count = 0
        self._loader: Loader | None = None

    def differs(self, scenario: Scenario, want: list[str]) -> bool:
        self._count += 1
        tree = Tree(scenario.model_copy(update={"id": f"m{self._count}"}), self.base)
        tree.build()
        if self._loader is None:
            self._loader = Loader(tree.home)
        try:
            found = check(tree, self._loader.ask(tree))
        except RuntimeError:
            return False
        finally:
            shutil.rmtree(tree.root, ignore_errors=True)
        return bool(found) and _kind(found) == _kind(want)

    def shrink(self, scenario: Scenario, found: list[str], budget_seconds: float = 300.0
               ) -> Scenario:
        return minimise(scenario, lambda s: self.differs(s, found), budget_seconds)

    def close(self) -> None:
        if self._loader is not None:
            self._loader.close()
        shutil.rmtree(self.base, ignore_errors=True)


def _kind(found: list[str]) -> str:
    """Differences of one kind: the same fields (start failures and loader errors by type)."""
    return ",".join(sorted(f.split(":")[0] for f in found))


def keep(scenario: Scenario, found: list[str], path: Path = REGRESSIONS) -> Scenario:
    """Append the minimised case to the regression file (once per id)."""
    kept = scenario.model_copy(update={
        "id": f"regression-{scenario.id.removeprefix('fuzz-')}",
        "agents": ["gemini-loader"], "generated": False,
        "about": f"minimised by the loader fuzzer from {scenario.id}: differed in "
                 f"{_kind(found).replace(',', ', ')}",
    })
    existing = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    if any(item.get("id") == kept.id for item in existing or []):
        return kept
    item = kept.model_dump(exclude_defaults=True, exclude={"generated"})
    item = {"id": item.pop("id"), **item}
    with path.open("a", encoding="utf-8") as out:
        out.write("\n" + yaml.safe_dump([item], allow_unicode=True, sort_keys=False,
                                         default_flow_style=False, width=100))
    return kept


# --------------------------------------------------------------------------- a long run


_WORKERS = threading.local()
_ALL_WORKERS: list[Worker] = []


def _worker() -> Worker:
    """This thread's memlens worker."""
    worker = getattr(_WORKERS, "worker", None)
    if worker is None:
        worker = _WORKERS.worker = Worker()
        _ALL_WORKERS.append(worker)
    return worker


def run(seed: int, cases: int, start: int = 0, jobs: int = 2, minimise_found: bool = True,
        chunk: int = 100, log: Callable[[str], None] = print) -> dict[str, Any]:
    from tests.conformance.scenarios.generator import fuzz_gemini

    started = time.monotonic()
    found: dict[str, list[str]] = {}
    kinds: set[str] = set()
    base = SCRATCH_ROOT / f"fuzz-{VERSION}-{seed}-{os.getpid()}"
    minimiser = Minimiser() if minimise_found else None
    try:
        for first in range(start, start + cases, chunk):
            count = min(chunk, start + cases - first)
            trees = [Tree(s, base) for s in fuzz_gemini(seed, count, first)]
            for tree in trees:
                tree.build()
            with ThreadPoolExecutor(max_workers=jobs + 1) as pool:
                loading = pool.submit(run_loader, trees)  # the loader runs beside memlens
                predictions = list(pool.map(lambda t: predict(t, _worker()), trees))
                answers = loading.result()
            for tree, answer, predicted in zip(trees, answers, predictions, strict=True):
                diff = differences(tree.scenario, answer, predicted)
                if not diff:
                    continue
                found[tree.scenario.id] = diff
                log(f"DIFF {tree.scenario.id}: {diff}")
                if minimiser is not None and _kind(diff) not in kinds:
                    kinds.add(_kind(diff))  # one minimised case per kind of difference a run
                    small = minimiser.shrink(tree.scenario, diff, 90.0)
                    kept = keep(small, diff)
                    log(f"  kept as {kept.id} ({len(small.tree)} + {len(small.home)} entries)")
            shutil.rmtree(base, ignore_errors=True)
            log(f"seed {seed}: {first + count - start}/{cases} trees, {len(found)} differ, "
                f"{time.monotonic() - started:.0f} s")
    finally:
        if minimiser is not None:
            minimiser.close()
        for worker in _ALL_WORKERS:
            worker.close()
        shutil.rmtree(base, ignore_errors=True)
    return {"seed": seed, "cases": cases, "start": start, "differ": found,
            "seconds": round(time.monotonic() - started, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.fuzz",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=CI_SEED)
    parser.add_argument("--cases", type=int, default=CI_CASES)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--jobs", type=int,
                        default=int(os.environ.get("MEMLENS_CONFORMANCE_JOBS", 0)) or 2)
    parser.add_argument("--no-minimise", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="write the summary here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _serve_worker()
    summary = run(args.seed, args.cases, args.start, args.jobs, not args.no_minimise,
                  log=lambda line: print(line, flush=True))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in summary.items() if k != "differ"}
                     | {"differ": len(summary["differ"])}))
    return 1 if summary["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
