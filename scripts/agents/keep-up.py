"""Keep up with the agents: verify the newest release of each and add it to the verified list.

    .venv/bin/python scripts/agents/keep-up.py                    # newest of every agent
    .venv/bin/python scripts/agents/keep-up.py claude@2.1.332 codex@0.171.0
    .venv/bin/python scripts/agents/keep-up.py --agent claude --cases 200 --summary out.md

For each agent: ask the npm registry (`npm view PACKAGE version`) for its newest release
(or take the one given); a release already in server/memlens/data/verified-agents.json is
skipped. Otherwise install it (scripts/agents/install.sh, cached by version), run the
conformance suite against it (`MEMLENS_AGENT_VERSIONS=AGENT@X`: every scenario, compared as the
reference release it follows: the same predictions, known differences and goldens) and, when
this checkout has it, the differential search (`python -m tests.conformance.differential`,
`--cases N` generated trees of a fixed seed, for the release and for its reference: the
release must differ from the prediction on exactly the trees the reference differs on, i.e.
send what the reference sends). All green: the release is added to the verified
list (data, not code: the newest profile of that agent, with today's date). Anything red: the
list is left alone, the scratch folders with the failing trees are kept (and the differential
search has appended its minimal trees to its regression scenarios), and the exit status is 1.

`--summary FILE` writes a Markdown summary (the scheduled workflow's pull request body).
Run from the repository root after scripts/bootstrap.sh.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "server" / "memlens" / "data" / "verified-agents.json"
PACKAGES = {"gemini": "@google/gemini-cli", "claude": "@anthropic-ai/claude-code",
            "codex": "@openai/codex", "copilot": "@github/copilot",
            "opencode": "opencode-ai", "pi": "@mariozechner/pi-coding-agent"}
# The conformance tests of each agent (test_goldens.py checks that it sends what the reference
# release sent); the differential search's name for it.
TESTS = {"gemini": ["test_gemini.py", "test_goldens.py"],
         "claude": ["test_claude.py", "test_goldens.py"],
         "codex": ["test_codex.py", "test_goldens.py"],
         "copilot": ["test_copilot.py", "test_goldens.py"],
         "opencode": ["test_opencode.py", "test_goldens.py"],
         "pi": ["test_pi.py", "test_goldens.py"]}
DIFFERENTIAL = {"gemini": "gemini61", "claude": "claude", "codex": "codex",
                "copilot": "copilot", "opencode": "opencode", "pi": "pi"}
DIFFERENTIAL_SEED = 20
PYTHON = Path(sys.executable)  # the interpreter running this script (.venv's, normally)


def say(message: str) -> None:
    print(f"keep-up: {message}", file=sys.stderr, flush=True)


def newest_release(agent: str) -> str:
    done = subprocess.run(["npm", "view", PACKAGES[agent], "version"], capture_output=True,
                          text=True, timeout=120, check=False)
    version = done.stdout.strip()
    if done.returncode != 0 or not re.fullmatch(r"\d+\.\d+\.\d+", version):
        raise SystemExit(f"keep-up: npm view {PACKAGES[agent]} version failed: "
                         f"{(done.stderr or done.stdout).strip()[-300:]}")
    return version


def load() -> dict[str, object]:
    data: dict[str, object] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def verified(data: dict[str, object], agent: str) -> list[str]:
    return [str(v["version"]) for p in data["profiles"] if p["agent"] == agent  # type: ignore
            for v in p["verified"]]


def add_release(data: dict[str, object], agent: str, version: str, date: str) -> None:
    """Add `version` to the newest profile of `agent` (the profiles are oldest first)."""
    profiles = [p for p in data["profiles"] if p["agent"] == agent]  # type: ignore
    profiles[-1]["verified"].append({"version": version, "date": date})


def write(data: dict[str, object]) -> None:
    """Atomically, in the file's own layout (one profile per line block, stable diffs)."""
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=DATA.parent, delete=False,
                                     prefix=".verified-agents.", suffix=".tmp") as handle:
        handle.write(text)
    os.chmod(handle.name, 0o644)  # a temporary file is private; package data is read by all
    os.replace(handle.name, DATA)


def run(argv: list[str], env: dict[str, str], log: Path) -> tuple[bool, float, str]:
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                              check=False)
    text = log.read_text(encoding="utf-8", errors="replace")
    return done.returncode == 0, time.monotonic() - started, text


def _differing(text: str) -> list[str]:
    """The `DIFF <tree>: <checks>` lines of a differential run's log, sorted."""
    return sorted(line for line in text.splitlines() if line.startswith("DIFF "))


