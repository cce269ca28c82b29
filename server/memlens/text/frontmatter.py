"""YAML frontmatter: the `---` block at the top of a skill, a Claude Code rule or topic file.

Two agents delimit it differently, and each is matched byte for byte: Gemini CLI's skill loader
lets text follow the closing `---` on its line (and hands back the body after it); Claude Code
wants the closing `---` alone on its line. The YAML inside is read the same way by both.
"""

from __future__ import annotations

import copy
import functools
import re
from typing import Any

from memlens.files.structured import (
    MAX_DEPTH,
    MAX_YAML_CHARS,
    StructuredDataError,
    parse_yaml,
    parse_yaml_with,
)

# Gemini CLI's skill loader: group 1 the YAML, group 2 the body (None without a line break).
FRONTMATTER = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n([\s\S]*))?")
# Claude Code's rules and auto-memory topic files: the closing `---` ends its line.
_LINE_CLOSED = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)")


def yaml_mapping(text: str) -> dict[str, object] | None:
    """`text` read as YAML when it is a mapping of keys to values; None when it is invalid
    YAML or anything else (a list, a scalar, nothing), and when it cannot be read at all
    (nested too deeply, too large: `files.structured`)."""
    try:
        data = parse_yaml(text)
    except StructuredDataError:
        return None
    return data if isinstance(data, dict) else None


def js_yaml_mapping(text: str) -> dict[str, object] | None:
    """`text` read as js-yaml's `load` reads it (Gemini CLI's skill loader): YAML 1.2 (so
    `yes`, `on` are strings), a duplicate key is an error, a byte-order mark is dropped and a
    final line break added first (so a block scalar ending the text keeps its line break).
    None when it is invalid or not a mapping. ruamel.yaml is the YAML 1.2 reader; the cases
    where it still parts from js-yaml are listed in KNOWN_DIFFERENCES.md (property test
    against the agent's own loader: tests/conformance/test_skill_frontmatter.py)."""
    from ruamel.yaml import YAML

    if text.startswith("\ufeff"):
        text = text[1:]
    if text and not text.endswith(("\n", "\r")):
        text += "\n"
    if text.startswith("---") and text[3:4] not in ("", " ", "\t", "\n", "\r"):
        # js-yaml takes the three dashes for a document start whatever follows them, and
        # reads the rest of the line from column 3
        text = "   " + text[3:]
    reader = YAML(typ="safe", pure=True)
    reader.allow_duplicate_keys = False
    reader.max_depth = MAX_DEPTH  # nested deeper: refused before the composer recurses
    shielded = "\t" in text and _TAB_MARK not in text
    tries = [text]
    if shielded:
        lines = text.splitlines(keepends=True)
        tries = ["".join(_shield_tabs(line, outer=False) for line in lines),
                 "".join(_shield_tabs(line, outer=True) for line in lines)]
    for attempt in tries:
        try:
            # ruamel's errors share no base class worth naming: every one is "invalid", and
            # so is a RecursionError or MemoryError (the shared guard turns them all into one)
            data = parse_yaml_with(reader.load, attempt)
        except StructuredDataError:
            continue
        if not isinstance(data, dict):
            return None
        return _unshield(data) if shielded else data
    return None


# ruamel.yaml refuses a tab inside a plain scalar (`description: tab<TAB>here`), which YAML 1.2
# and js-yaml allow: a tab between two characters goes through as this mark and is put back
# after the load. When that is not enough, a tab before a comment or at the end of a line is
# taken as the whitespace it is to js-yaml (the value ends there): a space, on lines without
# quotes (a second try, so that block scalars which load keep their tabs).
_TAB_MARK = "\ue000"
_INNER_TABS = re.compile(r"(?<=[^\s:])([ \t]*\t[ \t]*)(?=[^\s#])")
_OUTER_TABS = re.compile(r"(?<=\S)[ \t]*\t[ \t]*(?=#|\r?\n|$)")


def _shield_tabs(line: str, *, outer: bool) -> str:
    body = line.lstrip(" \t")
    indent = line[:len(line) - len(body)]
    if "\t" not in body:
        return line
    body = _INNER_TABS.sub(lambda m: m.group(1).replace("\t", _TAB_MARK), body)
    if outer and '"' not in body and "'" not in body:
        body = _OUTER_TABS.sub(lambda m: m.group(0).replace("\t", " "), body)
    return indent + body


def _unshield(value: object) -> Any:
    if isinstance(value, str):
        return value.replace(_TAB_MARK, "\t")
    if isinstance(value, dict):
        return {_unshield(k): _unshield(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshield(v) for v in value]
    return value


def line_closed_frontmatter(text: str) -> dict[str, object] | None:
    """The frontmatter mapping of a file whose closing `---` stands alone on its line (Claude
    Code's form); None without one, or when it is not a YAML mapping even after Claude Code's
    second try (`claude_yaml_mapping`)."""
    match = _LINE_CLOSED.match(text)
    return claude_yaml_mapping(match.group(1)) if match else None


# Claude Code's second try at frontmatter that is not valid YAML: a `key: value` line whose
# unquoted value holds one of these (`description: with: colon`) gets the value double-quoted,
# leading tabs become two spaces each, and the text is read again. JavaScript's `.` stops at
# \r, \u2028 and \u2029: a line ending in \r is left as it is.
_NEEDS_QUOTES = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_KEY_VALUE = re.compile(r"([a-zA-Z_-]+):\s+(\S[^\n\r\u2028\u2029]*)")
_LEADING_TABS = re.compile(r"^\t+", re.M)


def _quoted_for_claude(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        match = _KEY_VALUE.fullmatch(line)
        if match:
            key, value = match.groups()
            quoted = (value[:1] == value[-1:] and value[:1] in ('"', "'") and len(value) > 1)
            listed = False
            if value.startswith("[") and value.endswith("]"):
                try:
                    listed = isinstance(parse_yaml(value), list)
                except StructuredDataError:
                    listed = False
            if not quoted and not listed and _NEEDS_QUOTES.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{key}: "{escaped}"'
        lines.append(line)
    return "\n".join(lines)


def claude_yaml_mapping(text: str) -> dict[str, object] | None:
    """Frontmatter YAML as Claude Code reads it: as YAML, else once more with the values that
    broke it quoted (`_quoted_for_claude`). None when neither is a mapping."""
    # Every view of a run asks again for the same file, and a parse in pure Python costs up
    # to a second for a large block: each block within the bound (a larger one is refused
    # before parsing) is parsed once, and each caller gets its own copy.
    if len(text) > MAX_YAML_CHARS:
        return _claude_yaml_mapping.__wrapped__(text)
    return copy.deepcopy(_claude_yaml_mapping(text))


@functools.lru_cache(maxsize=256)
def _claude_yaml_mapping(text: str) -> dict[str, object] | None:
    try:
        data = parse_yaml(text)
    except StructuredDataError:
        retried = _LEADING_TABS.sub(lambda m: "  " * len(m.group(0)), _quoted_for_claude(text))
        try:
            data = parse_yaml(retried)
        except StructuredDataError:
            return None
    return data if isinstance(data, dict) else None
