"""What GitHub Copilot CLI 1.0.102 sends its model from custom instructions, at start and after
a tool touches a path (each rule seen in its requests: tests/conformance/scenarios/copilot.yaml).

At start, in the system message after `</tools>`:

1. `<custom_instruction>\\nTEXT\\n</custom_instruction>` blocks, joined by a blank line:
   `$COPILOT_HOME/copilot-instructions.md` (`copilot_home`: COPILOT_HOME defaults to
   HOME/.copilot; a relative value is read from the working folder; without it, a file it
   moves there from `$XDG_CONFIG_HOME/.copilot` when it starts: `migrated_home_file`); the
   `.github/copilot-instructions.md` of the repository root (the working folder outside a
   repository) and of the working folder; their `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` (the
   root's first); then each folder between the two, nearest the working folder first: the same with
   `.claude/CLAUDE.md` after `CLAUDE.md`. Nothing above the repository root. A file's text is
   sent whole (an empty file too), bad UTF-8 as U+FFFD (HOME's files: skipped); every text
   sent has its invisible characters dropped and is NFC-normalised (`sent_text`); a text already
   sent in a block before is not sent again, nor a file already sent (a `GEMINI.md` linked to
   `AGENTS.md`, whose imports only `AGENTS.md` expands).
2. The always-on `*.instructions.md` files (no `applyTo`, or only `**`), raw with their
   frontmatter: those of `$COPILOT_HOME/instructions`, the repository root's
   `.github/instructions` and the working folder's, each folder's in path order, joined by a
   blank line; then the table of the others (pattern, path, description; `\\` and `|`
   escaped in each cell), excluded ones (`excludeAgent: coding-agent`) left out.

`AGENTS.md` and `CLAUDE.md` have their `@imports` expanded (`expand_imports`, at start and on
read); each folder's `.github/instructions` files are followed by its `.claude/rules/**/*.md`.

After a tool (its `view`) touches a path, one user message of `<system_reminder>` blocks:
the table's files whose globs match the path (relative to the repository root), then, for
each folder from the path's folder up to the first folder read at start (the repository root,
the folders down to the working folder: excluded), deepest first — a sibling of the working
folder too — its
`.github/copilot-instructions.md`, `AGENTS.md`, `CLAUDE.md`, `.claude/CLAUDE.md`, `GEMINI.md`
and its `.github/instructions` files that apply (always-on, or matching). Each file once a
session, by its real path (a blank AGENTS.md, CLAUDE.md... not at all; one whose link leads out of
the repository not at all); the text HTML-escaped. The table and the reminders name a file by its
real path (`display_path`: a link by its target); two links to one instructions file are one.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from collections.abc import Container
from dataclasses import dataclass, field
from html import escape

from memlens.agents.copilot.imports import tokens
from memlens.agents.copilot.instructions import (
    Frontmatter,
    globs_match,
    instruction_files,
    parse_frontmatter,
)
from memlens.agents.environment import env_value
from memlens.files.fsread import FileReader, ReadKind
from memlens.files.nodecompat import dirname, resolve

HOME_FILE = "copilot-instructions.md"
REPO_FILE = ".github/copilot-instructions.md"
ROOT_NAMES = (REPO_FILE, "AGENTS.md", "CLAUDE.md", "GEMINI.md")
FOLDER_NAMES = (REPO_FILE, "AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "GEMINI.md")
INSTRUCTIONS_DIR = ".github/instructions"
RULES_DIR = ".claude/rules"
FILE_NAMES = ("copilot-instructions.md", "AGENTS.md", "CLAUDE.md", "GEMINI.md")
TABLE_HEAD = (
    "Here is a list of instruction files that contain rules for modifying or creating new "
    "code.\nThese files are important for ensuring that the code is modified or created "
    "correctly.\nPlease make sure to follow the rules specified in these files when working "
    "with the codebase.\nIf you have not already read the file, use the `view` tool to acquire "
    "it.\nMake sure to acquire the instructions before making any changes to the code.\n"
    "| Pattern | File Path | Description |\n| ------- | --------- | ----------- |"
)
REMINDER = ("<system_reminder>\nCustom instructions from {path}. Apply these to any code you "
            "write here:\n\n{text}\n</system_reminder>")


HOME_ENV = "COPILOT_HOME"
XDG_CONFIG_ENV = "XDG_CONFIG_HOME"


def copilot_home(home: str, cwd: str) -> str:
    """`$COPILOT_HOME` (a relative value from the working folder `cwd`, as Copilot CLI reads it;
    an empty one is unset), else HOME/.copilot."""
    value = env_value(HOME_ENV)
    return resolve(cwd, value) if value else posixpath.join(home, ".copilot")


def fixed_copilot_home(home: str) -> str | None:
    """`copilot_home` when no working folder decides it (None: a relative COPILOT_HOME)."""
    value = env_value(HOME_ENV)
    return None if value and not posixpath.isabs(value) else copilot_home(home, "/")


def migrated_home_file(home: str, cwd: str) -> str | None:
    """The instructions file Copilot CLI moves into HOME/.copilot when it starts, and then sends
    (its migration from `$XDG_CONFIG_HOME/.copilot`, which leaves a link behind):
    `$XDG_CONFIG_HOME/.copilot/copilot-instructions.md` (a relative value from the working
    folder) when COPILOT_HOME is not set, that folder is not HOME/.copilot, the file is not a
    link and HOME/.copilot has none."""
    xdg = env_value(XDG_CONFIG_ENV)
    if env_value(HOME_ENV) or not xdg:
        return None
    source, target = resolve(cwd, xdg, ".copilot"), posixpath.join(home, ".copilot")
    if source == target or not os.path.exists(source):
        return None
    if os.path.exists(target) and os.path.realpath(source) == os.path.realpath(target):
        return None
    path = posixpath.join(source, HOME_FILE)
    if (not os.path.lexists(path) or os.path.islink(path)
            or os.path.exists(posixpath.join(target, HOME_FILE))):
        return None
    return path


def git_root(cwd: str) -> str | None:
    """The repository holding `cwd` as git finds it: the nearest folder up whose `.git` is a
    repository folder (HEAD, objects/, refs/) or a `gitdir:` file."""
    cursor = cwd
    while True:
        dot = posixpath.join(cursor, ".git")
        if os.path.isdir(dot):
            if (os.path.isfile(posixpath.join(dot, "HEAD"))
                    and os.path.isdir(posixpath.join(dot, "objects"))
                    and os.path.isdir(posixpath.join(dot, "refs"))):
                return cursor
        elif os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8", errors="replace") as handle:
                    if handle.read(4096).startswith("gitdir:"):
                        return cursor
            except OSError:
                pass
        parent = dirname(cursor)
        if parent == cursor:
            return None
        cursor = parent


@dataclass
class CopilotFile:
    path: str
    text: str  # what is sent (a byte-order mark dropped)
    kind: str  # "home", "repository", "folder", "instructions"
    display: str = ""  # how the table and reminders name it
    front: Frontmatter | None = None
    note: str | None = None

    @property
    def scoped(self) -> bool:
        return self.front is not None and not self.front.always


# What Copilot CLI drops from every text it sends: zero-width and direction-control characters,
# the soft hyphen, U+FEFF and the tag characters (U+200D, the emoji joiner, is kept).
INVISIBLE = re.compile("[\u00ad\u180e\u200b\u200c\u200e\u200f\u202a-\u202e\u2060-\u2064"
                       "\u2066-\u2069\ufeff\U000e0001\U000e0020-\U000e007f]")


def sent_text(text: str) -> str:
    """A file's text as Copilot CLI sends it: the invisible characters dropped, then in Unicode
    normal form C (`e` + U+0301 arrives as U+00E9). Its frontmatter is read from the file as
    written (a description keeps them)."""
    return unicodedata.normalize("NFC", INVISIBLE.sub("", text))


def _raw(reader: FileReader, path: str, *, strict: bool = False) -> str | None:
    """`path`'s text, bad UTF-8 read as U+FFFD (None: it is not read); `strict` (HOME's
    files): a file that is not UTF-8 is skipped."""
    read = reader.read(path)
    if read.kind != ReadKind.OK or read.content is None or (strict and read.invalid_utf8):
        return None
    return read.content


def _read(reader: FileReader, path: str, *, strict: bool = False,
          within: str | None = None, at: str | None = None) -> str | None:
    """The text Copilot sends of an AGENTS.md, CLAUDE.md... (None: it is not read): its
    `@imports` expanded (AGENTS.md, CLAUDE.md, copilot-instructions.md; only files whose real
    path is in `within`; from `at`, where it reads a file it moved there) in the text as
    written, then the whole `sent_text` (so `@a.md` + U+200B names no file)."""
    raw = _raw(reader, path, strict=strict)
    if raw is not None and posixpath.basename(path) in EXPANDS_IMPORTS:
        place = at or path
        raw = expand_imports(place, raw, reader, [os.path.realpath(place)], within=within)
    return None if raw is None else sent_text(raw)


def display_path(path: str, base: str | None) -> str:
    """How the table and reminders name a file: by its real path (a link by its target), relative
    to `base` (`../out/x.md` outside it), absolute without one (HOME's)."""
    real = os.path.realpath(path)
    return real if base is None else posixpath.relpath(real, os.path.realpath(base))


def stays_inside(path: str, root: str) -> bool:
    """`path`'s real path is in `root` (a file on read whose link leads out is not sent)."""
    return os.path.realpath(path).startswith(os.path.realpath(root).rstrip("/") + "/")


@dataclass
class CopilotLoad:
    cwd: str
    root: str  # the repository root, else the working folder
    home_folder: str
    blocks: list[CopilotFile] = field(default_factory=list)  # <custom_instruction> files
    always: list[CopilotFile] = field(default_factory=list)
    scoped: list[CopilotFile] = field(default_factory=list)  # the table, in its order
    excluded: list[CopilotFile] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)  # the same text or file as a block before

    def table(self) -> str:
        if not self.scoped:
            return ""
        rows = [f"| {_escaped(f.front.raw_apply_to or '') if f.front else ''} | "
                f"'{_escaped(f.display)}' | {_cell(f.front.description if f.front else None)} |"
                for f in self.scoped]
        return TABLE_HEAD + "\n" + "\n".join(rows)

    def render(self) -> str:
        """The memory part of the system message (between `</tools>\\n\\n` and
        `\\n<system_notifications>`), byte for byte."""
        blocks = "\n\n".join(f"<custom_instruction>\n{f.text}\n</custom_instruction>"
                             for f in self.blocks)
        parts = [f.text for f in self.always]
        table = self.table()
        if table:
            parts.append(table)
        instructions = "\n\n".join(parts)
        if blocks and instructions:
            return f"{blocks}\n\n{instructions}\n"
        return blocks or instructions

    @property
    def files(self) -> list[CopilotFile]:
        return [*self.blocks, *self.always]


