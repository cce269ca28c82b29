"""Codex's skills listing, exactly as it sends it (verified on 0.169.0 and 0.171.0:
tests/conformance/test_skills.py; docs/reference.md "Skills").

What it sends: a developer message of its first request holds one `<skills_instructions>`
block: `## Skills`, a line saying how to read the list, `### Skill roots` (each folder that
holds a listed skill, `r0`, `r1`, … in the order it scans them), `### Available skills` and one
line per skill, ``- NAME: DESCRIPTION (file: rN/PATH)``. The rules, seen in its requests and
read in its source (codex-rs, open source):

* Where, in scan order: ``$CODEX_HOME/skills`` and ``~/.agents/skills`` (user),
  ``$CODEX_HOME/skills/.system`` (its own skills, written there when it starts),
  ``/etc/codex/skills`` (admin), then ``.agents/skills`` in each folder from the project root
  (the nearest folder above holding ``.git``) down to the working folder (repo).
* Every ``SKILL.md`` down to six folders below a root, skipping names that start with a dot.
* Listed by scope (its own, then the admin's, the repository's, the user's), then by name
  (byte order), then by path. Two skills with one name are both listed; a file reached twice
  (a link) once.
* Past its budget (2% of the model's context window in tokens of four bytes, plus 36, less the
  roots table), the descriptions share what is left over the lines without one, one character
  at a time in listing order, cut without a mark; its own skills are cut too.
* A skill whose ``agents/openai.yaml`` sets ``policy.allow_implicit_invocation: false`` is
  left out (it runs only when named).
* It needs a frontmatter (``---`` lines) with a non-empty ``description``; ``name`` defaults
  to the folder's name; a name over 64 characters is not loaded. White space runs in both
  become one space; a description over 1,024 characters is cut to 1,021 and ``...``.
"""

from __future__ import annotations

import math
import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from memlens.files.fsread import FileReader
from memlens.protocol.memory import Diagnostic
from memlens.text.frontmatter import yaml_mapping

LABEL = "Codex"
OPEN, CLOSE = "<skills_instructions>", "</skills_instructions>"
INTRO = ("A skill is a set of local instructions to follow that is stored in a `SKILL.md` "
         "file. Below is the list of skills that can be used. Each entry includes a name, "
         "description, and a short path that can be expanded into an absolute path using the "
         "skill roots table.")
ADMIN_ROOT = "/etc/codex/skills"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_DEPTH = 6
MAX_DIRS_PER_ROOT = 2000
# Its listing's budget, in tokens of four bytes: 2% of its model's context window, plus 36,
# less the skill roots table (its lines' bytes, plus 3, in tokens). The window is that of the
# release's default model (seen in its requests: 0.169.0 sends gpt-6.1-sol, 0.171.0
# gpt-6.2-sol); a model chosen in config.toml has its own (not modelled).
CONTEXT_WINDOW = {"0.169.0": 272_000, "0.171.0": 500_000}
# The order it lists scopes in (0.169.0: its own skills, the admin's, the repository's, the
# user's).
SCOPE_ORDER = {"system": 0, "admin": 1, "repo": 2, "user": 3}


@dataclass
class CodexSkill:
    path: str
    root: str
    scope: str
    name: str = ""
    description: str = ""
    offered: bool = True
    reason: str | None = None
    shown: int | None = None  # past the budget: the characters of its description listed


@dataclass
class CodexSkills:
    skills: list[CodexSkill]
    listing: str
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _single_line(value: str) -> str:
    return " ".join(value.split())


def skill_roots(home: str, cwd: str, codex_home: str | None = None,
                admin_root: str = ADMIN_ROOT) -> list[tuple[str, str]]:
    """(scope, folder) in the order Codex scans them."""
    from memlens.agents.codex.load import codex_home as codex_home_of
    from memlens.agents.codex.load import effective_config, search_folders

    codex_home = codex_home or codex_home_of(home)
    roots = [("user", posixpath.join(codex_home, "skills")),
             ("user", posixpath.join(home, ".agents", "skills")),
             ("system", posixpath.join(codex_home, "skills", ".system")),
             ("admin", admin_root)]
    config, _ = effective_config(cwd, codex_home)
    for folder in search_folders(cwd, config.markers):
        roots.append(("repo", posixpath.join(folder, ".agents", "skills")))
    seen: set[str] = set()
    out = []
    for scope, root in roots:
        if root not in seen:
            seen.add(root)
            out.append((scope, root))
    return out


