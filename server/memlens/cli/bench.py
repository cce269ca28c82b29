"""`memlens bench [--scale F] [--json]`: the benchmarks (docs/reference.md "Benchmarks"), from the
source checkout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from memlens.cli.common import Parser, UsageError


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    bench = commands.add_parser("bench", help=summary)
    bench.add_argument("--scale", type=float, default=1.0,
                       help="fraction of the full synthetic monorepo to generate")
    bench.add_argument("--json", action="store_true")


def run(args: argparse.Namespace) -> int:
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "bench" / "run.py").is_file() and str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    try:
        from bench.run import main as bench_main  # type: ignore[import-not-found,unused-ignore]
    except ImportError as err:
        raise UsageError("the benchmarks live in the source checkout: run it from the "
                         "project's root folder") from err
    return int(bench_main(scale=args.scale, as_json=args.json))
