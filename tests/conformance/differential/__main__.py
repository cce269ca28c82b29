"""Long differential runs outside pytest:

    python -m tests.conformance.differential --agent claude[@VERSION] --seed S --cases N
        [--start K] [--jobs J] [--no-minimise] [--json FILE]

Each differing tree is reported; the first of each kind is minimised and appended to the
agent's regression file (core.py). Exit 1 when any tree differed."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from tests.conformance.differential import core


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.differential",
                                     description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--agent", required=True,
                        help=f"one of {', '.join(core.available_agents())}, optionally @VERSION")
    parser.add_argument("--seed", type=int, default=None, help="default: the agent's CI seed")
    parser.add_argument("--cases", type=int, default=None, help="default: the agent's CI count")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--jobs", type=int,
                        default=int(os.environ.get("MEMLENS_CONFORMANCE_JOBS", 0)) or 2)
    parser.add_argument("--chunk", type=int, default=50)
    parser.add_argument("--no-minimise", action="store_true")
    parser.add_argument("--minimise-budget", type=float, default=240.0,
                        help="seconds per minimised tree")
    parser.add_argument("--json", metavar="FILE", help="write the summary here")
    args = parser.parse_args(argv)
    spec = core.load_spec(args.agent)
    summary = core.run(
        spec, spec.ci_seed if args.seed is None else args.seed,
        spec.ci_cases if args.cases is None else args.cases, args.start, args.jobs,
        not args.no_minimise, args.chunk, args.minimise_budget,
        log=lambda line: print(line, flush=True))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(core.summary_line(summary))
    return 1 if summary["differ"] or summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
