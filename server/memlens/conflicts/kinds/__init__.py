"""Every decision kind (one module each; docs/reference.md "Rules that disagree")."""

from __future__ import annotations

from memlens.conflicts.base import DecisionKind
from memlens.conflicts.kinds.build_command import BuildCommand
from memlens.conflicts.kinds.do_dont import DoOrNever
from memlens.conflicts.kinds.format_command import FormatCommand
from memlens.conflicts.kinds.indentation import Indentation
from memlens.conflicts.kinds.line_length import LineLength
from memlens.conflicts.kinds.lint_command import LintCommand
from memlens.conflicts.kinds.package_manager import PackageManager
from memlens.conflicts.kinds.runtime_version import RuntimeVersion
from memlens.conflicts.kinds.tests_command import TestCommand

KINDS: tuple[DecisionKind, ...] = (
    PackageManager(), TestCommand(), BuildCommand(), LintCommand(), FormatCommand(),
    Indentation(), LineLength(), RuntimeVersion(), DoOrNever(),
)


def kind_by_id(kind_id: str) -> DecisionKind:
    return next(k for k in KINDS if k.id == kind_id)
