"""Test cases (agent, version, scenario) and the known differences that make some of them
strict xfails.

``known_differences.yaml`` says, per ``agent@version`` and check, which scenarios show which
difference class; ``KNOWN_DIFFERENCES.md`` describes each class with a minimal tree. A case
listed there must fail (strict xfail): when the engine is fixed, the list shrinks.
"""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conformance.agents import PINNED, reference_version
from tests.conformance.scenarios import Scenario, all_scenarios

KNOWN = Path(__file__).with_name("known_differences.yaml")


@dataclass(frozen=True)
class Case:
    agent: str
    version: str
    scenario: Scenario

    @property
    def target(self) -> str:
        return f"{self.agent}@{self.version}"

    @property
    def reference(self) -> str:
        """The reference version this case is compared as (MEMLENS_AGENT_VERSIONS)."""
        return f"{self.agent}@{reference_version(self.agent, self.version)}"

    def __hash__(self) -> int:
        return hash((self.agent, self.version, self.scenario.id))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Case) and (
            (self.agent, self.version, self.scenario.id)
            == (other.agent, other.version, other.scenario.id)
        )


@functools.cache
def _known() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(KNOWN.read_text(encoding="utf-8")) or {}
    return data


def difference_class(case: Case, check: str) -> str | None:
    """The known difference classes of this case's check (``C2+C6``), if any."""
    listed = _known().get("cases", {}).get(case.reference, {}).get(check, {}) or {}
    found = [
        str(cls) for cls, patterns in listed.items()
        if any(fnmatch.fnmatchcase(case.scenario.id, p) for p in patterns)
    ]
    return "+".join(found) or None


def class_title(classes: str) -> str:
    titles = _known().get("classes", {})
    return "; ".join(str(titles.get(c, "(undescribed)")) for c in classes.split("+"))


def cases(agent: str, version: str | None = None, check: str | None = None) -> list[Any]:
    """pytest params for every scenario of ``agent`` (all pinned versions unless given);
    with ``check``, known differences become strict xfails."""
    params = []
    for v in [version] if version else PINNED.get(agent, ()):
        for scenario in all_scenarios():
            if not scenario.applies_to(agent):
                continue
            case = Case(agent, v, scenario)
            marks = []
            cls = difference_class(case, check) if check else None
            if cls:
                marks.append(pytest.mark.xfail(strict=True, reason=f"{cls}: {class_title(cls)}"))
            params.append(pytest.param(case, id=f"{case.target}:{scenario.id}", marks=marks))
    return params
