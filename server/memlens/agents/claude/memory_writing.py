"""Saving a memory for Claude Code (`memlens add --agent claude`, the editor's Add Memory with
Claude Code chosen), the way Claude Code 2.1.330's `# Memory` section tells its model to:

    Step 1 — write the memory to its own file using this frontmatter format:
        ---
        name: {{short-kebab-case-slug}}
        description: {{one-line summary …}}
        metadata:
          type: {{user, feedback, project, reference}}
        ---
        {{memory content …}}
    Step 2 — add a pointer to that file in MEMORY.md … one line, under ~150 characters:
        `- [Title](file.md) — one-line hook`. The index has no frontmatter.

The topic file goes into the auto-memory folder `memory_folder.auto_memory_folder` finds (a
refusal naming the switch when auto memory is off), named `<name>.md`; its pointer line is
the one Claude Code writes itself for a topic file (`memory_index.index_line`). Both writes are
atomic and happen under the folder's lock; when the index cannot be written the topic file is
removed again, so a failure leaves the folder as it was.

Where it may write (docs/security.md, "Claude Code's memory folder"): a folder the repository's
own settings chose (`chosen_by == "repository"`) only once the user confirmed that folder
(RepositoryFolder otherwise, before anything is read or written there); and every read and
write of the folder goes through `files/confined.py` — no symbolic link followed below HOME,
the workspace or a folder the user named, MEMORY.md and the topic file regular files or
absent, the folder inside the Claude config folders, the workspace, or a folder the user
named or confirmed. A name in use (by a topic file's
`name:` or by the file `<name>.md`) is refused when the user chose it and suffixed (`-2`,
`-3` …) when it was made from the fact."""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import re
import time
from dataclasses import dataclass

from memlens.agents.claude.memory_folder import (
    AutoMemoryFolder,
    ChosenBy,
    auto_memory_folder,
    claude_home,
)
from memlens.agents.claude.memory_index import TopicEntry, index_line
from memlens.agents.claude.memory_links import SLUG
from memlens.agents.claude.memory_topics import TOPIC_TYPES, scan_topics
from memlens.files.atomic import NotRegularFile
from memlens.files.confined import ConfinedFolder, open_folder
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import is_subpath, js_trim
from memlens.files.pathpolicy import PathPolicy, PathRefused
from memlens.files.roots import repository_root
from memlens.text.frontmatter import yaml_mapping

DEFAULT_TYPE = "project"
NAME_WORDS = 6
NAME_MAX = 48
DESCRIPTION_MAX = 150
INDEX = "MEMORY.md"
INDEX_MAX = 16_000_000  # bytes of MEMORY.md read (Claude Code sends its first 25 KB)


class MemoryRefused(ValueError):
    """Why the memory was not saved, in a sentence to show as it is."""


class RepositoryFolder(MemoryRefused):
    """The repository's own settings chose the memory folder, and the user has not confirmed
    writing there."""

    def __init__(self, folder: str, settings: str):
        super().__init__(f"Claude Code's memory folder {folder} was chosen by the repository "
                         f"(autoMemoryDirectory in {settings}), not by you: nothing was "
                         "written there.")
        self.folder = folder
        self.settings = settings


@dataclass(frozen=True)
class WritePlace:
    """Where a Claude memory may be written: the policy's roots (the Claude config folders,
    the workspace, a folder the user named or confirmed) and the anchors whose own path is
    trusted (HOME, those folders but one the repository chose)."""

    policy: PathPolicy
    anchors: tuple[str, ...]

    def open(self, folder: str, *, create: bool) -> ConfinedFolder | None:
        try:
            return open_folder(self.policy, folder, self.anchors, create=create)
        except PathRefused as refused:
            raise MemoryRefused(str(refused)) from None


def write_place(home: str, cwd: str, place: AutoMemoryFolder, env: dict[str, str] | None,
                confirmed: bool) -> WritePlace:
    env = dict(os.environ) if env is None else env
    claude = [posixpath.join(home, ".claude"), claude_home(home)]
    remote = env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR")
    if remote and remote.startswith("/"):
        claude.append(remote)
    roots = [*claude, cwd, repository_root(cwd) or cwd]
    anchors = [home, *roots]
    if place.folder is not None and (place.chosen_by == "user" or confirmed):
        roots.append(place.folder)
        if place.chosen_by == "user":  # the user's own links on the way are the user's
            anchors.append(place.folder)
    return WritePlace(PathPolicy(roots), tuple(anchors))


