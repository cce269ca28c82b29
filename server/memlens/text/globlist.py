"""A rule's glob list as Claude Code (`paths:`) and Cursor (`globs`) read it: a list of
values flattened, a string split at the commas outside `{}`, each part trimmed and its
`{a,b}` groups expanded (`files.globs.expand_braces`, bounded by `MAX_EXPANDED`). The one
difference between the two agents, how a `{a,b}` group is recognised, is the caller's
`group` pattern."""

from __future__ import annotations

import re

from memlens.files.globs import GlobList, expand_braces


def split_glob_list(value: object, group: re.Pattern[str],
                    out: GlobList | None = None) -> GlobList:
    """The globs `value` (a string, or a list of strings and lists) expands to, appended to
    `out`; anything else adds none."""
    out = GlobList() if out is None else out
    if isinstance(value, list):
        for item in value:
            split_glob_list(item, group, out)
        return out
    if not isinstance(value, str):
        return out
    for part in filter(None, _split_outside_braces(value)):
        expand_braces(part, group, out)
    return out


def _split_outside_braces(value: str) -> list[str]:
    """`value` split at the commas outside `{}`, each part trimmed (a stray `}` counts down,
    so the commas after it stay inside until a `{` balances it)."""
    parts, current, depth = [], "", 0
    for char in value:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += (char == "{") - (char == "}")
        current += char
    parts.append(current.strip())
    return parts
