"""`memlens schema [MODEL]`: the JSON schema of every `--json` output."""

from __future__ import annotations

import argparse
from typing import Any

from memlens.cli.common import Parser, UsageError, print_json


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    schema = commands.add_parser("schema", help=summary)
    schema.add_argument("name", nargs="?", metavar="MODEL")


def run(args: argparse.Namespace) -> int:
    from pydantic import TypeAdapter

    from memlens.model import MemorySettings
    from memlens.protocol.conflicts import ConflictsResult
    from memlens.protocol.context_diff import DiffResult
    from memlens.protocol.matrix import MatrixResult
    from memlens.protocol.memory import (
        AgentJitEntry,
        AgentListResult,
        AgentShowResult,
        Diagnostic,
        JitEntry,
        ListResult,
        ShowResult,
    )
    from memlens.protocol.summary import FolderSummary

    models: dict[str, Any] = {
        "ShowResult": ShowResult, "ListResult": ListResult, "JitResult": list[JitEntry],
        "AgentShowResult": AgentShowResult, "AgentListResult": AgentListResult,
        "AgentJitResult": list[AgentJitEntry],
        "CheckResult": list[Diagnostic], "Diagnostic": Diagnostic,
        "MemorySettings": MemorySettings, "DiffResult": DiffResult,
        "MatrixResult": MatrixResult, "FolderSummary": FolderSummary,
        "ConflictsResult": ConflictsResult,
    }
    if args.name is not None and args.name not in models:
        raise UsageError(f"unknown model {args.name!r}; choose from {', '.join(models)}")
    chosen = {args.name: models[args.name]} if args.name else models
    print_json({name: TypeAdapter(kind).json_schema(by_alias=True)
                for name, kind in chosen.items()})
    return 0
