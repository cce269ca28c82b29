"""Skills the agent extracted wait in an inbox (never live) until the user accepts them.

Inbox: `HOME/.gemini/tmp/<project>/memory/skills-inbox/<name>/SKILL.md`; accepting validates
the skill (the four required sections, the Agent Skills rules) and moves it to
`HOME/.gemini/tmp/<project>/memory/skills/<name>/`, where extracted skills load from.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from memlens.agents.gemini.projects import project_temp_dir
from memlens.agents.gemini.skillcheck import check_duplicates, check_skill
from memlens.agents.gemini.skills import all_skill_files, load_skill_file, skill_files
from memlens.protocol.memory import Diagnostic


class InboxError(Exception):
    """An inbox operation that cannot be done; the message says why."""


@dataclass
class InboxSkill:
    name: str
    path: str
    description: str
    problems: list[Diagnostic]


def inbox_dir(home: str, workspace: str, *, claim: bool = False) -> str | None:
    temp = project_temp_dir(home, workspace, claim=claim)
    return None if temp is None else os.path.join(temp, "memory", "skills-inbox")


def accepted_dir(home: str, workspace: str) -> str:
    temp = project_temp_dir(home, workspace, claim=True)
    assert temp is not None
    return os.path.join(temp, "memory", "skills")


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return handle.read()


def list_inbox(home: str, workspace: str) -> list[InboxSkill]:
    folder = inbox_dir(home, workspace)
    if folder is None:
        return []
    found = []
    for path in skill_files(folder):
        skill = load_skill_file(path)
        name = skill.name if skill else os.path.basename(os.path.dirname(path))
        found.append(InboxSkill(name, path, skill.description if skill else "",
                                check_skill(path, _read(path), extracted=True)))
    return found


def _find(home: str, workspace: str, name: str) -> InboxSkill:
    for item in list_inbox(home, workspace):
        if item.name == name:
            return item
    raise InboxError(f"no skill named {name!r} in the inbox")


def accept(home: str, workspace: str, name: str) -> str:
    """Validate and move an inbox skill where extracted skills load; returns the new path."""
    item = _find(home, workspace, name)
    errors = [d for d in item.problems if d.severity == "error"]
    if errors:
        raise InboxError("cannot accept " + repr(name) + ": " + "; ".join(
            d.message for d in errors))
    source = os.path.dirname(item.path)
    if os.path.basename(source) == "skills-inbox":
        raise InboxError("an inbox skill must live in its own folder (<name>/SKILL.md)")
    target = os.path.join(accepted_dir(home, workspace), os.path.basename(source))
    if os.path.exists(target):
        raise InboxError(f"a skill folder already exists at {target}; reject one of them")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.move(source, target)
    return os.path.join(target, "SKILL.md")


def reject(home: str, workspace: str, name: str) -> None:
    item = _find(home, workspace, name)
    folder = os.path.dirname(item.path)
    if os.path.basename(folder) == "skills-inbox":
        os.unlink(item.path)
    else:
        shutil.rmtree(folder)


def skill_diagnostics(home: str, workspace: str, trusted: bool,
                      buffers: dict[str, str] | None = None) -> list[Diagnostic]:
    """Every problem of every SKILL.md Gemini CLI looks at, plus the inbox's (an editor's
    unsaved `buffers` win over the disk)."""
    out: list[Diagnostic] = []
    named: list[tuple[str, str, str]] = []
    for path, tier in all_skill_files(home, workspace, trusted):
        try:
            text = (buffers or {}).get(path) or _read(path)
        except OSError:
            continue
        out += check_skill(path, text)
        skill = load_skill_file(path)
        if skill is not None:
            named.append((skill.name, path, tier))
    out += check_duplicates(named)
    for item in list_inbox(home, workspace):
        out += item.problems
    return out
