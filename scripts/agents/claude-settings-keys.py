"""Writes server/memlens/data/claude-settings-keys.json: the top-level keys of Claude Code's
settings files whose value has a simple type (boolean, string, number), read
from the schema inside the installed Claude Code (its native binary carries the bundled
JavaScript). Claude Code ignores a whole settings file when one of these keys has a value of
another type (tests/conformance/test_claude_memory.py has such trees), so Memory Lens needs
the list to say which settings files count.

    python scripts/agents/claude-settings-keys.py [VERSION]   (default: the pinned 2.1.330)

Only facts are kept (key → type); keys whose schema is an object, an array, a union or a list
of words are left out (a wrong value there is not detected), as are the keys Claude Code
salvages (`.catch`).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "server" / "memlens" / "data" / "claude-settings-keys.json"


def bundle_texts(version: str) -> list[str]:
    """Every `return{$schema:()=>…` object literal of the bundle (the settings schema is one)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    binary = (cache / "memlens" / "agents" / f"claude-{version}" / "node_modules" /
              "@anthropic-ai" / "claude-code" / "bin" / "claude.exe")
    data = binary.read_bytes()
    starts = [m.start() for m in re.finditer(rb"return\{\$schema:\(\)=>", data)]
    return [data[i + len("return"):i + 2_000_000].decode("utf-8", "replace") for i in starts]


def entries(text: str) -> list[str]:
    """The top-level `key:()=>schema` entries of the object literal `text` starts with."""
    i = text.index("{")
    depth, quote, escaped, begin, out = 0, "", False, i + 1, []
    while i < len(text):
        c = text[i]
        if quote:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = ""
        elif c in "\"'`":
            quote = c
        elif c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
            if depth == 0:
                out.append(text[begin:i])
                return out
        elif c == "," and depth == 1:
            out.append(text[begin:i])
            begin = i + 1
        i += 1
    raise ValueError("the settings schema does not end")


# Keys whose type is known, to learn the minified names of the schema builders (they change
# from one build to the next).
ANCHORS = {"autoMemoryEnabled": "boolean", "autoMemoryDirectory": "string",
           "cleanupPeriodDays": "number"}


def simple_type(schema: str, builders: dict[str, str]) -> dict[str, object] | None:
    head = schema.split(".optional()")[0]
    builder = re.match(r"([\w$]+)\(", schema)
    kind = builders.get(builder.group(1)) if builder else None
    if kind in ("boolean", "string") and re.fullmatch(r"[\w$]+\(\)", head):
        return {"type": kind}
    if kind == "number":
        found: dict[str, object] = {"type": "number"}
        if ".int()" in head:
            found["integer"] = True
        if ".positive()" in head:
            found["minimum_exclusive"] = 0
        if ".nonnegative()" in head:
            found["minimum"] = 0
        for name, key in (("min", "minimum"), ("max", "maximum")):
            bound = re.search(rf"\.{name}\((-?\d+(?:\.\d+)?)\)", head)
            if bound:
                found[key] = float(bound.group(1))
        return found
    return None


def settings_schema(version: str) -> dict[str, str]:
    """key → schema text of Claude Code's settings (the literal holding the anchors)."""
    for text in bundle_texts(version):
        found = {}
        for entry in entries(text):
            match = re.match(r"(\$?\w+):\(\)=>(.*)$", entry, re.S)
            if match:
                found[match.group(1)] = match.group(2)
        if all(key in found for key in ANCHORS):
            return found
    raise ValueError(f"Claude Code {version}: no settings schema with {', '.join(ANCHORS)}")


def main() -> int:
    version = sys.argv[1] if len(sys.argv) > 1 else "2.1.330"
    schema = settings_schema(version)
    builders = {}
    for key, kind in ANCHORS.items():
        builder = re.match(r"([\w$]+)\(", schema[key])
        if builder is None:
            raise ValueError(f"{key}: no builder in {schema[key][:40]!r}")
        builders[builder.group(1)] = kind
    keys = {key: found for key, text in schema.items()
            if (found := simple_type(text, builders)) is not None}
    OUTPUT.write_text(json.dumps({"claudeCode": version, "keys": dict(sorted(keys.items()))},
                                 indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{OUTPUT.relative_to(ROOT)}: {len(keys)} keys from Claude Code {version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
