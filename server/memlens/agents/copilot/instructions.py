"""Copilot CLI's `*.instructions.md` files: their frontmatter (`applyTo`, `description`,
`excludeAgent`) read as Copilot CLI 1.0.102 reads it, and its `applyTo` globs.

What the real CLI does (each point seen in its requests, tests/conformance/scenarios/copilot.yaml):

* The frontmatter is the text between a first line `---` and the next line `---` (CRLF read
  as LF; `--- text` does not close it). It is read as YAML (a duplicate key is an error);
  `applyTo` (or `paths`) is a string of comma-separated globs or a list of them (a comma in
  braces, in a class or after a `\\` does not separate: `a\\,b` is one glob);
  `excludeAgent` a string or a list; in a list only the strings count (`[5, "x"]` is `x`),
  each a glob as written (not split, not trimmed: `[""]` is a glob that matches nothing).
  A mapping may be a key (`applyTo: {a,{b,c}}` is a mapping: no globs). When the YAML does
  not load (`applyTo: *.py` is an undefined alias to YAML), the first line `applyTo: VALUE`
  (or `paths: VALUE`) is used, its `# comment` and quotes dropped, and `excludeAgent` and
  `description` are not read.
* A file with no globs, or only `**`, `**/*` or `*`, applies always: its text (frontmatter and all)
  goes into the system message; the others are listed in a table and sent when a tool touches
  a path they match. `excludeAgent` naming `coding-agent` (exactly: not ` coding-agent`, not
  `Coding-Agent`, not `coding-agent, x`) keeps the file from the CLI.
* Globs match the path relative to the repository root, or the file's name alone,
  case-sensitively (so a glob without `/` matches a file name at any depth); `./` is dropped;
  how a glob reads (`**`, braces, `\\`, classes) is in `globs.py`; a glob that does not parse
  (`[`, `a}`) matches nothing. A glob starting `!` is the opposite of the rest: it holds when
  the rest fails on the path or on the name (`!**/*.test.ts` applies to `x.py`; `!src/**` to
  `src/a.py`, whose name is not under `src/`); `!!` negates that again. A file applies when
  one of its globs holds.
* `description` is shown in the table with each line break as a space, trimmed; in the table's
  cells (the globs, the path, the description) `\\` is written `\\\\` and `|` `\\|`.
"""

from __future__ import annotations

import copy
import functools
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memlens.agents.copilot.globs import glob_parts
from memlens.files import tree
from memlens.files.globs import bounded, compiled, full_match
from memlens.files.structured import (
    MAX_DEPTH,
    MAX_YAML_CHARS,
    StructuredDataError,
    parse_yaml_with,
)

