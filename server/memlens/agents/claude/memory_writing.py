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
removed again, so a failure leaves the folder as it was. A name in use (by a topic file's
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

from memlens.agents.claude.memory_folder import auto_memory_folder
from memlens.agents.claude.memory_index import TopicEntry, index_line
from memlens.agents.claude.memory_topics import SLUG, TOPIC_TYPES, scan_topics
from memlens.files.atomic import atomic_write, memory_lock
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import is_subpath, js_trim
from memlens.text.frontmatter import yaml_mapping

DEFAULT_TYPE = "project"
NAME_WORDS = 6
NAME_MAX = 48
DESCRIPTION_MAX = 150


class MemoryRefused(ValueError):
    """Why the memory was not saved, in a sentence to show as it is."""


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


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as err:
        raise MemoryRefused(f"Cannot read {path}: {err}") from err


def _names_in_use(folder: str) -> set[str]:
    if not os.path.isdir(folder):
        return set()
    from memlens.agents.claude.includes import IncludeReader

    reader = IncludeReader("/", reader=FileReader())
    return {t.name for t, _ in scan_topics(reader, folder) if t.name}


def plan_memory(home: str, cwd: str, fact: str, *, kind: str | None = None,
                name: str | None = None, description: str | None = None,
                env: dict[str, str] | None = None) -> ClaudeMemoryPlan:
    """What saving `fact` writes (nothing is written); MemoryRefused says why not."""
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
    gemini = posixpath.join(os.path.realpath(home), ".gemini")
    if is_subpath(gemini, os.path.realpath(folder)):
        raise MemoryRefused(f"The auto-memory folder {folder} lies in Gemini CLI's folder "
                            f"{gemini}: Memory Lens does not write Claude Code's memory there.")
    description = _one_line(description) if description is not None else description_of(fact)
    if not description:
        raise MemoryRefused("The description is empty: Claude Code decides relevance by it.")
    used = _names_in_use(folder)

    def taken(slug: str) -> bool:
        return slug in used or os.path.lexists(posixpath.join(folder, f"{slug}.md"))

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
    before = _read(place.index)
    after = pointer + "\n" if not before else (
        before + ("" if before.endswith("\n") else "\n") + pointer + "\n")
    return ClaudeMemoryPlan(folder, topic_path, topic_text(name, description, kind, fact),
                            place.index, before, after, pointer, name, description, kind)


def write_memory(plan: ClaudeMemoryPlan) -> None:
    """Write the plan: the topic file, then the index, each atomically, under the folder's
    lock (held by every Memory Lens writer). Refused (nothing written) when the file or the
    index changed since the plan was made; an index that cannot be written takes the new
    topic file away again. OSError: the write failed (the folder as it was)."""
    with memory_lock(plan.index_path):
        if os.path.lexists(plan.topic_path):
            raise MemoryRefused(f"{plan.topic_path} exists already: nothing was written.")
        if plan.name in _names_in_use(plan.folder):
            raise MemoryRefused(f"A memory named {plan.name!r} was saved meanwhile: nothing "
                                "was written.")
        if _read(plan.index_path) != plan.index_before:
            raise MemoryRefused(f"{plan.index_path} changed since the preview: nothing was "
                                "written. Add the memory again.")
        os.makedirs(plan.folder, exist_ok=True)
        atomic_write(plan.topic_path, plan.topic_text)
        try:
            atomic_write(plan.index_path, plan.index_after)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(plan.topic_path)
            raise
