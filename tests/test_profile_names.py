"""A profile name means its release: every `agent@VERSION` our tables and docs write (README,
docs/reference.md, agent_versions.py, the verified list), short and long, resolves to the
release it names, and the behaviour that depends on the release follows it (Codex 0.169.0's
skills budget for `codex@0.169`, not 0.171.0's)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memlens.agent_versions import profile_for, verified_releases

from .conftest import build_tree
from .test_cli import memlens

REPO = Path(__file__).resolve().parents[1]
_NAME = re.compile(r"\b(gemini|claude|codex|copilot)@(\d+\.\d+(?:\.\d+)?\+?)")


def _written_names() -> set[tuple[str, str]]:
    texts = [REPO / "README.md", REPO / "docs" / "reference.md",
             REPO / "server" / "memlens" / "agent_versions.py"]
    found = {m.groups() for path in texts for m in _NAME.finditer(path.read_text("utf-8"))}
    found |= {(agent, profile) for agent, profile, _, _ in verified_releases()}
    found |= {(agent, version) for agent, _, version, _ in verified_releases()}
    return {(agent, version) for agent, version in found}


def _expected(agent: str, name: str) -> str | None:
    """The newest verified release the name covers: itself when it is one, its `X.Y.z` for a
    line, from X.Y on for `X.Y+`; None when none is verified (the agent's newest applies)."""
    releases = [v for a, _, v, _ in verified_releases() if a == agent]
    if name.count(".") == 2:
        return name.removesuffix("+")
    if name.endswith("+"):
        low = tuple(int(n) for n in name[:-1].split("."))
        covered = [v for v in releases if tuple(int(n) for n in v.split("."))[:2] >= low]
    else:
        covered = [v for v in releases if v.startswith(name + ".")]
    return max(covered, key=lambda v: tuple(int(n) for n in v.split("."))) if covered else None


def test_the_docs_name_profiles() -> None:
    names = _written_names()
    assert {("codex", "0.169"), ("claude", "2.1"), ("gemini", "0.44+"), ("gemini", "0.43"),
            ("copilot", "1.0")} <= names


@pytest.mark.parametrize(("agent", "name"), sorted(_written_names()))
def test_every_written_name_resolves_to_its_release(agent: str, name: str) -> None:
    got = profile_for(agent, name)
    assert got.release == (_expected(agent, name) or (name if "." in name and
                                                      not name.endswith("+") else None))


@pytest.mark.parametrize(("spec", "release"), [
    ("codex@0.169", "0.169.0"), ("codex@0.169.0", "0.169.0"), ("codex@0.171", "0.171.0"),
    ("codex@0.171.0", "0.171.0"), ("claude@2.1", "2.1.332"), ("claude@2.1.330", "2.1.330"),
    ("claude@2.1.332", "2.1.332"), ("gemini@0.43", "0.43.0"), ("gemini@0.44+", "0.61.0"),
    ("gemini@0.61", "0.61.0"), ("copilot@1.0", "1.0.102"), ("codex@0.170.0", "0.170.0"),
    ("codex", None)])
def test_names_and_their_releases(spec: str, release: str | None) -> None:
    agent, _, version = spec.partition("@")
    assert profile_for(agent, version or None).release == release


def _codex_skills(root: Path, pin: str) -> dict[str, object]:
    run = memlens("skills", "list", "--json", "--trusted", "--home", str(root / "home"),
                  "--agent", pin, cwd=root / "proj", home=root / "home")
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert isinstance(data, dict)
    return data


def test_codex_at_its_line_lists_skills_as_that_release(root: Path) -> None:
    """30 descriptions of 1,000 bytes: past 0.169.0's budget (2% of 272,000 tokens), within
    0.171.0's (of 500,000)."""
    build_tree(root, {"proj/.git": None, "home/.keep": "", **{
        f"proj/.agents/skills/s{i:02d}/SKILL.md":
            f"---\nname: s{i:02d}\ndescription: {'d' * 1000}\n---\n" for i in range(30)}})
    short, long, newer = (_codex_skills(root, pin)
                          for pin in ("codex@0.169", "codex@0.169.0", "codex@0.171"))
    assert short["listing"] == long["listing"]
    assert short["listing"] != newer["listing"]
    assert len(str(short["listing"])) < len(str(newer["listing"]))