SUFFIX = ".instructions.md"
THIS_AGENT = "coding-agent"  # the excludeAgent value that keeps a file from the CLI
ALWAYS_GLOBS = ("**", "**/*", "*")  # globs that match every file
_FRONTMATTER = re.compile(r"^---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
# The fallback's looser block: any line starting `---` closes it.
_LOOSE_FRONTMATTER = re.compile(r"^---[ \t]*\n(.*?)\n---", re.DOTALL)
_KEY_LINE = {key: re.compile(rf"(?m)^{key}:[ \t]+(.*)") for key in ("applyTo", "paths")}
_COMMENT = re.compile(r"\s+#.*$")
# The items of the lists and mappings used as keys in one frontmatter, aliases counted as often
# as they are used: past it, the block is read as no YAML (no key compared at length).
MAX_KEY_ITEMS = 10_000


@dataclass
class Frontmatter:
    present: bool = False  # a `---` block opens the file
    yaml_error: str | None = None  # the block is not YAML Copilot reads (it falls back)
    yaml_line: int = 1  # 1-based line of the error in the file
    # The block is past what Memory Lens reads (files/structured.py `MAX_YAML_CHARS`): the
    # file is shown as the fallback reads it, which Copilot CLI may not do.
    yaml_too_large: bool = False
    globs: list[str] = field(default_factory=list)
    raw_apply_to: str | None = None  # as written, for the table ("src/*.py, **/*.md")
    description: str | None = None
    exclude_agents: list[str] = field(default_factory=list)

    @property
    def excluded(self) -> bool:
        return THIS_AGENT in self.exclude_agents

    @property
    def always(self) -> bool:
        return not self.globs or all(g in ALWAYS_GLOBS for g in self.globs)


def split_globs(value: str) -> list[str]:
    """Comma-separated globs, a comma inside `{}` or `[]` kept (after an unclosed `[` the rest
    is one glob); `\\` takes the next character with it (`a\\,b` is one glob, `\\{` opens no
    braces; in a class `\\` is itself); each trimmed, blanks dropped."""
    parts, depth, current, at = [], 0, "", 0
    while at < len(value):
        char = value[at]
        if char == "\\":
            current += value[at:at + 2]
            at += 2
            continue
        if char == "[":
            end = value.find("]", at + 2 if value[at + 1:at + 2] in ("!", "^") else at + 1)
            end = len(value) - 1 if end < 0 else end
            current += value[at:end + 1]
            at = end + 1
            continue
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
        at += 1
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _strings(value: object) -> list[str] | None:
    """A string, or the strings of a list (its other items left out: `[5, "x"]` is `x`)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return None


def _untagged(constructor: Any, node: Any) -> object:
    """A node under a tag Copilot CLI does not know (`applyTo: !*`, `!foo [x]`, `!!binary`) read
    as if it had none: `!*` alone is empty (the file applies always), `!foo x.txt` is `x.txt`."""
    from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if isinstance(node, SequenceNode):
        return constructor.construct_sequence(node, deep=True)
    if isinstance(node, MappingNode):
        return constructor.construct_mapping(node, deep=True)
    if isinstance(node, ScalarNode):
        node.tag = constructor.resolver.resolve(ScalarNode, node.value, (True, False))
        if node.tag in constructor.yaml_constructors and node.tag != _BINARY:
            return constructor.yaml_constructors[node.tag](constructor, node)
        return node.value
    return None


_BINARY = "tag:yaml.org,2002:binary"


def _load_yaml(text: str) -> object:
    """The block as Copilot CLI's YAML reads it. Every view of a run asks again for the same
    file, and a parse in pure Python costs up to a second for a large block: each block (within
    the bound: a larger one is refused before parsing) is parsed once, and each caller gets
    its own copy."""
    if len(text) > MAX_YAML_CHARS:
        return _parse_yaml(text)
    value, error = _parsed_once(text)
    if error is not None:
        raise StructuredDataError(error.message, line=error.line, column=error.column,
                                  problem=error.problem, bound=error.bound)
    return copy.deepcopy(value)


@functools.lru_cache(maxsize=256)
def _parsed_once(text: str) -> tuple[object, StructuredDataError | None]:
    try:
        return _parse_yaml(text), None
    except StructuredDataError as error:
        return None, error.with_traceback(None)


def _parse_yaml(text: str) -> object:
    from ruamel.yaml import YAML

    reader = YAML(typ="safe", pure=True)
    reader.allow_duplicate_keys = False
    reader.max_depth = MAX_DEPTH
    reader.Constructor = _tolerant_constructor()
    return parse_yaml_with(reader.load, text)


@functools.cache
def _tolerant_constructor() -> Any:
    """ruamel's safe constructor, as its own class (its `add_constructor` changes the class it
    is called on: other readers keep refusing unknown tags), reading tagged nodes untagged."""
    from ruamel.yaml.constructor import SafeConstructor

    class Tolerant(SafeConstructor):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            """A mapping as Copilot CLI reads it: a key may be a mapping (`{a,{b,c}}`: `{b,c}`
            is a key) or a list holding one; `true`, `1` and `1.0` are three keys (equal ones
            are a duplicate); `<<` is a key like any other (nothing is merged)."""
            from ruamel.yaml.constructor import ConstructorError
            from ruamel.yaml.nodes import MappingNode

            if not isinstance(node, MappingNode):
                raise ConstructorError(None, None, f"expected a mapping, found {node.id}",
                                       node.start_mark)
            mapping: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                budget = self.__dict__.setdefault("key_items_left", [MAX_KEY_ITEMS])
                key = _hashable(self.construct_object(key_node, deep=True), budget)
                value = self.construct_object(value_node, deep=deep)
                if self.check_mapping_key(node, key_node, mapping, key, value):
                    mapping[key] = value
            return mapping

    Tolerant.add_constructor(None, _untagged)
    Tolerant.add_constructor(_BINARY, _untagged)
    for tag, read in ((_INT, _int), (_FLOAT, _float), (_TIMESTAMP, _scalar_text),
                      (_STR, _str)):
        Tolerant.add_constructor(tag, read)
    return Tolerant


# Plain scalars Copilot CLI reads otherwise than YAML 1.2's core schema does.
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_TIMESTAMP, _STR = "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:str"
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+")  # `012`: text, not a number
# A number with a point or an exponent as the CLI reads one (`.5e3` too; `1_0.5` is text).
_POINT_NUMBER = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def _scalar_text(constructor: Any, node: Any) -> str:
    return str(constructor.construct_scalar(node))


def _int(constructor: Any, node: Any) -> object:
    """An integer, but `1_000` and `012` are text (a date too: `_scalar_text`)."""
    text = _scalar_text(constructor, node)
    if "_" in text or _LEADING_ZERO.fullmatch(text):
        return text
    return constructor.construct_yaml_int(node)


def _float(constructor: Any, node: Any) -> object:
    text = _scalar_text(constructor, node)
    return text if "_" in text else constructor.construct_yaml_float(node)


def _str(constructor: Any, node: Any) -> object:
    """Text, but a plain `.5e3` is a number."""
    text = _scalar_text(constructor, node)
    if node.style is None and "." in text and _POINT_NUMBER.fullmatch(text):
        return float(text)
    return text


@dataclass(frozen=True)
class _TypedKey:
    """A boolean or a number with a point as a key: not equal to the integer it equals."""

    kind: str
    value: object


@dataclass(frozen=True)
class _MappingKey:
    """A mapping used as a key: its items, in any order (`{a: 1, b: 2}` is `{b: 2, a: 1}`)."""

    items: frozenset[tuple[object, object]]


def _hashable(value: object, left: list[int]) -> object:
    """`value` as a dictionary key: a list as a tuple, a mapping as a `_MappingKey`; each item
    taken from `left[0]`. ValueError: none left (aliases repeating a part)."""

    def convert(item: object) -> object:
        left[0] -= 1
        if left[0] < 0:
            raise ValueError("a key too large to compare")
        if isinstance(item, list):
            return tuple(convert(v) for v in item)
        if isinstance(item, dict):
            return _MappingKey(frozenset((convert(k), convert(v)) for k, v in item.items()))
        return _typed(item)

    return convert(value) if isinstance(value, (list, dict)) else _typed(value)  # a scalar: free


def _typed(value: object) -> object:
    if isinstance(value, (bool, float)):
        return _TypedKey(type(value).__name__, value)
    return value


def _unquote(value: str) -> str:
    """The fallback's value: quotes around the whole of it dropped first, then a `# comment`
    (so `"x" # note` keeps its quotes, as Copilot CLI reads it)."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return _COMMENT.sub("", value).strip()


