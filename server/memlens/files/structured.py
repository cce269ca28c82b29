"""One way to read structured data someone else wrote: YAML, JSON (with comments, as Gemini
CLI's settings allow) and TOML from repositories, HOME and PATH.

Such a file may be hostile: a settings.json nested 100,000 deep, a FIFO named
`package.json`, frontmatter nesting 600 flow sequences. Every reader here

- opens regular files only (`O_NONBLOCK`, then `fstat` of the open descriptor: a FIFO,
  socket or device is refused and never blocks), and reads at most `MAX_FILE_BYTES`;
- refuses a YAML text over `MAX_YAML_CHARS` (64 KiB: frontmatter, parsed in pure Python) and a
  JSON text over `MAX_TEXT_CHARS` before parsing it;
- refuses a text nested deeper than `MAX_DEPTH` before (JSON) or while (YAML) parsing it, and
  checks the parsed value's depth again, so no caller recurses without bound either;
- turns every failure of the parser — its own errors, `RecursionError`, `MemoryError`, any
  other exception — into one `StructuredDataError` whose message names the problem, which the
  caller reports as the file's diagnostic.

Nothing else in the engine calls `json.load`, `yaml.load` or `tomllib` on what others supply.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from memlens.files.fsread import read_at_most

if TYPE_CHECKING:
    import yaml

MAX_DEPTH = 100  # nesting levels (mappings and lists): no memory setting comes near
MAX_FILE_BYTES = 4 * 1024 * 1024  # a settings file, a manifest, a config.toml
MAX_TEXT_CHARS = 4 * 1024 * 1024  # a JSON text handed over already read
# A YAML text (always a file's frontmatter): the pure-Python parsers read about 100 KB a
# second, so a 4 MB frontmatter costs a minute per parse, and each agent's view parses it
# again. Real frontmatter is a few hundred bytes; a larger block is refused with a diagnostic.
MAX_YAML_CHARS = 64 * 1024

T = TypeVar("T")


class StructuredDataError(ValueError):
    """A file or text that cannot be read as the data it should hold; `message` says why in
    words fit for a diagnostic. `line` and `column` (0-based) when the parser knows where."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None,
                 problem: str | None = None, bound: bool = False) -> None:
        super().__init__(message)
        self.message = message
        # True when a bound refused it (nested too deeply, too large, out of memory, the
        # parser's own recursion), not a syntax error the agent itself would also meet.
        self.bound = bound
        self.line = line
        self.column = column
        # The parser's own words for the problem (PyYAML's `problem`), when it gave them.
        self.problem = problem or message