def differential(agent: str, version: str, cases: int, jobs: int, env: dict[str, str],
                 logs: Path) -> tuple[bool, float, str]:
    """The differential search on `cases` trees of a fixed seed, for the release and for the
    reference release it follows. The release passes when it differs from the prediction on
    exactly the trees and checks the reference does (none, once the engine has caught up):
    it sends what the verified release sends. Otherwise it is run again with the minimiser,
    which appends each new kind of difference, minimised, to the regression scenarios."""
    name = DIFFERENTIAL[agent]
    common = ["-m", "tests.conformance.differential", "--seed", str(DIFFERENTIAL_SEED),
              "--cases", str(cases), "--jobs", str(jobs)]
    reference_env = {k: v for k, v in env.items() if k != "MEMLENS_AGENT_VERSIONS"}
    reference_env["MEMLENS_CONFORMANCE_SCRATCH"] = env["MEMLENS_CONFORMANCE_SCRATCH"] + "-ref"
    say(f"{agent}@{version}: differential search, {cases} trees of seed {DIFFERENTIAL_SEED}, "
        f"the release and its reference")
    _, first, text = run([str(PYTHON), *common, "--agent", f"{name}@{version}",
                          "--no-minimise"], env, logs / f"differential-{agent}-{version}.log")
    _, second, reference = run([str(PYTHON), *common, "--agent", name, "--no-minimise"],
                               reference_env, logs / f"differential-{agent}-reference.log")
    got, want = _differing(text), _differing(reference)
    failed = [line for line in text.splitlines() if line.startswith("FAIL")]
    seconds = first + second
    if got == want and not failed and "trees" in text:
        return True, seconds, (f"differential ({cases} trees): the same {len(got)} differing "
                               f"trees as the reference")
    say(f"{agent}@{version}: the release differs from its reference on "
        f"{len(set(got) ^ set(want))} trees; minimising")
    _, third, _ = run([str(PYTHON), *common, "--agent", f"{name}@{version}"], env,
                      logs / f"differential-{agent}-{version}-minimised.log")
    return False, seconds + third, (f"differential ({cases} trees): {len(got)} differ, the "
                                    f"reference {len(want)}; minimal trees appended to the "
                                    f"regression scenarios")


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/agents/keep-up.py")
    parser.add_argument("releases", nargs="*", metavar="AGENT@VERSION",
                        help="releases to verify (default: the newest of each --agent)")
    parser.add_argument("--agent", action="append", choices=sorted(PACKAGES),
                        help="agents whose newest release to verify (default: all three)")
    parser.add_argument("--cases", type=int, default=50,
                        help="generated trees for the differential search (default 50)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel agent runs (default 2)")
    parser.add_argument("--summary", type=Path, help="write a Markdown summary here")
    parser.add_argument("--dry-run", action="store_true",
                        help="verify, but do not change the verified list")
    parser.add_argument("--recheck", action="store_true",
                        help="verify releases the list already holds too (it is not changed)")
    args = parser.parse_args()

    if args.releases:
        wanted = []
        for item in args.releases:
            agent, _, version = item.partition("@")
            if agent not in PACKAGES or not re.fullmatch(r"\d+\.\d+\.\d+", version):
                parser.error("expected AGENT@X.Y.Z (gemini, claude, codex, copilot, opencode, "
                             f"pi), got {item!r}")
            wanted.append((agent, version))
    else:
        wanted = [(a, newest_release(a)) for a in (args.agent or list(PACKAGES))]

    data = load()
    today = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    logs = ROOT / ".keep-up"
    logs.mkdir(exist_ok=True)
    rows: list[str] = []
    failed = False
    for agent, version in wanted:
        target = f"{agent}@{version}"
        listed = version in verified(data, agent)
        if listed and not args.recheck:
            say(f"{target} is already verified")
            rows.append(f"| {target} | already verified | |")
            continue
        say(f"installing {target}")
        install = subprocess.run(["bash", "scripts/agents/install.sh", target], cwd=ROOT,
                                 capture_output=True, text=True, check=False)
        if install.returncode != 0:
            say(f"{target}: install failed\n{install.stderr[-2000:]}")
            rows.append(f"| {target} | install failed | |")
            failed = True
            continue
        scratch = f"/tmp/memlens-keep-up/{agent}-{version}"
        env = {**os.environ, "MEMLENS_AGENT_VERSIONS": target,
               "MEMLENS_CONFORMANCE_SCRATCH": scratch,
               "MEMLENS_CONFORMANCE_JOBS": str(args.jobs)}
        say(f"{target}: conformance suite (scratch {scratch})")
        tests = [f"tests/conformance/{t}" for t in TESTS[agent]]
        ok, seconds, text = run([str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                 "-m", "conformance", *tests], env,
                                logs / f"conformance-{agent}-{version}.log")
        tail = [line for line in text.splitlines() if line.strip()][-1:] or ["no output"]
        say(f"{target}: conformance {'passed' if ok else 'FAILED'} in {seconds:.0f} s: "
            f"{tail[0]}")
        found = f"conformance: {tail[0]}"
        if ok and (ROOT / "tests" / "conformance" / "differential").is_dir():
            ok, more, note = differential(agent, version, args.cases, args.jobs, env, logs)
            seconds += more
            found += f"; {note}"
        elif ok:
            found += "; differential search: not in this checkout"
        if ok:
            if not args.dry_run and not listed:
                add_release(data, agent, version, today)
                write(data)
            say(f"{target}: verified" + (" (list unchanged)" if args.dry_run or listed else
                                         f", added to {DATA.relative_to(ROOT)}"))
            rows.append(f"| {target} | verified {today} | {found} ({seconds:.0f} s) |")
        else:
            failed = True
            say(f"{target}: NOT verified; the failing trees are kept under {scratch}, the logs "
                f"under {logs.relative_to(ROOT)}/")
            rows.append(f"| {target} | **differs** (kept: {scratch}) | {found} |")
    summary = ("| release | result | checks |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    print(summary)
    if args.summary:
        args.summary.write_text("Keep up with the agents (scripts/agents/keep-up.py)\n\n"
                                + summary, encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