def parse_frontmatter(text: str) -> Frontmatter:
    text = text.replace("\ufeff", "").replace("\r\n", "\n")
    match = _FRONTMATTER.match(text)
    loose = _LOOSE_FRONTMATTER.match(text)
    if not match and not loose:
        return Frontmatter()
    front = Frontmatter(present=True)
    data: object = None
    if match:
        try:
            data = _load_yaml(match.group(1) + "\n")
        except StructuredDataError as error:
            front.yaml_error = error.message
            front.yaml_line = 2 + _error_line(error)
            front.yaml_too_large = error.bound
    else:
        front.yaml_error = "the frontmatter has no closing `---` line of its own"
        front.yaml_line = 1
    found = loose or match
    block = found.group(1) if found else ""
    if isinstance(data, dict):
        values = data.get("applyTo", data.get("paths"))
        if isinstance(values, str):
            front.globs = split_globs(values)
            front.raw_apply_to = ", ".join(front.globs)
        elif isinstance(values, list):  # each string a glob as it stands: `[" a, b"]` is one
            front.globs = _strings(values) or []
            front.raw_apply_to = ", ".join(front.globs)
        description = data.get("description")
        if isinstance(description, str):
            front.description = description
        front.exclude_agents = _strings(data.get("excludeAgent")) or []  # as written, untrimmed
        return front
    if front.yaml_error is None:
        return front  # YAML, but not a mapping: nothing is read from it
    for pattern in _KEY_LINE.values():
        line = pattern.search(block)
        if line:
            front.globs = split_globs(_unquote(line.group(1)))
            front.raw_apply_to = ", ".join(front.globs)
            break
    return front


