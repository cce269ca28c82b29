"""Print what a real agent sent its model, as JSON (a Capture).

    python -m tests.conformance.capture gemini@0.61.0 WORKSPACE HOME [--cwd DIR] [--read PATH]
    python -m tests.conformance.capture claude@2.1.330 --scenario claude-rules-paths
    python -m tests.conformance.capture --regenerate [--agent gemini@0.61.0 ...] [--jobs N]

``--scenario`` runs one scenario of scenarios/ (its tree, cwd and read path); ``--regenerate``
re-captures every scenario's golden under captured/ (scripts/agents/capture-goldens.sh);
with ``--reextract`` it re-reads the requests the last runs left instead of running again.
The agents must be installed first: ``bash scripts/agents/install.sh``.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from pathlib import Path

from tests.conformance.agents import PINNED, is_installed, run_agent
from tests.conformance.scenarios import (
    all_scenarios,
    capture_scenario,
    reextract_scenario,
    run_many,
    scenario_by_id,
    write_golden,
)


def _split(spec: str) -> tuple[str, str]:
    name, _, version = spec.partition("@")
    if not version:
        versions = PINNED.get(name)
        if not versions:
            raise SystemExit(f"unknown agent {spec!r} (gemini, claude, codex)")
        version = versions[0]
    return name, version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.capture")
    parser.add_argument("agent", nargs="?", help="NAME@VERSION")
    parser.add_argument("workspace", nargs="?", type=Path)
    parser.add_argument("home", nargs="?", type=Path)
    parser.add_argument("--cwd", default=".", help="working folder, relative to WORKSPACE")
    parser.add_argument("--read", help="path the scripted tool call reads (rel. to WORKSPACE)")
    parser.add_argument("--scenario", help="run this scenario instead of WORKSPACE/HOME "
                        "(with --regenerate: a glob of the scenario ids to regenerate)")
    parser.add_argument("--regenerate", action="store_true", help="rewrite captured/ goldens")
    parser.add_argument("--only", action="append", default=[], help="with --regenerate: "
                        "NAME@VERSION to regenerate (repeatable; default all pinned)")
    parser.add_argument("--reextract", action="store_true", help="with --regenerate: extract "
                        "from the requests the last runs left in the scratch folders")
    parser.add_argument("--jobs", type=int, default=0, help="parallel runs (default: CPUs)")
    args = parser.parse_args(argv)

    if args.regenerate:
        targets = [_split(s) for s in args.only] or [
            (name, version) for name, versions in PINNED.items() for version in versions
        ]
        pairs = [
            (name, version, scenario)
            for name, version in targets
            for scenario in all_scenarios()
            if scenario.applies_to(name)
            and fnmatch.fnmatchcase(scenario.id, args.scenario or "*")
        ]
        missing = sorted({f"{n}@{v}" for n, v, _ in pairs if not is_installed(n, v)})
        if missing and not args.reextract:
            print(f"not installed: {', '.join(missing)} (bash scripts/agents/install.sh)",
                  file=sys.stderr)
            return 2
        started = time.monotonic()
        if args.reextract:
            captures = [reextract_scenario(n, v, s) for n, v, s in pairs]
        else:
            captures = run_many(pairs, jobs=args.jobs or None)
        for (name, version, scenario), capture in zip(pairs, captures, strict=True):
            write_golden(scenario, capture)
            if capture.notes:
                print(f"{name}@{version} {scenario.id}: {'; '.join(capture.notes)}",
                      file=sys.stderr)
        print(f"{len(pairs)} goldens written in {time.monotonic() - started:.0f} s",
              file=sys.stderr)
        return 0

    if not args.agent:
        parser.error("AGENT is required (or --regenerate)")
    name, version = _split(args.agent)
    if not is_installed(name, version):
        print(f"{name}@{version} is not installed (bash scripts/agents/install.sh)",
              file=sys.stderr)
        return 2
    if args.scenario:
        capture = capture_scenario(name, version, scenario_by_id(args.scenario))
    else:
        if args.workspace is None or args.home is None:
            parser.error("WORKSPACE and HOME are required without --scenario")
        capture = run_agent(name, version, args.workspace.resolve(), args.home.resolve(),
                            args.cwd, args.read)
    print(capture.model_dump_json(indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
