"""What OpenCode 1.18 puts in its system message at start and adds after its `read` tool
(docs/reference.md "OpenCode"), byte for byte, as its requests to a recording model showed:

* one global file: its own `AGENTS.md` (in `$OPENCODE_CONFIG_DIR` when that is set, else in
  its config folder `$XDG_CONFIG_HOME/opencode`, by default `~/.config/opencode`:
  `global_folders`), else `~/.claude/CLAUDE.md` — the first that *exists* wins, so an empty
  own file hides Claude Code's (and sends nothing);
* the project chain: the names AGENTS.md, CLAUDE.md, CONTEXT.md are tried in that order, and
  the first name found anywhere from the working folder up to the repository root (up to `/`
  outside a repository) wins: every file of that name in the chain is sent, nearest folder
  first, and the other names are dropped (a nested AGENTS.md drops the root's CLAUDE.md);
* the `instructions` of `opencode.json` (its config folder's `opencode.json[c]`, then the
  file `$OPENCODE_CONFIG` names (any name), then the project's from the root down, then each
  `.opencode/opencode.json[c]`, nearest first, then HOME's `~/.opencode/opencode.json[c]`,
  then `$OPENCODE_CONFIG_DIR/opencode.json[c]`; merged as one list without repeats): a relative
  glob is tried in the working folder and each one above it up to the repository root (with
  `OPENCODE_DISABLE_PROJECT_CONFIG`, in the folder of the global AGENTS.md only); `~/` names
  HOME; an absolute path globs its last part in its folder; an http(s) address is fetched;
* `OPENCODE_DISABLE_CLAUDE_CODE` (or `..._PROMPT`) drops `~/.claude/CLAUDE.md` and the
  CLAUDE.md name.

These variables are read as OpenCode reads them: a relative value from the working folder (a
relative `OPENCODE_CONFIG`'s `instructions` count as the project's), an empty `XDG_CONFIG_HOME`
or `OPENCODE_CONFIG` as unset, an empty `OPENCODE_CONFIG_DIR` as the working folder itself
(its AGENTS.md is then the global file; no `opencode.json` is read from it).

Each file is `Instructions from: PATH\\nTEXT` (the path as found, links not resolved; a UTF-8
BOM dropped; an empty file not sent); the files are joined with a newline in the system
message. After a read, each folder from the file's up to (not including) the working folder
adds its first file by name (AGENTS.md, CLAUDE.md, CONTEXT.md) that was not sent yet, nearest
first, joined with a blank line inside `<system-reminder>`.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass, field
from typing import Literal

from memlens.agents.environment import env_value
from memlens.agents.opencode.globs import glob_files
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import dirname, resolve
from memlens.files.roots import repository_root
from memlens.files.structured import StructuredDataError, parse_json
from memlens.protocol.memory import Diagnostic

NAMES = ("AGENTS.md", "CLAUDE.md", "CONTEXT.md")
CLAUDE_NAME = "CLAUDE.md"
CONFIG_NAMES = ("opencode.json", "opencode.jsonc")
CONFIG_FOLDER = ".opencode"
DISABLE_CLAUDE = ("OPENCODE_DISABLE_CLAUDE_CODE", "OPENCODE_DISABLE_CLAUDE_CODE_PROMPT")
DISABLE_PROJECT = "OPENCODE_DISABLE_PROJECT_CONFIG"
XDG_CONFIG_ENV = "XDG_CONFIG_HOME"
CONFIG_DIR_ENV = "OPENCODE_CONFIG_DIR"
CONFIG_ENV = "OPENCODE_CONFIG"
_TRUE = frozenset({"true", "yes", "on", "1", "y"})
MAX_CONFIG_BYTES = 1 << 20
MAX_PATTERNS = 100  # `instructions` entries read, at most
OUTSIDE = "opencode-instructions-outside"
CONFIG_INVALID = "opencode-config-invalid"
REMOTE = "opencode-instructions-remote"
GLOB_CUT = "opencode-instructions-walk-cut"


def flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def claude_disabled() -> bool:
    return any(flag(n) for n in DISABLE_CLAUDE)


def names() -> tuple[str, ...]:
    """The project file names, in the order tried."""
    return tuple(n for n in NAMES if n != CLAUDE_NAME or not claude_disabled())


@dataclass(frozen=True)
class GlobalFolders:
    """Where OpenCode reads its user's files, each with the scope of the `instructions` read
    there ("global"; "project" for a folder a relative value names: it lies in the tree)."""

    config: str  # its config folder: opencode.json[c] read before the project's
    config_scope: str
    own: str  # the folder of its global AGENTS.md (relative globs, project config switched off)
    own_scope: str
    extra: str | None  # `$OPENCODE_CONFIG_DIR`: opencode.json[c] read after the project's
    # `$OPENCODE_CONFIG`: one more configuration file, read after the config folder's and
    # before the project's (None: unset or empty), and the scope of its `instructions`.
    custom: str | None = None
    custom_scope: str = "global"


def _named(value: str, cwd: str) -> tuple[str, str]:
    """The folder a variable names, with its scope: a relative value from the working folder
    (where OpenCode starts)."""
    if posixpath.isabs(value):
        return resolve(value), "global"
    return resolve(cwd, value), "project"


def global_folders(home: str, cwd: str) -> GlobalFolders:
    xdg = env_value(XDG_CONFIG_ENV)
    if xdg:  # an empty value is unset
        base, scope = _named(xdg, cwd)
        config = posixpath.join(base, "opencode")
    else:
        config, scope = posixpath.join(home, ".config", "opencode"), "global"
    named = env_value(CONFIG_ENV)  # an empty value is unset
    custom, custom_scope = _named(named, cwd) if named else (None, "global")
    chosen = env_value(CONFIG_DIR_ENV)
    if chosen is None:
        return GlobalFolders(config, scope, config, scope, None, custom, custom_scope)
    own, own_scope = _named(chosen, cwd)  # an empty value: the working folder itself
    return GlobalFolders(config, scope, own, own_scope, own if chosen else None, custom,
                         custom_scope)


def global_folder(home: str) -> str | None:
    """The folder of its global AGENTS.md when no working folder decides it (None: a relative
    or empty value names a folder of the tree it starts in)."""
    folders = global_folders(home, "/")
    return folders.own if folders.own_scope == "global" else None


def global_candidates(folders: GlobalFolders, home: str) -> list[str]:
    own = posixpath.join(folders.own, "AGENTS.md")
    return [own] if claude_disabled() else [own, posixpath.join(home, ".claude", CLAUDE_NAME)]


def worktree(cwd: str) -> str:
    """The repository root OpenCode stops at ("/" outside a repository)."""
    return repository_root(cwd) or "/"


def up(start: str, stop: str) -> list[str]:
    """The folders from `start` up to `stop` (included; to `/` when `stop` is not above)."""
    out, current = [], start
    while True:
        out.append(current)
        if current == stop:
            break
        parent = dirname(current)
        if parent == current:
            break
        current = parent
    return out


def block(path: str, text: str) -> str:
    return f"Instructions from: {path}\n{text}"


def sent_text(reader: FileReader, path: str) -> str:
    """What OpenCode sends of a file: its text with a UTF-8 BOM dropped ('' when it cannot be
    read: a folder, a file it may not open)."""
    content = reader.read(path).content
    return "" if content is None else content.removeprefix("\ufeff")


@dataclass
class Instruction:
    path: str
    text: str  # '' is not sent
    kind: str  # "global", "project", "instructions"
    note: str | None = None  # the pattern and the configuration it came from


@dataclass
class Pattern:
    text: str
    config: str  # the file naming it
    scope: str  # "global" or "project"


@dataclass
class OpenCodeLoad:
    cwd: str
    root: str  # the repository root ("/" outside one)
    files: list[Instruction]  # every path it takes at start, in order (empty ones too)
    chosen: str | None  # the project name that won (None: no project file)
    configs: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    refused: bool = False  # a configuration it will not start with
    folders: GlobalFolders | None = None

    @property
    def sent(self) -> list[Instruction]:
        return [] if self.refused else [f for f in self.files if f.text]

    @property
    def paths(self) -> set[str]:
        return {f.path for f in self.files}

    def render(self) -> str:
        return "\n".join(block(f.path, f.text) for f in self.sent)


def project_configs(cwd: str, root: str) -> list[str]:
    """The configuration files in the order merged: `opencode.json[c]` from the root down to
    the working folder, then each `.opencode/opencode.json[c]`, nearest first."""
    if flag(DISABLE_PROJECT):
        return []
    chain = up(cwd, root)
    out = [posixpath.join(folder, name) for folder in reversed(chain) for name in CONFIG_NAMES]
    out += [posixpath.join(folder, CONFIG_FOLDER, name) for folder in chain
            for name in CONFIG_NAMES]
    return [p for p in out if os.path.isfile(p)]


def _diag(path: str, severity: Literal["error", "warning", "info"], code: str,
          message: str) -> Diagnostic:
    return Diagnostic(path=path, line=1, col=1, end_line=1, end_col=1, severity=severity,
                      code=code, message=message)


def read_patterns(config: str, scope: str, reader: FileReader,
                  diagnostics: list[Diagnostic]) -> list[Pattern] | None:
    """The `instructions` of one configuration file (None: OpenCode refuses to start)."""
    result = reader.read(config)
    if result.content is None:
        return []
    try:
        data = parse_json(result.content.removeprefix("\ufeff"), comments=True,
                          max_chars=MAX_CONFIG_BYTES)
    except (StructuredDataError, ValueError) as error:
        diagnostics.append(_diag(config, "error", CONFIG_INVALID,
                                 f"OpenCode does not start with this file: {error}"))
        return None
    if not isinstance(data, dict):
        return []
    value = data.get("instructions")
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        diagnostics.append(_diag(config, "error", CONFIG_INVALID,
                                 "OpenCode does not start with this file: `instructions` must "
                                 "be a list of strings"))
        return None
    return [Pattern(v, config, scope) for v in value[:MAX_PATTERNS]]


def load_opencode(cwd: str, home: str, reader: FileReader | None = None) -> OpenCodeLoad:
    reader = reader or FileReader()
    cwd = resolve(cwd)
    root = worktree(cwd)
    files: list[Instruction] = []
    seen: set[str] = set()

    def add(path: str, kind: str, note: str | None = None) -> None:
        path = resolve(path)
        if path not in seen:
            seen.add(path)
            files.append(Instruction(path, sent_text(reader, path), kind, note))

    folders = global_folders(home, cwd)
    for candidate in global_candidates(folders, home):
        if os.path.exists(candidate):
            add(candidate, "global")
            break
    chosen = None
    if not flag(DISABLE_PROJECT):
        for name in names():
            found = [posixpath.join(d, name) for d in up(cwd, root)
                     if os.path.exists(posixpath.join(d, name))]
            if found:
                chosen = name
                for path in found:
                    add(path, "project")
                break
    load = OpenCodeLoad(cwd=cwd, root=root, files=files, chosen=chosen, folders=folders)
    patterns: list[Pattern] = []
    configs = [(posixpath.join(folders.config, n), folders.config_scope) for n in CONFIG_NAMES]
    if folders.custom is not None:
        configs.append((folders.custom, folders.custom_scope))
    configs += [(p, "project") for p in project_configs(cwd, root)]
    # HOME's own `.opencode` folder, after the project's (even with their configuration off)
    configs += [(posixpath.join(home, CONFIG_FOLDER, n), "global") for n in CONFIG_NAMES]
    if folders.extra is not None:
        configs += [(posixpath.join(folders.extra, n), folders.own_scope) for n in CONFIG_NAMES]
    read_configs: set[str] = set()
    for config, scope in configs:
        if not os.path.isfile(config) or resolve(config) in read_configs:
            continue
        read_configs.add(resolve(config))
        load.configs.append(config)
        read = read_patterns(config, scope, reader, load.diagnostics)
        if read is None:
            load.refused = True
            continue
        patterns += [p for p in read if p.text not in {q.text for q in patterns}]
    for pattern in patterns:
        for path, note in _matches(pattern, load, home):
            add(path, "instructions", note)
    return load


def _matches(pattern: Pattern, load: OpenCodeLoad, home: str) -> list[tuple[str, str]]:
    """The files one `instructions` entry adds, in OpenCode's order, with the note saying
    why; what it would read from outside the project is reported, never read."""
    text, config = pattern.text, pattern.config
    note = f"`{text}` in {config}"
    if text.startswith(("https://", "http://")):
        load.diagnostics.append(_diag(config, "info", REMOTE,
                                      f"OpenCode fetches `{text}` at start and sends what it "
                                      "gets: Memory Lens does not fetch it"))
        return []
    expanded = posixpath.join(home, text[2:]) if text.startswith("~/") else text
    if posixpath.isabs(expanded):
        if pattern.scope == "project":
            load.diagnostics.append(_diag(config, "warning", OUTSIDE,
                                          f"`{text}` names files outside the project: OpenCode "
                                          "sends them to its model; Memory Lens does not read "
                                          "them"))
            return []
        folder, last = posixpath.split(expanded)
        found = glob_files(last, folder, folder)
        return [(p, note) for p in found.files]
    if posixpath.normpath(expanded).startswith("../") or expanded == "..":
        load.diagnostics.append(_diag(config, "warning", OUTSIDE,
                                      f"`{text}` climbs out of the folder it is read in: "
                                      "OpenCode sends what it names; Memory Lens reads it only "
                                      "within the project"))
    out: list[tuple[str, str]] = []
    for base, inside in _glob_bases(load, home):
        found = glob_files(expanded, base, inside)
        out += [(p, note) for p in found.files]
        if found.outside:
            load.diagnostics.append(_diag(config, "warning", OUTSIDE,
                                          f"`{text}` matches {found.outside[0]} through a link "
                                          "leading out of the project: Memory Lens does not "
                                          "read it"))
        if found.cut:
            load.diagnostics.append(_diag(config, "warning", GLOB_CUT,
                                          f"`{text}` walks a large tree from {base}: Memory "
                                          "Lens stopped listing it (OpenCode reads it whole)"))
    return out


def _glob_bases(load: OpenCodeLoad, home: str) -> list[tuple[str, str]]:
    """The folders a relative glob is tried in, each with the folder its matches must stay in:
    from the working folder up to the repository root, within the root. Outside a repository
    OpenCode climbs to `/`: Memory Lens follows it, each folder on its own, but stops below
    HOME (it never globs HOME or a folder holding it). With the project's configuration
    switched off, only the folder of its global AGENTS.md."""
    if flag(DISABLE_PROJECT) and load.folders is not None:
        return [(load.folders.own, load.folders.own)]
    if load.root != "/":
        return [(base, load.root) for base in up(load.cwd, load.root)]
    home = resolve(home) if home else ""
    out = []
    for base in up(load.cwd, "/"):
        if home and (base == home or home.startswith(base.rstrip("/") + "/")):
            break
        out.append((base, base))
    return out


def find_in(folder: str, reader: FileReader) -> str | None:
    """The first of the names that exists in `folder` (what a read there brings in)."""
    for name in names():
        path = posixpath.join(folder, name)
        if os.path.exists(path):
            return path
    return None


@dataclass
class ReadLoad:
    target: str
    files: list[Instruction]

    def payload(self) -> str:
        if not self.files:
            return ""
        return ("<system-reminder>\n" + "\n\n".join(block(f.path, f.text) for f in self.files)
                + "\n</system-reminder>")


class OpenCodeSession:
    """One working session: what each `read` adds, each file at most once."""

    def __init__(self, load: OpenCodeLoad, reader: FileReader) -> None:
        self.load = load
        self.reader = reader
        self.claimed: set[str] = set()

    def read(self, target: str) -> ReadLoad:
        target = resolve(target)
        out: list[Instruction] = []
        if not os.path.isfile(target) or self.load.refused:
            return ReadLoad(target, out)
        system = self.load.paths
        # OpenCode compares the folder with the working folder as text: a sibling whose name
        # starts with the working folder's name (`sub` and `subother`) counts as inside.
        folder = dirname(target)
        while folder.startswith(self.load.cwd) and folder != self.load.cwd:
            found = find_in(folder, self.reader)
            if found and found != target and found not in system and found not in self.claimed:
                self.claimed.add(found)
                text = sent_text(self.reader, found)
                if text and is_text_file(target, self.reader):
                    out.append(Instruction(found, text, "nested",
                                           f"{posixpath.relpath(folder, self.load.cwd)}/ is "
                                           "read"))
            parent = dirname(folder)
            if parent == folder:
                break
            folder = parent
        return ReadLoad(target, out)


BINARY_SUFFIXES = frozenset({
    ".zip", ".tar", ".gz", ".exe", ".dll", ".so", ".class", ".jar", ".war", ".7z", ".doc",
    ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp", ".bin", ".dat", ".obj",
    ".o", ".a", ".lib", ".wasm", ".pyc", ".pyo"
})
ATTACHED_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf"})


def is_text_file(path: str, reader: FileReader) -> bool:
    """OpenCode's read tool answers with the file's lines (and the reminder) for a text file;
    an image or a PDF is attached and a binary file refused, without the reminder."""
    suffix = posixpath.splitext(path)[1].lower()
    if suffix in BINARY_SUFFIXES or suffix in ATTACHED_SUFFIXES:
        return False
    try:
        # O_NONBLOCK: a FIFO swapped in after the caller's check cannot block the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        sample = os.read(fd, 4096) if stat.S_ISREG(os.fstat(fd).st_mode) else b"\0"
    except OSError:
        return False
    finally:
        os.close(fd)
    if not sample:
        return True
    if b"\x00" in sample:
        return False
    odd = sum(1 for b in sample if b < 9 or 13 < b < 32)
    return odd / len(sample) <= 0.3
