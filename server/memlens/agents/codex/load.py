"""Codex CLI 0.169's start-up load (docs/reference.md "Which agent, which version", profile
`codex@0.169`; the agent is `agent.py`).

Codex sends its memory once, at start, as one user message:

    # AGENTS.md instructions for CWD\n\n<INSTRUCTIONS>\n{instructions}\n</INSTRUCTIONS>

(without ` for CWD` when no project doc is sent, only the global file). `{instructions}` is
the global file (`$CODEX_HOME/AGENTS.override.md`, else `AGENTS.md`: the first that is not
blank, trimmed, bad UTF-8 read as U+FFFD) then, after `\n\n--- project-doc ---\n\n`, the
project docs joined by `\n\n`: from the project root (the nearest folder from the working
folder up holding one of `project_root_markers`, default `.git`; without one, or with the list
empty, only the working folder) down to the working folder, in each folder the first of
`AGENTS.override.md`, `AGENTS.md` and the configured fallback names (trimmed; a name with a
slash, `.` or `..` is ignored) that is a file, links followed (an empty override still hides
`AGENTS.md`; a dangling link or a folder by that name does not). An untrusted working folder
(`[projects."PATH"] trust_level = "untrusted"` for it, else for its repository) gets no project
doc; a trusted one also reads its project's `.codex/config.toml` layers (never for the root
markers). A `config.toml` Codex cannot load (bad TOML, a memory key or trust level of the
wrong type) stops it at start: nothing is sent. The project docs share a byte budget
(`project_doc_max_bytes`, 32 KiB): a file is cut at raw bytes (a split character becomes
U+FFFD) and those after the budget is spent are lost. A blank doc is skipped and costs nothing.
File names are not sent, there are no includes, and nothing loads later. Each rule was checked
against the real agent (tests/conformance/scenarios/codex.yaml, codex_refused.yaml and
differential/regressions_codex.yaml); Codex's own source (codex-rs `project_doc.rs`) says
an unreadable doc (not missing) drops every project doc, which no scenario checks (as root).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field

from memlens.agents.environment import env_value
from memlens.files.fsread import FileReader, ReadKind
from memlens.files.nodecompat import dirname
from memlens.files.structured import StructuredDataError, load_toml_file

OVERRIDE_NAME = "AGENTS.override.md"
DEFAULT_NAME = "AGENTS.md"
FILE_NAMES = (OVERRIDE_NAME, DEFAULT_NAME)
DEFAULT_MAX_BYTES = 32 * 1024
PROJECT_DOC_SEPARATOR = "\n\n--- project-doc ---\n\n"
CONFIG_NAME = "config.toml"
HEAD = "# AGENTS.md instructions"

# What Rust's `str::trim` removes: the Unicode White_Space characters (not U+FEFF, and not the
# information separators U+001C..U+001F that Python's `str.strip` also removes).
_RUST_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def rust_trim(text: str) -> str:
    return text.strip(_RUST_WHITESPACE)


HOME_ENV = "CODEX_HOME"


def codex_home(home: str) -> str:
    """`$CODEX_HOME` (an empty value counts as unset, as Codex reads it), else HOME/.codex;
    read through `env_value`, so `memlens verify` predicts its run with the run's value."""
    return env_value(HOME_ENV) or posixpath.join(home, ".codex")


@dataclass
class CodexConfig:
    max_bytes: int = DEFAULT_MAX_BYTES
    fallback_names: list[str] = field(default_factory=list)
    # project_root_markers (None: the default, `.git`; [] : only the working folder)
    root_markers: list[str] | None = None
    # [projects."PATH"] trust_level, by the path as written
    trust: dict[str, str] = field(default_factory=dict)
    # why Codex refuses to start with this config.toml (None: it starts)
    error: str | None = None

    def candidate_names(self) -> list[str]:
        """AGENTS.override.md, AGENTS.md, then the fallback names Codex accepts: trimmed
        (Rust's trim), blank ones dropped, a name with a slash or a NUL, `.` and `..` ignored
        (not a file name), duplicates once."""
        names = list(FILE_NAMES)
        for name in self.fallback_names:
            name = rust_trim(name)
            if not name or name in (".", "..") or "/" in name or "\0" in name:
                continue
            if name not in names:
                names.append(name)
        return names

    @property
    def markers(self) -> list[str]:
        return [".git"] if self.root_markers is None else self.root_markers


_TRUST_LEVELS = ("trusted", "untrusted")


