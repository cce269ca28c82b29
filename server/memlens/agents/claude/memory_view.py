"""Claude Code's auto memory as the editor's Memory view shows it: the index `MEMORY.md` first,
then the topic files grouped by type ("Memories · feedback"), in the order of Claude Code's
types (user, feedback, project, reference, then those without one), each by name, with its
description and age as its text."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from memlens.agents.base import AgentFile
from memlens.agents.claude.memory_topics import TOPIC_TYPES, TopicFile, saved_ago
from memlens.agents.claude.startup import ClaudeLoad


def group_of(topic: TopicFile) -> str:
    return f"Memories \u00b7 {topic.type if topic.type in TOPIC_TYPES else 'no type'}"


def group_note(topic: TopicFile) -> str:
    return " \u00b7 ".join([*([topic.description] if topic.description else []),
                            saved_ago(topic.mtime)])


def _order(topic: TopicFile) -> tuple[int, str]:
    kind = TOPIC_TYPES.index(topic.type) if topic.type in TOPIC_TYPES else len(TOPIC_TYPES)
    return kind, topic.name or topic.relative


def grouped_rows(rows: list[AgentFile], topics: list[TopicFile]) -> list[AgentFile]:
    """`rows` with the topic files' rows grouped by type and placed right after the index's
    row (where they were when there is no index row)."""
    by_path = {t.path: t for t in topics}
    picked = [i for i, r in enumerate(rows) if r.path in by_path and r.when == "on-demand"]
    if not picked:
        return rows
    taken = set(picked)
    rest = [r for i, r in enumerate(rows) if i not in taken]
    ordered = sorted((rows[i] for i in picked), key=lambda r: _order(by_path[r.path]))
    grouped = [replace(r, group=group_of(by_path[r.path]), group_note=group_note(by_path[r.path]))
               for r in ordered]
    at = next((i + 1 for i, r in enumerate(rest) if r.label == "auto"), picked[0])
    return [*rest[:at], *grouped, *rest[at:]]


def auto_memory_facts(load: ClaudeLoad) -> dict[str, object]:
    """`memlens show --agent claude --json`'s `autoMemory`: the folder, why, and its files."""
    place = load.auto_memory
    index = next((f for f in load.files if f.kind == "auto"), None)
    return {
        "enabled": bool(place and place.folder),
        "folder": place.folder if place else None,
        "reason": place.reason if place else None,
        # Who named the folder: "repository" (its own settings; Memory Lens writes there only
        # when the user confirms), "user" or "default" — and in which file or variable.
        "chosenBy": place.chosen_by if place and place.folder else None,
        "chosenIn": place.chosen_in if place and place.folder else None,
        "index": place.index if place else None,
        "indexWrittenAtStart": bool(index and index.written),
        "agentMemory": [{"agent": a.agent, "scope": a.scope, "definition": a.definition,
                         "folder": a.folder} for a in load.agent_memory],
        "topics": [{"path": t.path, "relative": t.relative, "name": t.name,
                    "description": t.description, "type": t.type,
                    "savedAt": datetime.fromtimestamp(t.mtime, UTC).isoformat()
                    if t.mtime else None, "links": t.links} for t in load.topics],
    }
