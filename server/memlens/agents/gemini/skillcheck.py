"""Validating SKILL.md files against the Agent Skills specification
(docs/reference.md "Skills", "Diagnostics"), beyond what Gemini CLI checks, with each problem on its
exact range and, where Gemini CLI would still load a broken file through its fallback parser, what
it will see."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any

from memlens.agents.gemini.skills import _fallback, parse_frontmatter
from memlens.files.structured import StructuredDataError, parse_yaml
from memlens.protocol.memory import Diagnostic
from memlens.protocol.wire import Severity
from memlens.text.frontmatter import FRONTMATTER
from memlens.text.textpos import LineIndex

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
KNOWN_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
REQUIRED_SECTIONS = ("## When to Use", "## Procedure", "## Pitfalls and Fixes", "## Verification")
MAX_BODY_LINES = 500


@dataclass
class _Ctx:
    path: str
    text: str
    index: LineIndex
    out: list[Diagnostic]

    def add(self, start: int, end: int, severity: Severity, code: str, message: str) -> None:
        line, col = self.index.position(start)
        end_line, end_col = self.index.position(end)
        self.out.append(Diagnostic(path=self.path, line=line, col=col, end_line=end_line,
                                   end_col=end_col, severity=severity, code=code,
                                   message=message))

    def key_range(self, key: str, fm_start: int, fm_end: int) -> tuple[int, int]:
        match = re.search(rf"^[ \t]*({re.escape(key)})[ \t]*:", self.text[fm_start:fm_end],
                          re.MULTILINE)
        if match is None:
            return fm_start, fm_start + 3
        return fm_start + match.start(1), fm_start + match.end(1)

    def value_range(self, key: str, fm_start: int, fm_end: int) -> tuple[int, int]:
        match = re.search(rf"^[ \t]*{re.escape(key)}[ \t]*:[ \t]*(.*)$",
                          self.text[fm_start:fm_end], re.MULTILINE)
        if match is None or not match.group(1).strip():
            return self.key_range(key, fm_start, fm_end)
        return fm_start + match.start(1), fm_start + match.end(1)


def check_skill(path: str, text: str, *, extracted: bool = False) -> list[Diagnostic]:
    ctx = _Ctx(path, text, LineIndex(text), [])
    match = FRONTMATTER.match(text)
    if match is None:
        ctx.add(0, min(len(text), 3), "error", "skill-missing-field",
                "No YAML frontmatter (--- name/description ---): Gemini CLI ignores this file")
        return ctx.out
    fm_start, fm_end = match.start(1), match.end(1)
    frontmatter = match.group(1)
    data: Any = None
    try:
        data = parse_yaml(frontmatter)
    except StructuredDataError as err:
        offset = fm_start
        if err.line is not None and err.column is not None:
            line_starts = [0] + [m.end() for m in re.finditer("\n", frontmatter)]
            offset = (fm_start + line_starts[min(err.line, len(line_starts) - 1)]
                      + err.column)
        problem = err.problem
        fallback = _fallback(frontmatter)
        seen = (f"Gemini CLI's fallback parser still loads it as name {fallback[0]!r}, "
                f"description {fallback[1]!r}" if fallback else
                "Gemini CLI cannot load it (its fallback parser finds no name and description)")
        hint = " (quote a value that contains ': ')" if "mapping values" in str(problem) else ""
        ctx.add(offset, min(offset + 1, len(text)), "error", "skill-invalid-yaml",
                f"Invalid YAML: {problem}{hint}. {seen}")
        data = None
    if isinstance(data, dict):
        _check_fields(ctx, data, fm_start, fm_end)
    elif data is not None:
        ctx.add(fm_start, fm_end, "error", "skill-invalid-yaml",
                "The frontmatter is not a YAML mapping of keys to values")
    parsed = parse_frontmatter(frontmatter)
    folder = posixpath.basename(posixpath.dirname(path))
    if parsed is not None and NAME_RE.match(parsed[0]) and folder not in ("skills", parsed[0]):
        start, end = ctx.value_range("name", fm_start, fm_end)
        ctx.add(start, end, "warning", "skill-name-mismatch",
                f"The skill is named {parsed[0]!r} but its folder is {folder!r}; the Agent "
                "Skills specification wants them equal")
    body = match.group(2) or ""
    body_lines = body.count("\n") + (1 if body and not body.endswith("\n") else 0)
    if body_lines > MAX_BODY_LINES:
        start = match.start(2) if match.group(2) is not None else len(text)
        ctx.add(start, start, "warning", "skill-body-too-long",
                f"The body has {body_lines} lines (over {MAX_BODY_LINES}): move detail into "
                "files the skill references, the body is loaded whole on activation")
    if extracted:
        for section in REQUIRED_SECTIONS:
            if not re.search(rf"^{re.escape(section)}[ \t]*$", body, re.MULTILINE):
                ctx.add(fm_start - 4 if fm_start >= 4 else 0, fm_start, "error",
                        "skill-missing-section",
                        f"An extracted skill needs a '{section}' section")
    return ctx.out


def _check_fields(ctx: _Ctx, data: dict[Any, Any], fm_start: int, fm_end: int) -> None:
    for key in ("name", "description"):
        if key not in data or data[key] is None or (isinstance(data[key], str)
                                                    and not data[key].strip()):
            start, end = ctx.key_range(key, fm_start, fm_end)
            ctx.add(start, end, "error", "skill-missing-field",
                    f"The '{key}' field is missing or empty")
    name = data.get("name")
    if isinstance(name, str) and name.strip():
        start, end = ctx.value_range("name", fm_start, fm_end)
        if len(name) > 64:
            ctx.add(start, end, "error", "skill-field-too-long",
                    f"'name' has {len(name)} characters (at most 64)")
        elif not NAME_RE.match(name):
            sanitized = re.sub(r'[:\\/<>*?"|]', "-", name)
            ctx.add(start, end, "error", "skill-invalid-name",
                    "'name' must be lowercase letters, digits and single hyphens, not at the "
                    f"start or end (Gemini CLI will call it {sanitized!r})")
    elif name is not None and not isinstance(name, str):
        start, end = ctx.value_range("name", fm_start, fm_end)
        ctx.add(start, end, "error", "skill-invalid-name", "'name' must be a string")
    description = data.get("description")
    if isinstance(description, str) and description.strip():
        start, end = ctx.value_range("description", fm_start, fm_end)
        if len(description) > 1024:
            ctx.add(start, end, "error", "skill-field-too-long",
                    f"'description' has {len(description)} characters (at most 1024)")
        if "<" in description or ">" in description:
            ctx.add(start, end, "error", "skill-invalid-description",
                    "'description' must not contain '<' or '>' (it is placed inside XML tags "
                    "in the prompt)")
    compatibility = data.get("compatibility")
    if isinstance(compatibility, str) and len(compatibility) > 500:
        start, end = ctx.value_range("compatibility", fm_start, fm_end)
        ctx.add(start, end, "error", "skill-field-too-long",
                f"'compatibility' has {len(compatibility)} characters (at most 500)")
    metadata = data.get("metadata")
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        start, end = ctx.key_range("metadata", fm_start, fm_end)
        ctx.add(start, end, "warning", "skill-unknown-field",
                "'metadata' should map strings to strings")
    from memlens.agents import SKILL_FIELDS

    for key in data:
        if key not in KNOWN_KEYS and not any(key in f for f in SKILL_FIELDS.values()):
            start, end = ctx.key_range(str(key), fm_start, fm_end)
            ctx.add(start, end, "warning", "skill-unknown-field",
                    f"Unknown field '{key}': no agent Memory Lens models reads it (the Agent "
                    f"Skills specification defines {', '.join(sorted(KNOWN_KEYS))}; Claude "
                    "Code and VS Code's chat add their own, such as argument-hint and model)")


def check_duplicates(skills: list[tuple[str, str, str]]) -> list[Diagnostic]:
    """`skills`: (name, path, tier) from lowest to highest precedence. The losers of a shared
    name get `skill-duplicate` naming the winner and why."""
    by_name: dict[str, list[tuple[str, str]]] = {}
    for name, path, tier in skills:
        by_name.setdefault(name, []).append((path, tier))
    out = []
    for name, entries in by_name.items():
        if len(entries) < 2:
            continue
        winner_path, winner_tier = entries[-1]
        for path, tier in entries[:-1]:
            why = ("a later tier overrides an earlier one" if tier != winner_tier else
                   "in the same folder the later file wins")
            out.append(Diagnostic(
                path=path, line=1, col=1, end_line=1, end_col=4, severity="warning",
                code="skill-duplicate",
                message=f"Not offered: skill {name!r} is also defined in {winner_path} "
                        f"({winner_tier}), which wins ({why}: built-in < extensions < "
                        "~/.gemini/skills < ~/.agents/skills < .gemini/skills < "
                        ".agents/skills)"))
    return out
