"""pi 0.73's start-up load (docs/reference.md "pi", profile `pi@0.73`; the agent is `agent.py`).

pi sends its memory once, at start, in its system prompt, and nothing later (a read of any
file, its own AGENTS.md included, returns the file's text alone):

* its global folder (`PI_CODING_AGENT_DIR`, a leading `~` expanded, else HOME/.pi/agent) and
  every folder from `/` down to the working folder (its real path), git or not: in each, the
  first of `AGENTS.md`, `AGENTS.MD`, `CLAUDE.md`, `CLAUDE.MD` that exists (links followed: a
  dangling link does not) and can be read (a folder by that name is passed over). Its text
  is sent raw: a BOM, CR LF, a blank or empty file, bad UTF-8 as U+FFFD; no size limit, no
  include, no trimming. A path already sent (the global folder on the chain) is sent once;
  the same text under two paths (a link) is sent twice.
* the context, global file first then `/` down, framed as
  `\\n\\n# Project Context\\n\\nProject-specific instructions and guidelines:\\n\\n` then
  `## PATH\\n\\nTEXT\\n\\n` per file.
* `.pi/SYSTEM.md` in the working folder (only there), else SYSTEM.md in the global folder,
  replaces pi's own prompt when not empty; `.pi/APPEND_SYSTEM.md`, else the global one, is
  appended to the prompt after `\\n\\n` when not empty. A SYSTEM.md or APPEND_SYSTEM.md pi finds
  but cannot read (a folder by that name) is sent as its path.
* `--no-context-files` drops the context files; SYSTEM.md and APPEND_SYSTEM.md still load.

So what pi sends from files is one string: the SYSTEM.md text, the appended text after
`\\n\\n`, then the project context. Each rule was checked against the real agent
(tests/conformance/test_pi.py, differential/regressions_pi.yaml).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field

from memlens.agents.environment import env_value
from memlens.files.fsread import FileReader, ReadKind

CONTEXT_NAMES = ("AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")
CONFIG_DIR = ".pi"
SYSTEM_NAME = "SYSTEM.md"
APPEND_NAME = "APPEND_SYSTEM.md"
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
CONTEXT_HEAD = "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"


def node_join(*parts: str) -> str:
    """Node's `path.join` on POSIX: the parts joined with `/`, then normalised (`.`, `..`,
    repeated slashes); "." when empty."""
    joined = "/".join(p for p in parts if p)
    if not joined:
        return "."
    normal = posixpath.normpath(joined)
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


def agent_dir(home: str) -> str:
    """pi's global folder: `PI_CODING_AGENT_DIR` (`~` and `~/…` are HOME), else HOME/.pi/agent."""
    given = env_value(AGENT_DIR_ENV)
    if given:
        if given == "~":
            return home
        return home + given[1:] if given.startswith("~/") else given
    return node_join(home, CONFIG_DIR, "agent")


@dataclass
class PiFile:
    path: str
    text: str  # what is sent
    role: str  # "global", "project", "system", "append"
    as_path: bool = False  # unreadable: pi sends the path itself in its place


@dataclass
class PiLoad:
    cwd: str
    agent_dir: str
    context: list[PiFile] = field(default_factory=list)
    system: PiFile | None = None
    append: PiFile | None = None
    # Per folder: the names pi passes over because an earlier one was read.
    shadowed: list[tuple[str, str]] = field(default_factory=list)  # (path, the one read)
    unreadable: list[str] = field(default_factory=list)  # exists, cannot be read: passed over
    repeated: list[str] = field(default_factory=list)  # the global file again on the chain
    context_files: bool = True  # False: run with --no-context-files

    @property
    def files(self) -> list[PiFile]:
        """Every file sent, in the order of the request."""
        return [f for f in (self.system, self.append) if f is not None] + self.context

    def render(self) -> str:
        """The one string pi sends from files (see the module docstring)."""
        out = self.system.text if self.system else ""
        if self.append and self.append.text:
            out += "\n\n" + self.append.text
        if self.context:
            out += CONTEXT_HEAD + "".join(f"## {f.path}\n\n{f.text}\n\n" for f in self.context)
        return out


def _exists(path: str) -> bool:
    """Node's existsSync: the path, links followed, is there (any kind of entry)."""
    try:
        return os.path.exists(path)
    except ValueError:  # a NUL in the path
        return False


def _readable(reader: FileReader, path: str) -> str | None:
    """The text Node's readFileSync(path, "utf-8") gives (None: it throws)."""
    read = reader.read(path)
    return read.content if read.kind == ReadKind.OK else None


def _from_folder(folder: str, reader: FileReader, load: PiLoad) -> PiFile | None:
    """The one context file pi reads in `folder` (its role set by the caller)."""
    for index, name in enumerate(CONTEXT_NAMES):
        path = node_join(folder, name)
        if not _exists(path):
            continue
        text = _readable(reader, path)
        if text is None:
            load.unreadable.append(path)
            continue
        for later in CONTEXT_NAMES[index + 1:]:
            other = node_join(folder, later)
            if _exists(other):
                load.shadowed.append((other, path))
        return PiFile(path, text, "project")
    return None


def _prompt_file(paths: list[str], role: str, reader: FileReader) -> PiFile | None:
    """The first of `paths` that exists, as pi reads a prompt file: its text, or its path when
    it cannot be read. An empty text is kept (pi then sends nothing for it)."""
    for path in paths:
        if _exists(path):
            text = _readable(reader, path)
            return PiFile(path, path if text is None else text, role, as_path=text is None)
    return None


def context_chain(cwd: str) -> list[str]:
    """The folders pi reads a context file from, `/` first, down to `cwd`."""
    folders = [cwd]
    while posixpath.dirname(folders[-1]) != folders[-1]:
        folders.append(posixpath.dirname(folders[-1]))
    return folders[::-1]


def load_pi(cwd: str, home: str, reader: FileReader | None = None, *,
            context_files: bool = True) -> PiLoad:
    reader = reader or FileReader()
    cwd = os.path.realpath(cwd)
    folder = agent_dir(home)
    load = PiLoad(cwd=cwd, agent_dir=folder, context_files=context_files)
    if context_files:
        seen: set[str] = set()
        found = _from_folder(folder, reader, load)
        if found is not None:
            found.role = "global"
            load.context.append(found)
            seen.add(found.path)
        for directory in context_chain(cwd):
            found = _from_folder(directory, reader, load)
            if found is None:
                continue
            if found.path in seen:
                load.repeated.append(found.path)
                continue
            seen.add(found.path)
            load.context.append(found)
    system = _prompt_file([node_join(cwd, CONFIG_DIR, SYSTEM_NAME),
                           node_join(folder, SYSTEM_NAME)], "system", reader)
    load.system = system if system is not None and system.text else None
    append = _prompt_file([node_join(cwd, CONFIG_DIR, APPEND_NAME),
                           node_join(folder, APPEND_NAME)], "append", reader)
    load.append = append if append is not None and append.text else None
    return load