def _skill_files(root: str, follow_links: bool) -> list[str]:
    """Every SKILL.md down to MAX_DEPTH folders below `root` (breadth first)."""
    if not os.path.isdir(root):
        return []
    found = []
    visited = {os.path.realpath(root)}
    queue = [(root, 0)]
    while queue:
        folder, depth = queue.pop(0)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            if name.startswith("."):
                continue
            path = posixpath.join(folder, name)
            if os.path.islink(path) and not follow_links:
                continue
            if os.path.isdir(path):
                real = os.path.realpath(path)
                if depth + 1 <= MAX_DEPTH and len(visited) < MAX_DIRS_PER_ROOT \
                        and real not in visited:
                    visited.add(real)
                    queue.append((path, depth + 1))
            elif name == "SKILL.md" and os.path.isfile(path):
                found.append(path)
    return found


def _frontmatter(text: str) -> str | None:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:index])
    return None


def _fields(frontmatter: str) -> dict[str, Any]:
    """Its frontmatter's keys; when its YAML is refused, the `name:` and `description:` lines
    read one by one (0.169.0 still loads such a skill)."""
    data = yaml_mapping(frontmatter)
    if data is not None:
        return data
    out: dict[str, Any] = {}
    for line in frontmatter.split("\n"):
        match = re.match(r"^(name|description):[ \t]*(.*)$", line)
        if match:
            value = match.group(2).strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            out[match.group(1)] = value
    return out


def _as_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _load(path: str, root: str, scope: str, reader: FileReader) -> CodexSkill:
    skill = CodexSkill(path=path, root=root, scope=scope)
    text = reader.read(path).content
    if text is None:
        skill.offered, skill.reason = False, "not readable as text"
        return skill
    frontmatter = _frontmatter(text)
    if frontmatter is None:
        skill.offered, skill.reason = False, "no YAML frontmatter (--- lines): Codex skips it"
        return skill
    data = _fields(frontmatter)
    name = _single_line(_as_text(data.get("name")) or "")
    if not name:
        name = _single_line(posixpath.basename(posixpath.dirname(path))) or "skill"
    description = _single_line(_as_text(data.get("description")) or "")
    skill.name = name
    if not description:
        skill.offered, skill.reason = False, "no description: Codex skips it"
    elif len(name) > MAX_NAME:
        skill.offered, skill.reason = False, (
            f"its name has {len(name)} characters (at most {MAX_NAME}): Codex skips it")
    if len(description) > MAX_DESCRIPTION:
        description = description[:MAX_DESCRIPTION - 3] + "..."
    skill.description = description
    if skill.offered and not _implicit(path):
        skill.offered, skill.reason = False, (
            "agents/openai.yaml sets policy.allow_implicit_invocation: false: Codex leaves it "
            "out of the listing (it runs only when named)")
    return skill


def _implicit(path: str) -> bool:
    """False when the skill's `agents/openai.yaml` says `policy.allow_implicit_invocation:
    false` (an unreadable file counts as absent, as Codex reads it)."""
    meta = posixpath.join(posixpath.dirname(path), "agents", "openai.yaml")
    text = FileReader().read(meta).content if os.path.isfile(meta) else None
    data = yaml_mapping(text) if text else None
    policy = data.get("policy") if data else None
    return not (isinstance(policy, dict) and policy.get("allow_implicit_invocation") is False)


