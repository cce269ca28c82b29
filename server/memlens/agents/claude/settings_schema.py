"""Which of Claude Code's settings files count: Claude Code validates a settings file against
its schema and ignores the whole file when a key has a value of the wrong type
(`"autoMemoryEnabled": 0`, `"model": 5`; unknown keys are fine) — seen in its requests, see
tests/conformance/claude_memory.py. The keys with a simple type (boolean, string, number; null is
refused too) come from the schema inside Claude Code (data/claude-settings-keys.json, written
by scripts/agents/claude-settings-keys.py); keys whose schema is an object, an array, a union or a
list of words are not checked (`"permissions": 5` makes Claude Code ignore the file too, but a
word outside an `effortLevel`'s list does not)."""

from __future__ import annotations

import functools
import json
import os
from typing import Any

DATA_FILE = os.path.join(os.path.dirname(__file__), "..", "..", "data",
                         "claude-settings-keys.json")


@functools.cache
def _keys() -> dict[str, dict[str, Any]]:
    with open(DATA_FILE, encoding="utf-8") as handle:
        keys: dict[str, dict[str, Any]] = json.load(handle)["keys"]
    return keys


def _number_problem(value: object, rule: dict[str, Any]) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "must be a number"
    if rule.get("integer") and not float(value).is_integer():
        return "must be a whole number"
    if "minimum_exclusive" in rule and not value > rule["minimum_exclusive"]:
        return f"must be greater than {rule['minimum_exclusive']:g}"
    if "minimum" in rule and value < rule["minimum"]:
        return f"must be at least {rule['minimum']:g}"
    if "maximum" in rule and value > rule["maximum"]:
        return f"must be at most {rule['maximum']:g}"
    return None


def invalid_setting(data: dict[str, Any]) -> str | None:
    """Why Claude Code ignores a settings file holding `data` ("autoMemoryEnabled must be true
    or false"), or None when the keys it checks here are well typed."""
    for key, value in data.items():
        rule = _keys().get(key)
        if rule is None:  # unknown, or a type this table does not check
            continue
        kind = rule["type"]
        problem = None
        if kind == "boolean" and not isinstance(value, bool):
            problem = "must be true or false"
        elif kind == "string" and not isinstance(value, str):
            problem = "must be a string"
        elif kind == "number":
            problem = _number_problem(value, rule)
        if problem:
            return f"{key} {problem} (got {json.dumps(value)})"
    return None
