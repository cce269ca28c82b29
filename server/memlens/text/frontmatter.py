"""YAML frontmatter: the `---` block at the top of a skill, a Claude Code rule or topic file.

Two agents delimit it differently, and each is matched byte for byte: Gemini CLI's skill loader
lets text follow the closing `---` on its line (and hands back the body after it); Claude Code
wants the closing `---` alone on its line. The YAML inside is read the same way by both.
"""

from __future__ import annotations

import re

import yaml

# Gemini CLI's skill loader: group 1 the YAML, group 2 the body (None without a line break).
FRONTMATTER = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n([\s\S]*))?")
# Claude Code's rules and auto-memory topic files: the closing `---` ends its line.
_LINE_CLOSED = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)")


def yaml_mapping(text: str) -> dict[str, object] | None:
    """`text` read as YAML when it is a mapping of keys to values; None when it is invalid
    YAML or anything else (a list, a scalar, nothing)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def line_closed_frontmatter(text: str) -> dict[str, object] | None:
    """The frontmatter mapping of a file whose closing `---` stands alone on its line (Claude
    Code's form); None without one, or when it is not a YAML mapping."""
    match = _LINE_CLOSED.match(text)
    return yaml_mapping(match.group(1)) if match else None