# What Copilot CLI trims from a description's ends: Unicode's White_Space characters (not
# Python's str.strip(), which also takes U+001C..U+001F).
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _cell(description: str | None) -> str:
    """A description in the table: each line break a space, the ends trimmed (a `>` or `|`
    block ends in a line break: `| a b |`), escaped (`_escaped`)."""
    if not description:
        return ""
    return _escaped(description.replace("\r\n", " ").replace("\n", " ").strip(WHITE_SPACE))


def _escaped(cell: str) -> str:
    """A table cell's text (the globs, the path, the description) as Copilot CLI writes it: `\\`
    doubled, then `|` as `\\|`."""
    return cell.replace("\\", "\\\\").replace("|", "\\|")


def _between(root: str, cwd: str) -> list[str]:
    """The folders strictly between `root` and `cwd`, top first."""
    folders = []
    cursor = dirname(cwd)
    while cursor != root and cursor.startswith(root + "/"):
        folders.append(cursor)
        cursor = dirname(cursor)
    return folders[::-1]


# The files whose @imports are expanded at top level (an imported file's always are).
EXPANDS_IMPORTS = ("AGENTS.md", "CLAUDE.md", "copilot-instructions.md")
MAX_IMPORT_DEPTH = 10


def expand_imports(path: str, text: str, reader: FileReader, chain: list[str],
                   loaded: set[str] | None = None, within: str | None = None) -> str:
    """`@path` references (`imports.tokens`) expanded as Copilot CLI expands them: after the
    token, `\n\n<imported_custom_instruction source="REAL">\nTEXT\n</imported_custom_instruction>`
    (REAL the file's real path, TEXT its own text expanded, its final whitespace dropped); a
    file this document already loaded (the top file, an import before, through any link)
    becomes `<imported_custom_instruction source="REAL" skipped="already-loaded" />`; a token
    naming no file stays as written, and so does one whose real path is not in `within` (the
    repository root; HOME's `.copilot` for its file), a link leading out too."""
    loaded = set(chain) if loaded is None else loaded
    out, last = [], 0
    for token in tokens(text):
        if token.at < last:
            continue  # inside the path of a token just expanded (`@@a.md`)
        target = os.path.normpath(posixpath.join(dirname(path), token.path))
        if not os.path.isfile(target) or (within is not None and not stays_inside(target, within)):
            continue
        real = os.path.realpath(target)
        if real not in loaded and len(chain) <= MAX_IMPORT_DEPTH:
            inner = _raw(reader, target, strict=True)  # not UTF-8: left as written
            if inner is None:
                continue
            loaded.add(real)
            inner = expand_imports(target, inner, reader, [*chain, real], loaded,
                                   within).rstrip()
            block = (f'\n\n<imported_custom_instruction source="{real}">\n{inner}\n'
                     '</imported_custom_instruction>')
        else:
            block = (f'\n\n<imported_custom_instruction source="{real}" '
                     'skipped="already-loaded" />')
        out += [text[last:token.end], block]
        last = token.end
    out.append(text[last:])
    return "".join(out)