def load_skills(home: str, cwd: str, codex_home: str | None = None,
                admin_root: str = ADMIN_ROOT, reader: FileReader | None = None,
                version: str | None = None) -> CodexSkills:
    """Every SKILL.md Codex looks at starting in `cwd`, in listing order (the ones it skips
    last), and the `<skills_instructions>` block it sends ("" without any skill)."""
    reader = reader or FileReader()
    found: list[CodexSkill] = []
    seen: set[str] = set()
    used_roots: list[str] = []
    for scope, root in skill_roots(home, cwd, codex_home, admin_root):
        for path in _skill_files(root, follow_links=scope != "system"):
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            skill = _load(path, root, scope, reader)
            found.append(skill)
            if skill.offered and root not in used_roots:
                used_roots.append(root)
    offered = sorted((s for s in found if s.offered),
                     key=lambda s: (SCOPE_ORDER[s.scope], s.name.encode(), s.path.encode()))
    dropped = [s for s in found if not s.offered]
    if not offered:
        return CodexSkills(skills=dropped, listing="")
    used_roots = [r for r in used_roots if any(s.root == r for s in offered)]
    alias = {root: f"r{i}" for i, root in enumerate(used_roots)}
    roots = [f"- `{alias[root]}` = `{root}`" for root in used_roots]
    paths = [f"{alias[s.root]}/{posixpath.relpath(s.path, s.root)}" for s in offered]
    window = CONTEXT_WINDOW.get(version or "", CONTEXT_WINDOW[max(CONTEXT_WINDOW)])
    budget = window * 2 // 100 + 36 - _tokens(len("\n".join(roots).encode()) + 3)
    lines = _fit(offered, paths, budget)
    block = [OPEN, "## Skills", INTRO, "### Skill roots", *roots, "### Available skills",
             *lines, CLOSE]
    listed = [s for s in offered if s.offered]
    dropped += [s for s in offered if not s.offered]
    return CodexSkills(skills=listed + dropped, listing="\n".join(block))


def _tokens(size: int) -> int:
    """Its estimate of a text's tokens from its size in bytes."""
    return math.ceil(size / 4)


def _line(skill: CodexSkill, path: str, chars: int | None = None) -> str:
    description = skill.description if chars is None else skill.description[:chars]
    return (f"- {skill.name}: {description} (file: {path})" if description
            else f"- {skill.name}: (file: {path})")


def _fit(skills: list[CodexSkill], paths: list[str], budget: int) -> list[str]:
    """The skill lines within `budget` tokens (each line with its line break): whole when
    they fit; else every description shares what is left over the lines without one, one
    character at a time in listing order (a character that adds no token is free); when not
    even those fit, the skills past the budget are left out."""
    def cost(line: str) -> int:
        return _tokens(len(line.encode()) + 1)

    full = [_line(s, p) for s, p in zip(skills, paths, strict=True)]
    if sum(map(cost, full)) <= budget:
        return full
    bare = [_line(s, p, 0) for s, p in zip(skills, paths, strict=True)]
    if sum(map(cost, bare)) > budget:
        kept, used = [], 0
        for skill, line in zip(skills, bare, strict=True):
            if used + cost(line) <= budget:
                used += cost(line)
                kept.append(line)
                skill.shown = 0
            else:
                skill.offered, skill.reason = False, (
                    "left out: its listing is past its budget even without descriptions")
        return kept
    left = budget - sum(map(cost, bare))
    steps = []
    for skill, line in zip(skills, bare, strict=True):
        size, base, extra = len(line.encode()) + 1, cost(line), [0]
        for ch in skill.description:
            size += len(ch.encode())
            extra.append(_tokens(size + 1) - base)
        steps.append(extra)
    given, spent = [0] * len(skills), [0] * len(skills)
    changed = True
    while changed:
        changed = False
        for i, skill in enumerate(skills):
            if given[i] >= len(skill.description):
                continue
            delta = steps[i][given[i] + 1] - spent[i]
            if delta <= left:
                given[i] += 1
                spent[i] += delta
                left -= delta
                changed = True
    for skill, chars in zip(skills, given, strict=True):
        if chars < len(skill.description):
            skill.shown = chars
    return [_line(s, p, n) for s, p, n in zip(skills, paths, given, strict=True)]
