"""Loading `SKILL.md` files as Gemini CLI's skillLoader does (frontmatter, fallback parser)."""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from typing import Any

from memlens.agents.gemini.jsonc import read_json_file
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import JS_WHITESPACE, js_trim
from memlens.files.walk import walk
from memlens.text.frontmatter import FRONTMATTER, js_yaml_mapping

_UNSAFE_NAME = re.compile(r'[:\\/<>*?"|]')
# The fallback parser's patterns as JavaScript reads them: `\s` is JavaScript's white space,
# `.` stops at any line terminator, `$` is the end of the line's text (no multiline flag).
_WS = f"[{re.escape(JS_WHITESPACE)}]"
_REST = "([^\n\r\u2028\u2029]*)\\Z"
_NAME_LINE = re.compile(f"^{_WS}*name:{_WS}*{_REST}")
_DESCRIPTION_LINE = re.compile(f"^{_WS}*description:{_WS}*{_REST}")
_CONTINUATION = re.compile(f"^[ \t]+[^{re.escape(JS_WHITESPACE)}]")


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
    """Gemini CLI's line parser for frontmatter js-yaml rejects (e.g. an unquoted colon): the
    last `name:` line, the last `description:` line joined with every indented line after it
    (even one that reads like a key)."""
    lines = re.split(r"\r?\n", frontmatter)
    name: str | None = None
    description: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        name_match = _NAME_LINE.match(line)
        desc_match = _DESCRIPTION_LINE.match(line)
        if name_match:
            name = js_trim(name_match.group(1))
        elif desc_match:
            parts = [js_trim(desc_match.group(1))]
            while i + 1 < len(lines) and _CONTINUATION.match(lines[i + 1]):
                i += 1
                parts.append(js_trim(lines[i]))
            description = " ".join(p for p in parts if p)
        i += 1
    if name is None or description is None:
        return None
    return name, description


def parse_frontmatter(frontmatter: str) -> tuple[str, str] | None:
    data = js_yaml_mapping(frontmatter)
    if data is not None and isinstance(name := data.get("name"), str) and isinstance(
            description := data.get("description"), str):
        return name, description
    return _fallback(frontmatter)


def load_skill_file(path: str) -> Skill | None:
    # Regular files only, bounded (a SKILL.md swapped for a FIFO is never opened)
    text = FileReader().read(path).content
    if text is None:
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
    """(tier, folder) from lowest to highest precedence, as Gemini CLI loads them: installed
    extensions' `skills/`, the user's two folders, then (trusted only) the workspace's two.
    The project's private memory folder (`~/.gemini/tmp/<project>/memory/skills`) is not one:
    Gemini CLI keeps its skills inbox there."""
    roots = [("extension", posixpath.join(ext, "skills")) for ext in extension_dirs(home)]
    roots += [("user", os.path.join(home, ".gemini", "skills")),
              ("user-agents", os.path.join(home, ".agents", "skills"))]
    if trusted:
        roots += [("workspace", os.path.join(workspace, ".gemini", "skills")),
                  ("workspace-agents", os.path.join(workspace, ".agents", "skills"))]
    return roots


def _bytes_key(name: str) -> bytes:
    return name.encode("utf-8", "surrogateescape")


def extension_dirs(home: str) -> list[str]:
    """The extensions installed under HOME/.gemini/extensions that Gemini CLI loads, in its
    order (the folder's entries by byte order): a folder whose gemini-extension.json has a
    name and a version."""
    base = posixpath.join(home, ".gemini", "extensions")
    try:
        names = sorted(os.listdir(base), key=_bytes_key)
    except OSError:
        return []
    out = []
    for name in names:
        folder = posixpath.join(base, name)
        manifest = read_json_file(posixpath.join(folder, "gemini-extension.json"))
        if (os.path.isdir(folder) and isinstance(manifest, dict) and manifest.get("name")
                and manifest.get("version")):
            out.append(folder)
    return out


def skill_files(folder: str) -> list[str]:
    """`SKILL.md` and `*/SKILL.md` in a skills folder, in the order Gemini CLI's glob gives
    them: the folder's own first, then its subfolders' from the last name to the first (byte
    order); `*` matches no name starting with a dot; node_modules and .git are ignored.
    (Gemini CLI checks the subfolders concurrently, so it gives this order unless two checks
    finish out of turn: KNOWN_DIFFERENCES.md.)"""
    if not os.path.isdir(folder):
        return []
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    subfolders = sorted((n for n in names if not n.startswith(".") and n != "node_modules"),
                        key=_bytes_key, reverse=True)
    candidates = [posixpath.join(folder, "SKILL.md")]
    candidates += [posixpath.join(folder, n, "SKILL.md") for n in subfolders]
    return [c for c in candidates if os.path.isfile(c)]


def all_skill_files(home: str, workspace: str, trusted: bool) -> list[tuple[str, str]]:
    """(path, tier) of every SKILL.md Gemini CLI looks at, lowest precedence first."""
    return [(path, tier) for tier, folder in skill_roots(home, workspace, trusted)
            for path in skill_files(folder)]


# The skills Gemini CLI ships (its bundle's builtin/ folder), listed before every other tier:
# a skill of the same name takes the built-in's place in the listing.
BUILTIN_SKILLS = ("skill-creator",)


def discover_skills(home: str, workspace: str, trusted: bool,
                    builtins: tuple[str, ...] = BUILTIN_SKILLS) -> list[tuple[Skill, str]]:
    """Skills after precedence (a later tier overrides the same name, in its place): (skill,
    tier). The built-in skills themselves are not listed (they live in the agent's install),
    but one of the user's named like a built-in sits where the built-in is."""
    chosen: dict[str, tuple[Skill, str] | None] = dict.fromkeys(builtins)
    for path, tier in all_skill_files(home, workspace, trusted):
        skill = load_skill_file(path)
        if skill is not None:
            if tier == "extension":
                skill = _hydrated(skill, workspace)
            chosen[skill.name] = (skill, tier)
    return [entry for entry in chosen.values() if entry is not None]


def _hydrated(skill: Skill, workspace: str) -> Skill:
    """An extension's skill (`<extension>/skills/[<folder>/]SKILL.md`) with `${extensionPath}`,
    `${workspacePath}`, `${/}` and `${pathSeparator}` replaced, as Gemini CLI hydrates every
    string of an extension."""
    folder = posixpath.dirname(skill.location)
    if posixpath.basename(folder) != "skills":
        folder = posixpath.dirname(folder)
    values = {"extensionPath": posixpath.dirname(folder), "workspacePath": workspace, "/": "/",
              "pathSeparator": "/"}

    def hydrate(text: str) -> str:
        return re.sub(r"\$\{(.*?)\}", lambda m: values.get(m.group(1), m.group(0)), text)

    return Skill(hydrate(skill.name), hydrate(skill.description), hydrate(skill.location),
                 hydrate(skill.body))


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
    for current, dirs, names in walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in ("node_modules", ".git"))
        for name in sorted(names):
            files.append(posixpath.relpath(posixpath.join(current, name), folder))
        if len(files) > 200:
            break
    resources = "\n".join(files[:200])
    return (f'<activated_skill name="{skill.name}">\n  <instructions>\n    {skill.body}\n'
            f"  </instructions>\n\n  <available_resources>\n    {resources}\n"
            "  </available_resources>\n</activated_skill>")