def folder_instruction_files(folder: str, present: Container[str] | None = None) -> list[str]:
    """A folder's instruction files: its `.github/instructions/**/*.instructions.md`, then its
    `.claude/rules/**/*.md` (Claude Code's rules, `paths:` read as `applyTo`). `present`: the
    folder's entries, lower-cased, when the caller listed it (a folder without `.github` has
    no instructions folder to look in)."""
    return [*(instruction_files(posixpath.join(folder, INSTRUCTIONS_DIR))
              if present is None or ".github" in present else ()),
            *(instruction_files(posixpath.join(folder, RULES_DIR), suffix=".md")
              if present is None or ".claude" in present else ())]


def instruction_entry(path: str, raw: str, display: str) -> CopilotFile:
    """An instructions file from its text as written: the frontmatter read from it, the text
    sent (`sent_text`)."""
    return CopilotFile(path, sent_text(raw), "instructions", display, parse_frontmatter(raw))


def load_copilot(cwd: str, home: str, reader: FileReader | None = None) -> CopilotLoad:
    reader = reader or FileReader()
    cwd = resolve(cwd)
    root = git_root(cwd) or cwd
    folder = copilot_home(resolve(home), cwd)
    load = CopilotLoad(cwd=cwd, root=root, home_folder=folder)

    def block(path: str, kind: str, moved_to: str | None = None) -> None:
        home_file = kind == "home"
        text = _read(reader, path, strict=home_file, within=folder if home_file else root,
                     at=moved_to)
        real = os.path.realpath(path)  # a link to a file sent (its imports expanded or not)
        if text is not None and all(f.text != text and os.path.realpath(f.path) != real
                                    for f in load.blocks):
            note = None if moved_to is None else (
                f"Copilot CLI moves it to {moved_to} when it starts (XDG_CONFIG_HOME is set, "
                "COPILOT_HOME is not) and leaves a link here")
            load.blocks.append(CopilotFile(path, text, kind, posixpath.relpath(path, root),
                                           note=note))
        elif text is not None:
            load.duplicates.append(path)

    moved = migrated_home_file(resolve(home), cwd)
    if moved is None:
        block(posixpath.join(folder, HOME_FILE), "home")
    else:
        block(moved, "home", moved_to=posixpath.join(folder, HOME_FILE))
    primary = [root] if cwd == root else [root, cwd]
    for base in primary:
        block(posixpath.join(base, REPO_FILE), "repository" if base == root else "folder")
    for base in primary:
        for name in ROOT_NAMES[1:]:
            block(posixpath.join(base, name), "repository" if base == root else "folder")
    for between in reversed(_between(root, cwd)):  # the working folder's parent first
        for name in FOLDER_NAMES:
            block(posixpath.join(between, name), "folder")
    sources = [(posixpath.join(folder, "instructions"), None), (root, root)]
    if cwd != root:
        sources.append((cwd, cwd))
    seen: set[str] = set()  # real paths: two links to one file are one file
    for base, relative_to in sources:
        paths = (list(instruction_files(base)) if relative_to is None
                 else folder_instruction_files(base))
        for path in paths:
            text = _raw(reader, path, strict=relative_to is None)
            real = os.path.realpath(path)
            if text is None or real in seen:
                continue
            seen.add(real)
            entry = instruction_entry(path, text, display_path(path, relative_to))
            if entry.front and entry.front.excluded:
                load.excluded.append(entry)
            elif entry.scoped:
                load.scoped.append(entry)
            else:
                load.always.append(entry)
    return load