@dataclass
class ClaudeMemoryPlan:
    """What saving one memory writes: the topic file and the index with its pointer line."""

    folder: str
    topic_path: str
    topic_text: str
    index_path: str
    index_before: str | None  # None: MEMORY.md does not exist yet
    index_after: str
    pointer: str  # the line added to MEMORY.md
    name: str
    description: str
    type: str
    place: WritePlace
    chosen_by: ChosenBy = "default"
    chosen_in: str | None = None  # the settings file (or variable) that named the folder

    def summary(self) -> str:
        return (f"Saved a {self.type} memory for Claude Code: {self.topic_path} (name: "
                f"{self.name}), and its line in {self.index_path}")


def slug_of(fact: str) -> str:
    """A kebab-case slug from the fact's first words (ASCII letters and digits only)."""
    words = re.findall(r"[a-z0-9]+", fact.lower())[:NAME_WORDS]
    slug = ""
    for word in words:
        longer = f"{slug}-{word}" if slug else word
        if len(longer) > NAME_MAX:
            break
        slug = longer
    return slug or "memory"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def description_of(fact: str) -> str:
    """The fact's first line, on one line, cut at a word end to fit `DESCRIPTION_MAX`."""
    first = _one_line(next((line for line in fact.splitlines() if line.strip()), ""))
    if len(first) <= DESCRIPTION_MAX:
        return first
    cut = first[:DESCRIPTION_MAX - 1]
    words = cut.rsplit(" ", 1)[0]
    return (words if len(words) > DESCRIPTION_MAX // 2 else cut).rstrip() + "\u2026"


def yaml_scalar(value: str) -> str:
    """`value` as a YAML scalar that reads back as itself: plain when it does, else quoted
    (a JSON string is a YAML double-quoted scalar)."""
    if yaml_mapping(f"key: {value}\n") == {"key": value}:
        return value
    return json.dumps(value, ensure_ascii=False)


def topic_text(name: str, description: str, kind: str, fact: str) -> str:
    body = js_trim(fact.replace("\r\n", "\n").replace("\r", "\n"))
    return (f"---\nname: {name}\ndescription: {yaml_scalar(description)}\nmetadata:\n"
            f"  type: {kind}\n---\n\n{body}\n")


def _read_index(box: ConfinedFolder | None) -> str | None:
    """MEMORY.md's text (None: absent), read without following a link or opening a FIFO."""
    if box is None:
        return None
    try:
        return box.read_text(INDEX, INDEX_MAX)
    except NotRegularFile as err:
        raise MemoryRefused(f"{err}; nothing was written.") from err
    except (OSError, ValueError) as err:
        raise MemoryRefused(f"Cannot read {posixpath.join(box.path, INDEX)}: {err}") from err


def _names_in_use(folder: str) -> set[str]:
    if not os.path.isdir(folder):
        return set()
    from memlens.agents.claude.includes import IncludeReader

    reader = IncludeReader("/", reader=FileReader())
    return {t.name for t, _ in scan_topics(reader, folder) if t.name}


def plan_memory(home: str, cwd: str, fact: str, *, kind: str | None = None,
                name: str | None = None, description: str | None = None,
                env: dict[str, str] | None = None,
                confirmed: bool | str = False) -> ClaudeMemoryPlan:
    """What saving `fact` writes (nothing is written); MemoryRefused says why not.

    `confirmed`: the user agreed to write into a folder the repository's settings chose —
    True for whichever folder that is (the CLI's flag, given with the command), or the folder
    the user was shown (the editor's modal): another folder is still refused."""
    if not isinstance(fact, str) or not js_trim(fact):
        raise MemoryRefused("The memory is empty: say what Claude Code should remember.")
    kind = kind or DEFAULT_TYPE
    if kind not in TOPIC_TYPES:
        raise MemoryRefused(f"type {kind!r} is not one of Claude Code's memory types: "
                            f"{', '.join(TOPIC_TYPES)}")
    place = auto_memory_folder(home, cwd, env)
    if place.folder is None or place.index is None:
        raise MemoryRefused(f"Claude Code's auto memory is off here ({place.reason}), so it "
                            "would never read this memory. Turn auto memory on (unset "
                            "CLAUDE_CODE_DISABLE_AUTO_MEMORY / CLAUDE_CODE_SIMPLE, or remove "
                            "autoMemoryEnabled: false from the settings) to save one.")
    folder = place.folder
    ok = confirmed is True or confirmed == folder
    if place.chosen_by == "repository" and not ok:
        raise RepositoryFolder(folder, place.chosen_in or "the project settings")
    gemini = posixpath.join(os.path.realpath(home), ".gemini")
    if is_subpath(gemini, os.path.realpath(folder)):
        raise MemoryRefused(f"The auto-memory folder {folder} lies in Gemini CLI's folder "
                            f"{gemini}: Memory Lens does not write Claude Code's memory there.")
    description = _one_line(description) if description is not None else description_of(fact)
    if not description:
        raise MemoryRefused("The description is empty: Claude Code decides relevance by it.")
    where = write_place(home, cwd, place, env, ok)
    box = where.open(folder, create=False)
    try:
        before = _read_index(box)
        used = _names_in_use(folder) if box is not None else set()
        return _plan(place, where, box, used, before, fact, kind, name, description)
    finally:
        if box is not None:
            box.close()


def _plan(place: AutoMemoryFolder, where: WritePlace, box: ConfinedFolder | None,
          used: set[str], before: str | None, fact: str, kind: str, name: str | None,
          description: str) -> ClaudeMemoryPlan:
    assert place.folder is not None and place.index is not None
    folder = place.folder

    def taken(slug: str) -> bool:
        return slug in used or (box is not None and box.entry(f"{slug}.md") is not None)

    if name is not None:
        name = js_trim(name)
        if not SLUG.match(name):
            raise MemoryRefused(f"name {name!r} is not a kebab-case slug (lowercase letters and "
                                "digits joined by single hyphens): Claude Code links memories "
                                "by it ([[name]])")
        if taken(name):
            raise MemoryRefused(f"A memory named {name!r} exists already in {folder}: choose "
                                "another name, or edit that memory.")
    else:
        base = slug_of(fact)
        name, n = base, 1
        while taken(name):
            n += 1
            name = f"{base}-{n}"
    topic_path = posixpath.join(folder, f"{name}.md")
    pointer = index_line(TopicEntry(f"{name}.md", description, time.time()))
    assert pointer is not None  # a slug holds nothing index_line refuses
    after = pointer + "\n" if not before else (
        before + ("" if before.endswith("\n") else "\n") + pointer + "\n")
    return ClaudeMemoryPlan(folder, topic_path, topic_text(name, description, kind, fact),
                            place.index, before, after, pointer, name, description, kind,
                            where, place.chosen_by, place.chosen_in)


def write_memory(plan: ClaudeMemoryPlan) -> None:
    """Write the plan: the topic file, then the index, each atomically, under the folder's
    lock (held by every Memory Lens writer), through the folder opened without following a
    link (`files/confined.py`). Refused (nothing written) when the file or the index changed
    since the plan was made; an index that cannot be written takes the new topic file away
    again. OSError: the write failed (the folder as it was)."""
    box = plan.place.open(plan.folder, create=True)
    assert box is not None  # created when missing
    topic = posixpath.basename(plan.topic_path)
    with box, box.lock():
        if box.entry(topic) is not None:
            raise MemoryRefused(f"{plan.topic_path} exists already: nothing was written.")
        if plan.name in _names_in_use(plan.folder):
            raise MemoryRefused(f"A memory named {plan.name!r} was saved meanwhile: nothing "
                                "was written.")
        if _read_index(box) != plan.index_before:
            raise MemoryRefused(f"{plan.index_path} changed since the preview: nothing was "
                                "written. Add the memory again.")
        box.require_file_or_absent(INDEX)
        box.write_text(topic, plan.topic_text)
        try:
            box.write_text(INDEX, plan.index_after)
        except BaseException:
            with contextlib.suppress(OSError):
                box.remove(topic)
            raise