def _string_list(data: dict[str, object], key: str) -> tuple[list[str] | None, str | None]:
    """A key that must be an array of strings: (value, None), (None, None) when absent, or
    (None, why Codex refuses it)."""
    if key not in data:
        return None, None
    value = data[key]
    if not isinstance(value, list):
        return None, f"{key} must be an array of strings"
    if not all(isinstance(item, str) for item in value):
        return None, f"{key} must be an array of strings"
    return [str(item) for item in value], None


def _apply_memory_keys(config: CodexConfig, data: dict[str, object], path: str,
                       *, markers: bool) -> None:
    """The memory keys of one config.toml layer over `config`; a wrongly typed one is an
    error that stops Codex (it refuses to start: `Error loading config.toml`)."""
    if "project_doc_max_bytes" in data:
        max_bytes = data["project_doc_max_bytes"]
        if isinstance(max_bytes, int) and not isinstance(max_bytes, bool) and max_bytes >= 0:
            config.max_bytes = max_bytes
        else:
            config.error = f"{path}: project_doc_max_bytes must be a non-negative integer"
    fallbacks, error = _string_list(data, "project_doc_fallback_filenames")
    if error:
        config.error = f"{path}: {error}"
    elif fallbacks is not None:
        config.fallback_names = fallbacks
    found, error = _string_list(data, "project_root_markers")
    if error:
        config.error = f"{path}: {error}"
    elif found is not None and markers:  # never from a project's own config (Codex's rule)
        config.root_markers = found


def _load_toml(path: str) -> tuple[dict[str, object] | None, str | None]:
    """(the table, None), (None, None) when there is no such file, (None, why) when Codex
    cannot read it (read through `files.structured`: a FIFO, a huge or deeply nested file is
    refused, never opened or recursed into)."""
    try:
        return load_toml_file(path), None
    except StructuredDataError as error:
        if error.message == "is a folder, not a file":
            return None, f"{path} is a folder"
        return None, f"{path}: {error.message}"


def read_config(folder: str) -> CodexConfig:
    """The memory settings of `$CODEX_HOME/config.toml` (defaults when absent); `error` says
    why Codex would not start with it (TOML it cannot parse, a memory key of the wrong type, a
    trust level other than trusted/untrusted)."""
    path = posixpath.join(folder, CONFIG_NAME)
    config = CodexConfig()
    data, config.error = _load_toml(path)
    if data is None:
        return config
    _apply_memory_keys(config, data, path, markers=True)
    projects = data.get("projects")
    if isinstance(projects, dict):
        for key, entry in projects.items():
            if not isinstance(entry, dict) or "trust_level" not in entry:
                continue
            level = entry["trust_level"]
            if level not in _TRUST_LEVELS:
                config.error = f"{path}: projects.{key}.trust_level must be trusted or untrusted"
                continue
            config.trust[str(key)] = str(level)
    elif projects is not None:
        config.error = f"{path}: projects must be a table"
    return config


def _is_git_dir(path: str) -> bool:
    """git's own test for a repository folder: HEAD, objects/ and refs/ in it."""
    return (os.path.isdir(path) and os.path.isfile(posixpath.join(path, "HEAD"))
            and os.path.isdir(posixpath.join(path, "objects"))
            and os.path.isdir(posixpath.join(path, "refs")))


def trust_root(cwd: str) -> str | None:
    """The repository whose trust entry covers `cwd`: the nearest folder up whose `.git` is a
    repository git recognises (an empty `.git` folder is not one)."""
    cursor = cwd
    while True:
        if os.path.lexists(posixpath.join(cursor, ".git")):
            return cursor if _is_git_dir(posixpath.join(cursor, ".git")) else None
        parent = dirname(cursor)
        if parent == cursor:
            return None
        cursor = parent


def effective_config(cwd: str, folder: str) -> tuple[CodexConfig, str | None]:
    """`$CODEX_HOME/config.toml` with, for a trusted working folder, the project's own
    `.codex/config.toml` layers (from the repository down to the working folder; they never
    set the root markers); and the working folder's trust level (its own entry first, else its
    repository's)."""
    config = read_config(folder)
    repo = trust_root(cwd)
    level = config.trust.get(cwd) or (config.trust.get(repo) if repo else None)
    if level == "trusted" and config.error is None:
        top = repo or cwd
        folders = [cwd]
        while folders[-1] != top and dirname(folders[-1]) != folders[-1]:
            folders.append(dirname(folders[-1]))
        for folder in reversed(folders):
            path = posixpath.join(folder, ".codex", CONFIG_NAME)
            data, error = _load_toml(path)
            if error:
                config.error = error
            elif data is not None:
                _apply_memory_keys(config, data, path, markers=False)
    return config, level


