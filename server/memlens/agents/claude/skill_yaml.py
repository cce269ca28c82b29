"""YAML as Claude Code's reader loads a SKILL.md's frontmatter (YAML 1.2's core schema; seen in
its skills listing on 2.1.330: tests/conformance/skills/cases.yaml `claude-skills-scalars`):

* only ``true``/``false`` (and their capitalised forms) are booleans: ``yes``, ``on``, ``No``
  stay text; ``~``, ``null`` and nothing are null;
* integers are decimal (``010`` is ten), ``0o17`` and ``0x10``; floats as YAML 1.2 writes them
  (``1e3``, ``-.5``, ``.inf``); ``1_000``, ``0b101``, ``12:30`` and dates stay text;
* a tag it does not know (``!custom x``, ``!!binary``) leaves the value as written;
* U+0085, U+2028 and U+2029 are characters, not line breaks, and control characters load as
  they are.

Numbers are then written back as JavaScript's ``String`` writes them (``js_text``).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from functools import cache
from typing import Any

_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")

# What PyYAML refuses or takes for a line break but the core schema's reader loads as text:
# shielded as private-use characters of plane 15 (never in a SKILL.md we shield) and put back.
_SHIELDED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]")
_SHIELD = 0xF0000
_UNSHIELD = re.compile("[\U000f0000-\U000f00ff\U000f2028\U000f2029\U000ffffe\U000fffff]")


@cache
def _loader() -> type[Any]:
    import yaml

    from memlens.files.structured import bounded_loader

    class CoreSchema(yaml.SafeLoader):
        pass

    CoreSchema.yaml_implicit_resolvers = {}
    for tag, pattern, first in (
            ("bool", _BOOL, "tTfF"), ("null", _NULL, ["~", "n", "N", ""]),
            ("int", _INT, "-+0123456789"), ("float", _FLOAT, "-+0123456789.")):
        CoreSchema.add_implicit_resolver(f"tag:yaml.org,2002:{tag}", pattern, list(first))

    def integer(loader: Any, node: Any) -> int:
        text = loader.construct_scalar(node)
        if text.startswith(("0o", "0x")):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text)

    def floating(loader: Any, node: Any) -> float:
        text = str(loader.construct_scalar(node)).lower()
        if text.endswith(".nan"):
            return math.nan
        if text.endswith(".inf"):
            return -math.inf if text.startswith("-") else math.inf
        return float(text)

    def as_written(loader: Any, suffix: Any, node: Any = None) -> Any:
        node = suffix if node is None else node
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node)
        return loader.construct_scalar(node)

    CoreSchema.add_constructor("tag:yaml.org,2002:int", integer)
    CoreSchema.add_constructor("tag:yaml.org,2002:float", floating)
    for tag in ("binary", "timestamp", "omap", "pairs", "set"):
        CoreSchema.add_constructor(f"tag:yaml.org,2002:{tag}", as_written)
    CoreSchema.add_constructor(None, as_written)
    return bounded_loader(CoreSchema)


def _shield(text: str) -> str:
    return _SHIELDED.sub(lambda m: chr(_SHIELD + ord(m.group(0))), text)


def _unshield(value: Any) -> Any:
    if isinstance(value, str):
        return _UNSHIELD.sub(lambda m: chr(ord(m.group(0)) - _SHIELD), value)
    if isinstance(value, dict):
        return {_unshield(k): _unshield(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshield(v) for v in value]
    return value


def load(text: str) -> Any:
    """`text` loaded as Claude Code loads frontmatter; ValueError when it is not YAML (or
    cannot be read: nested too deeply, too large)."""
    from memlens.files.structured import StructuredDataError, parse_yaml

    if _UNSHIELD.search(text):
        raise ValueError("holds the private-use characters the shield uses")
    try:
        data = parse_yaml(_shield(text), _loader())
    except StructuredDataError:
        raise ValueError("not YAML") from None
    return _unshield(data)


def js_number(value: float) -> str:
    """`String(value)` in JavaScript."""
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) <= 2**53:
            return str(value)
        value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    if 1e-6 <= abs(value) < 1e21:
        return format(Decimal(repr(value)), "f")
    mantissa, _, exponent = repr(value).partition("e")
    power = int(exponent)
    return f"{mantissa}e{'+' if power > 0 else '-'}{abs(power)}"


def js_text(value: Any) -> str:
    """`String(value)` in JavaScript for what YAML loads."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, list):
        return ",".join("" if v is None else js_text(v) for v in value)
    return "[object Object]"