def reminder(display: str, text: str) -> str:
    return REMINDER.format(path=display, text=escape(text, quote=True).replace("&#x27;",
                                                                                "&apos;"))


@dataclass
class OnRead:
    target: str
    files: list[CopilotFile]

    def payload(self) -> str:
        return "".join("\n" + reminder(f.display, f.text) for f in self.files)


class CopilotSession:
    """Copilot CLI's loading after a tool touches a path, over one session (each file once)."""

    def __init__(self, load: CopilotLoad, reader: FileReader | None = None) -> None:
        self.load = load
        self.reader = reader or FileReader()
        self.sent: set[str] = set()

    def touch(self, target: str) -> OnRead:
        target = resolve(target)
        load, files = self.load, []
        for entry in load.scoped:
            if entry.path not in self.sent and entry.front and globs_match(
                    entry.front.globs, load.root, target):
                files.append(entry)
        startup = {load.root, load.cwd, *_between(load.root, load.cwd)}
        folders = []
        cursor = dirname(target)
        while cursor.startswith(load.root + "/") and cursor not in startup:
            folders.append(cursor)
            cursor = dirname(cursor)
        for folder in folders:  # deepest first
            for name in FOLDER_NAMES:
                path = posixpath.join(folder, name)
                text = _read(self.reader, path, within=load.root)  # @imports expanded too
                if text is not None and stays_inside(path, load.root):  # a link out: not sent
                    files.append(CopilotFile(path, text, "folder",
                                             display_path(path, load.root)))
            for path in folder_instruction_files(folder):
                text = _raw(self.reader, path)
                if text is None or not stays_inside(path, load.root):
                    continue
                entry = instruction_entry(path, text, display_path(path, load.root))
                front = entry.front
                if front is None or front.excluded:
                    continue
                if front.always or globs_match(front.globs, load.root, target):
                    files.append(entry)
        fresh: list[CopilotFile] = []
        for entry in files:
            if entry.kind == "folder" and not entry.text.strip():
                continue  # a blank AGENTS.md (and the like) is not sent on read; at start it is
            real = os.path.realpath(entry.path)  # a link to a file already sent: not again
            if real not in self.sent:
                self.sent.add(real)
                fresh.append(entry)
        return OnRead(target, fresh)