@dataclass
class CodexDoc:
    path: str
    text: str  # what is sent (cut to the budget)
    size: int  # the file's bytes
    sent_bytes: int

    @property
    def cut(self) -> bool:
        return self.sent_bytes < self.size


@dataclass
class CodexLoad:
    cwd: str
    codex_home: str
    budget: int
    global_path: str | None = None
    global_text: str = ""
    docs: list[CodexDoc] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # found but blank: nothing sent
    shadowed: list[str] = field(default_factory=list)  # hidden by a name read first
    lost: list[str] = field(default_factory=list)  # found after the budget was spent
    failed: str | None = None  # an error that makes Codex drop every project doc
    config_error: str | None = None  # Codex refuses to start: nothing is sent
    untrusted: bool = False  # the working folder is untrusted: no project doc is read

    def instructions(self) -> str:
        output = self.global_text
        if self.docs:
            if output:
                output += PROJECT_DOC_SEPARATOR
            output += "\n\n".join(d.text for d in self.docs)
        return output

    def render(self) -> str:
        if self.config_error:
            return ""
        instructions = self.instructions()
        if not instructions:
            return ""
        # "for CWD" only when project docs are sent: the global file alone comes without it.
        head = f"{HEAD} for {self.cwd}" if self.docs else HEAD
        return f"{head}\n\n<INSTRUCTIONS>\n{instructions}\n</INSTRUCTIONS>"


def project_root(cwd: str, markers: list[str]) -> str | None:
    """The nearest folder from `cwd` up holding one of `markers` (project_root_markers,
    default `.git`; a folder or a file, links followed); `/` is never checked, as Codex stops
    when a folder has no parent. No markers: none."""
    if not markers:
        return None
    cursor = cwd
    while dirname(cursor) != cursor:
        if any(os.path.exists(posixpath.join(cursor, m)) for m in markers):
            return cursor
        cursor = dirname(cursor)
    return None


def search_folders(cwd: str, markers: list[str] | None = None) -> list[str]:
    """The folders Codex reads project docs from, the project root first."""
    root = project_root(cwd, [".git"] if markers is None else markers)
    if root is None:
        return [cwd]
    folders = [cwd]
    while folders[-1] != root:
        folders.append(dirname(folders[-1]))
    return folders[::-1]


def doc_found(path: str) -> bool:
    """A file by that name, links followed: a dangling link or a folder is passed over."""
    return os.path.isfile(path)


def raw_bytes(reader: FileReader, path: str) -> bytes | None:
    """The file's bytes (None: missing); raises OSError on any other failure."""
    read = reader.read(path)
    if read.kind == ReadKind.MISSING:
        return None
    if read.content is None:
        raise OSError(read.error or f"cannot read {path}")
    if read.invalid_utf8 and path not in reader.overrides:
        with open(path, "rb") as handle:  # the bytes themselves, not their replacement
            return handle.read()
    return read.content.encode("utf-8", "surrogatepass")


def load_codex(cwd: str, home: str, reader: FileReader | None = None) -> CodexLoad:
    reader = reader or FileReader()
    cwd = os.path.realpath(cwd)
    folder = codex_home(home)
    config, level = effective_config(cwd, folder)
    load = CodexLoad(cwd=cwd, codex_home=folder, budget=config.max_bytes,
                     config_error=config.error, untrusted=level == "untrusted")
    if config.error:
        return load
    for name in FILE_NAMES:
        path = posixpath.join(folder, name)
        read = reader.read(path)
        if read.content is None:  # bad UTF-8 is read as U+FFFD, as Codex does
            continue
        trimmed = rust_trim(read.content)
        if trimmed:
            load.global_path, load.global_text = path, trimmed
            break
    if config.max_bytes == 0 or load.untrusted:
        return load
    names = config.candidate_names()
    try:
        paths = []
        for directory in search_folders(cwd, config.markers):
            hit = next((n for n in names if doc_found(posixpath.join(directory, n))), None)
            if hit is None:
                continue
            paths.append(posixpath.join(directory, hit))
            later = names[names.index(hit) + 1:]
            load.shadowed += [posixpath.join(directory, n) for n in later
                              if doc_found(posixpath.join(directory, n))]
        remaining = config.max_bytes
        for index, path in enumerate(paths):
            if remaining == 0:
                load.lost = paths[index:]
                break
            data = raw_bytes(reader, path)
            if data is None:
                continue
            sent = data[:remaining]
            text = sent.decode("utf-8", "replace")
            if rust_trim(text):
                load.docs.append(CodexDoc(path, text, len(data), len(sent)))
                remaining -= len(sent)
            else:
                load.skipped.append(path)
    except OSError as error:
        load.failed = str(error)
        load.docs, load.lost = [], []
    return load