def _error_line(error: StructuredDataError) -> int:
    found = re.search(r"line (\d+)", error.message)
    return int(found.group(1)) - 1 if found else 0


# ------------------------------------------------------------------------------- globs


def glob_pattern(glob: str) -> str | None:
    """The regular expression of one `applyTo` glob (its `!` left out) on a relative path: the
    glob matches the path or the path's name; None: it does not parse (`globs.py`)."""
    parts = glob_parts(glob)
    return None if parts is None else f"(?s)(?:{parts[0][4:]}|{parts[1][4:]})"


def glob_regex(glob: str) -> Any | None:
    """One `applyTo` glob compiled (by RE2, `memlens.files.globs`); None: it does not parse."""
    pattern = glob_pattern(glob)
    return None if pattern is None else compiled(pattern)


def _negated(glob: str) -> bool:
    """An odd number of leading `!` negates (`!!x.txt` is `x.txt`)."""
    return (len(glob) - len(glob.lstrip("!"))) % 2 == 1


def glob_matches(glob: str, relative: str) -> bool:
    """One glob on a path relative to the repository root: the glob matches the path or its
    name; a `!glob` holds when its rest fails on either (one that does not parse: never)."""
    parts = glob_parts(glob)
    if parts is None:
        return False
    on_path, on_name = parts
    if _negated(glob):
        return not full_match(on_path, relative) or not full_match(on_name, relative)
    return full_match(f"(?s)(?:{on_path[4:]}|{on_name[4:]})", relative)


def globs_match(globs: list[str], root: str, target: str) -> bool:
    """`target` (absolute) relative to `root` matches one of `globs` (those
    `memlens.files.globs.bounded` keeps)."""
    relative = posixpath.relpath(target, root)
    if relative == "." or relative == ".." or relative.startswith("../"):
        return False
    return any(glob_matches(g, relative) for g in bounded(globs))


# ------------------------------------------------------------------------------- files


def is_instructions(name: str) -> bool:
    """`*.instructions.md`, in any case (Copilot CLI reads `x.Instructions.md` too)."""
    return name.lower().endswith(SUFFIX) and len(name) > len(SUFFIX)


def instruction_files(folder: str, *, limit: int = 2000, suffix: str = SUFFIX) -> Iterator[str]:
    """`*.instructions.md` files under `folder` at any depth, dot-folders skipped, in order of
    their path's names (links to files followed; a link to a folder is not entered)."""
    import os

    found: list[str] = []
    stack = [folder]
    while stack and len(found) < limit:
        current = stack.pop()
        if tree.active():  # the run's listing (files/tree.py)
            try:
                listed = tree.listing(current).entries
            except OSError:
                continue
            for name, kind in listed:
                if kind == tree.DIR:
                    if not name.startswith("."):
                        stack.append(os.path.join(current, name))
                elif (is_instructions(name) if suffix == SUFFIX
                      else name.lower().endswith(suffix)) and kind in tree.FILES:
                    found.append(os.path.join(current, name))
            continue
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith("."):
                        stack.append(entry.path)
                elif (is_instructions(entry.name) if suffix == SUFFIX
                      else entry.name.lower().endswith(suffix)) and entry.is_file():
                    found.append(entry.path)
            except OSError:
                continue
    # by path, folder by folder: `a/b/x` before `a-b` (a walk of sorted entries)
    yield from sorted(found, key=lambda p: posixpath.relpath(p, folder).split("/"))