# --- reading the bytes ------------------------------------------------------------------------
def read_text(path: str, *, max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """The UTF-8 text of the regular file `path`; None when there is no such file.
    StructuredDataError when it is not a regular file, cannot be read, is larger than
    `max_bytes` or is not UTF-8."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except (OSError, ValueError) as err:
        raise StructuredDataError(f"cannot be read ({_reason(err)})") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise StructuredDataError("is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise StructuredDataError("is not a regular file (a FIFO, socket or device): "
                                      "never opened for reading", bound=True)
        if info.st_size > max_bytes:
            raise StructuredDataError(f"is larger than {max_bytes} bytes: not read", bound=True)
        data = read_at_most(fd, max_bytes + 1)
    except OSError as err:
        raise StructuredDataError(f"cannot be read ({_reason(err)})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise StructuredDataError(f"is larger than {max_bytes} bytes: not read", bound=True)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise StructuredDataError(f"is not valid UTF-8 (byte {err.start})") from None


def too_deep(max_depth: int = MAX_DEPTH) -> StructuredDataError:
    return StructuredDataError(f"is nested too deeply (over {max_depth} levels)",
                               problem=f"nested more than {max_depth} levels deep", bound=True)


def _reason(err: OSError | ValueError) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err) or type(err).__name__


# --- the guard every parser runs in -------------------------------------------------------------
def guarded(parse: Callable[[], T], *, max_depth: int = MAX_DEPTH) -> T:
    """`parse()`'s value, or StructuredDataError: for any exception it raises (RecursionError
    and MemoryError included), and for a value nested deeper than `max_depth`."""
    try:
        value = parse()
    except StructuredDataError:
        raise
    except RecursionError:
        raise too_deep(max_depth) from None
    except MemoryError:
        raise StructuredDataError("is too large to read (out of memory)", bound=True) from None
    except Exception as err:  # every parser's own errors, whatever their class
        # PyYAML is imported by the first YAML parse (a command reading none never loads it)
        yaml_module = sys.modules.get("yaml")
        if yaml_module is not None and isinstance(err, yaml_module.MarkedYAMLError):
            mark = err.problem_mark
            problem = err.problem or str(err).splitlines()[0]
            raise StructuredDataError(f"is not valid YAML: {problem}",
                                      line=mark.line if mark else None,
                                      column=mark.column if mark else None,
                                      problem=problem) from None
        first = str(err).strip().splitlines()
        raise StructuredDataError(f"cannot be parsed: {first[0] if first else type(err).__name__}"
                                  ) from None
    if _deeper_than(value, max_depth):
        raise too_deep(max_depth)
    return value


def _deeper_than(value: object, limit: int) -> bool:
    """Whether `value` nests dicts and lists more than `limit` deep (iteratively: a value the
    parser built may be deeper than Python's recursion limit). An alias that repeats a node is
    looked at once."""
    stack: list[tuple[object, int]] = [(value, 0)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            if id(item) in seen:
                continue
            seen.add(id(item))
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _check_size(text: str, max_chars: int = MAX_TEXT_CHARS) -> None:
    if len(text) > max_chars:
        raise StructuredDataError(f"is larger than {max_chars} characters: not read",
                                  bound=True)


# --- JSON ---------------------------------------------------------------------------------------
_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*[\s\S]*?\*/')
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def strip_json_comments(text: str) -> str:
    """`//` and `/* */` comments outside strings removed (Gemini CLI's strip-json-comments)."""
    return _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


_JSON_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"?|[\[\]{}]')


def json_depth_over(text: str, limit: int = MAX_DEPTH) -> bool:
    """Whether brackets outside strings nest more than `limit` deep: a linear scan run before
    the (recursive) parser ever sees the text."""
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        char = match.group(0)
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def parse_json(text: str, *, comments: bool = False, max_depth: int = MAX_DEPTH,
               max_chars: int = MAX_TEXT_CHARS) -> Any:
    """`text` as JSON (`comments`: with comments and trailing commas, as Gemini CLI's settings
    files allow). StructuredDataError when it is not."""
    _check_size(text, max_chars)
    if comments:
        text = _TRAILING_COMMA.sub(r"\1", strip_json_comments(text))
    if json_depth_over(text, max_depth):
        raise too_deep(max_depth)

    def load() -> Any:
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise StructuredDataError(f"is not valid JSON: {err.msg} (line {err.lineno}, "
                                      f"column {err.colno})", line=err.lineno - 1,
                                      column=err.colno - 1, problem=err.msg) from None

    return guarded(load, max_depth=max_depth)


def load_json_file(path: str, *, comments: bool = False, max_bytes: int = MAX_FILE_BYTES
                   ) -> Any:
    """The JSON in the regular file `path`; None when there is no such file.
    StructuredDataError when it cannot be read or parsed."""
    text = read_text(path, max_bytes=max_bytes)
    if text is None:
        return None
    return parse_json(text, comments=comments, max_chars=max_bytes)


def json_file_or_none(path: str, *, comments: bool = False, max_bytes: int = MAX_FILE_BYTES
                      ) -> Any:
    """`load_json_file`, None for every failure too (for files whose problems are nobody's to
    report: a cache, a manifest that only decides a version)."""
    try:
        return load_json_file(path, comments=comments, max_bytes=max_bytes)
    except StructuredDataError:
        return None


# --- YAML ---------------------------------------------------------------------------------------
_BOUNDED: dict[tuple[type[yaml.SafeLoader], int], type[yaml.SafeLoader]] = {}


def bounded_loader(base: type[yaml.SafeLoader] | None = None,
                   max_depth: int = MAX_DEPTH) -> type[yaml.SafeLoader]:
    """`base` (a PyYAML loader class; SafeLoader when None), refusing to compose nodes nested
    deeper than `max_depth`: the composer is recursive, so depth is checked before it
    recurses."""
    import yaml

    base = base or yaml.SafeLoader
    known = _BOUNDED.get((base, max_depth))
    if known is not None:
        return known

    class Bounded(base):  # type: ignore[valid-type,misc]
        _depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self._depth += 1
            try:
                if self._depth > max_depth:
                    raise too_deep(max_depth)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    Bounded.__name__ = Bounded.__qualname__ = f"Bounded{base.__name__}"
    _BOUNDED[(base, max_depth)] = Bounded
    return Bounded


def parse_yaml(text: str, loader: type[yaml.SafeLoader] | None = None) -> Any:
    """`text` as YAML through PyYAML's `loader` (a SafeLoader or a subclass; SafeLoader when
    None), depth-bounded. StructuredDataError (with PyYAML's mark and problem when it gave
    one) when it is not."""
    import yaml

    _check_size(text, MAX_YAML_CHARS)
    bounded = bounded_loader(loader)
    return guarded(lambda: yaml.load(text, Loader=bounded))


def parse_yaml_with(load: Callable[[str], T], text: str) -> T:
    """`load(text)` for another YAML library (ruamel.yaml, set up by the caller with its own
    depth limit), in the same guard."""
    _check_size(text, MAX_YAML_CHARS)
    return guarded(lambda: load(text))


# --- TOML ---------------------------------------------------------------------------------------
def load_toml_file(path: str, *, max_bytes: int = MAX_FILE_BYTES) -> dict[str, Any] | None:
    """The TOML table in the regular file `path`; None when there is no such file.
    StructuredDataError when it cannot be read or parsed."""
    import tomllib  # only Codex's settings are TOML

    text = read_text(path, max_bytes=max_bytes)
    if text is None:
        return None
    def load() -> dict[str, Any]:
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise StructuredDataError(f"is not valid TOML: {err}") from None

    return guarded(load)
