"""Loading `SKILL.md` files as Gemini CLI's skillLoader does (frontmatter, fallback parser)."""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from memlens.files.nodecompat import js_sorted, js_trim
from memlens.text.frontmatter import FRONTMATTER, yaml_mapping

_UNSAFE_NAME = re.compile(r'[:\\/<>*?"|]')


@dataclass
class Skill:
    name: str
    description: str
    location: str
    body: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "location": self.location, "body": self.body}


def _fallback(frontmatter: str) -> tuple[str, str] | None:
    """Gemini CLI's line parser for frontmatter js-yaml rejects (e.g. an unquoted colon)."""
    lines = re.split(r"\r?\n", frontmatter)
    name: str | None = None
    description: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        name_match = re.match(r"^\s*name:\s*(.*)$", line)
        desc_match = re.match(r"^\s*description:\s*(.*)$", line)
        if name_match:
            name = js_trim(name_match.group(1))
        elif desc_match:
            parts = [js_trim(desc_match.group(1))]
            while i + 1 < len(lines) and re.match(r"^[ \t]+\S", lines[i + 1]) and not re.match(
                    r"^\s*[A-Za-z_-]+:", lines[i + 1]):
                i += 1
                parts.append(js_trim(lines[i]))
            description = " ".join(p for p in parts if p)
        i += 1
    if name is None or description is None:
        return None
    return name, description


def parse_frontmatter(frontmatter: str) -> tuple[str, str] | None:
    data = yaml_mapping(frontmatter)
    if data is not None and isinstance(name := data.get("name"), str) and isinstance(
            description := data.get("description"), str):
        return name, description
    return _fallback(frontmatter)


def load_skill_file(path: str) -> Skill | None:
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            text = handle.read()
    except OSError:
        return None
    match = FRONTMATTER.match(text)
    if not match:
        return None
    parsed = parse_frontmatter(match.group(1))
    if parsed is None:
        return None
    name, description = parsed
    body = js_trim(match.group(2) or "")
    return Skill(_UNSAFE_NAME.sub("-", name), description, path, body)


def load_skills_from_dir(directory: str) -> list[Skill]:
    skills = []
    for path in skill_files(directory):
        skill = load_skill_file(path)
        if skill is not None:
            skills.append(skill)
    return skills


def skill_roots(home: str, workspace: str, trusted: bool) -> list[tuple[str, str]]:
    """(tier, folder) from lowest to highest precedence, as Gemini CLI loads them, with the
    skills accepted from the inbox (the project's private memory) after the user's own."""
    roots = [("user", os.path.join(home, ".gemini", "skills")),
             ("user-agents", os.path.join(home, ".agents", "skills"))]
    extracted = extracted_skills_dir(home, workspace)
    if extracted is not None:
        roots.append(("extracted", extracted))
    if trusted:
        roots += [("workspace", os.path.join(workspace, ".gemini", "skills")),
                  ("workspace-agents", os.path.join(workspace, ".agents", "skills"))]
    return roots


def extracted_skills_dir(home: str, workspace: str) -> str | None:
    from memlens.agents.gemini.projects import project_temp_dir

    temp = project_temp_dir(home, workspace)
    return None if temp is None else os.path.join(temp, "memory", "skills")


def skill_files(folder: str) -> list[str]:
    """`SKILL.md` and `*/SKILL.md` in a skills folder (what Gemini CLI's glob finds)."""
    if not os.path.isdir(folder):
        return []
    candidates = [posixpath.join(folder, "SKILL.md")]
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    candidates += [posixpath.join(folder, n, "SKILL.md") for n in names
                   if n not in ("node_modules", ".git")]
    return js_sorted([c for c in candidates if os.path.isfile(c)])


def all_skill_files(home: str, workspace: str, trusted: bool) -> list[tuple[str, str]]:
    """(path, tier) of every SKILL.md Gemini CLI looks at, lowest precedence first."""
    return [(path, tier) for tier, folder in skill_roots(home, workspace, trusted)
            for path in skill_files(folder)]


def discover_skills(home: str, workspace: str, trusted: bool) -> list[tuple[Skill, str]]:
    """Skills after precedence (a later tier overrides the same name): (skill, tier)."""
    chosen: dict[str, tuple[Skill, str]] = {}
    for path, tier in all_skill_files(home, workspace, trusted):
        skill = load_skill_file(path)
        if skill is not None:
            chosen[skill.name] = (skill, tier)
    return list(chosen.values())


def render_available_skills(skills: list[Skill]) -> str:
    """Gemini CLI's `renderAgentSkills` block ('' without skills)."""
    if not skills:
        return ""
    xml = "\n".join(
        f"  <skill>\n    <name>{s.name}</name>\n    <description>{s.description}</description>\n"
        f"    <location>{s.location}</location>\n  </skill>" for s in skills)
    return ("# Available Agent Skills\n\nYou have access to the following specialized skills. "
            "To activate a skill and receive its detailed instructions, call the "
            "`activate_skill` tool with the skill's name.\n\n"
            f"<available_skills>\n{xml}\n</available_skills>")


def render_activated_skill(skill: Skill) -> str:
    """The `activate_skill` tool's result: the instructions and the skill folder's files."""
    folder = posixpath.dirname(skill.location)
    files: list[str] = []
    for current, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in ("node_modules", ".git"))
        for name in sorted(names):
            files.append(posixpath.relpath(posixpath.join(current, name), folder))
        if len(files) > 200:
            break
    resources = "\n".join(files[:200])
    return (f'<activated_skill name="{skill.name}">\n  <instructions>\n    {skill.body}\n'
            f"  </instructions>\n\n  <available_resources>\n    {resources}\n"
            "  </available_resources>\n</activated_skill>")
