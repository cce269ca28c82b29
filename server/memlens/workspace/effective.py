"""The effective context of a workspace, and what a change does to it (pure engine).

The *effective context* of a workspace, for a list of agents, is for each agent and each
*folder of interest* the text that agent sends at start working in that folder: its
`AgentMemory.payloads` (the exact strings of its first request,
docs/reference.md "Which agent, which version") joined with one newline. Folders of interest: every
workspace root, and every folder holding a memory file by any registered agent's names (GEMINI.md or
the configured names, CLAUDE.md, CLAUDE.local.md, `.claude/CLAUDE.md` counting for the folder
holding `.claude`, AGENTS.md, AGENTS.override.md), as found by the workspace walk (bounded by
`memlens.maxIndexedFolders`) or the language server's index. A folder an agent reads nothing in has
the empty text.

`diff(before, after)` compares two effective contexts key by key (agent, folder) and returns
one `ContextChange` per key whose text differs, with a unified diff (difflib, 3 lines of
context), in a stable order: the agents in the order given, then folders by path.

Two trees (git revisions materialised in temporary folders) are compared with their
temporary roots mapped back to the real root (`map_root`): a payload names its files by
absolute path, and only content changes should show.
"""

from __future__ import annotations

import difflib
import os
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from memlens.agents import agent_by_id, all_agents, workspace_file_names
from memlens.agents.base import MemoryAgent
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import is_subpath
from memlens.model import MemorySettings, gemini_profile_for

PAYLOAD_SEPARATOR = "\n"
CONTEXT_LINES = 3


@dataclass(frozen=True)
class ChosenAgent:
    """An agent to compare, at the profile it is shown with."""

    agent: MemoryAgent
    name: str  # what `--agent` takes: `gemini@0.44+`, `claude@2.1`, `agents`
    version: str | None = None  # the Gemini CLI version/profile its settings follow

    @property
    def id(self) -> str:
        return self.agent.id

    @property
    def label(self) -> str:
        return self.agent.label

    def settings(self, settings: MemorySettings) -> MemorySettings:
        """`settings` with Gemini CLI's profile set for this agent's version."""
        if self.agent.id != "gemini" or self.version is None:
            return settings
        profile = gemini_profile_for(self.version)
        if profile == settings.gemini_profile:
            return settings
        return settings.model_copy(update={"gemini_profile": profile})


def chosen(profiles: Iterable[tuple[str, str, str | None]]) -> list[ChosenAgent]:
    """ChosenAgents from (agent id, name, version) triples (`agent_versions.AgentProfile`'s
    `agent`, `name` and `release or profile`), each agent id once (the first wins)."""
    out: dict[str, ChosenAgent] = {}
    for agent_id, name, version in profiles:
        out.setdefault(agent_id, ChosenAgent(agent_by_id(agent_id), name, version))
    return list(out.values())


Key = tuple[str, str]  # (agent id, folder)


@dataclass(frozen=True)
class ContextChange:
    """What changed for one agent working in one folder."""

    agent: str
    agent_label: str
    folder: str
    before: str
    after: str
    diff: str  # unified diff, `before` → `after`
    added: int  # lines added
    removed: int  # lines removed


def memory_file_names(settings: MemorySettings) -> list[str]:
    """Every registered agent's memory-file names (the walk's)."""
    return workspace_file_names(settings)


def folder_of(path: str) -> str:
    """The folder a memory file puts an agent to work in (`.claude/CLAUDE.md`: the folder
    holding `.claude`)."""
    folder = posixpath.dirname(path)
    if posixpath.basename(folder) == ".claude":
        folder = posixpath.dirname(folder)
    return folder


def folders_of_interest(roots: Sequence[str], memory_files: Iterable[str]) -> list[str]:
    """Each root, then each folder under a root holding one of `memory_files`, sorted."""
    inside = {folder_of(p) for p in memory_files}
    inside = {f for f in inside if any(is_subpath(r, f) for r in roots)}
    return list(dict.fromkeys([*roots, *sorted(inside - set(roots))]))


def payload_text(agent: MemoryAgent, folder: str, settings: MemorySettings,
                 reader: FileReader | None = None) -> str:
    """What `agent` sends at start working in `folder` (its payloads, joined); '' when the
    folder does not exist."""
    if not os.path.isdir(folder):
        return ""
    memory = agent.load(folder, settings, reader)
    return PAYLOAD_SEPARATOR.join(memory.payloads)


def effective_context(agents: Sequence[ChosenAgent], folders: Sequence[str],
                      settings_for: Callable[[str], MemorySettings],
                      reader: Callable[[], FileReader] = FileReader) -> dict[Key, str]:
    """(agent id, folder) → the text it sends at start there. `settings_for(folder)`: the
    settings of the workspace folder holding it; `reader()`: a reader per agent (each agent
    reads the files afresh)."""
    out: dict[Key, str] = {}
    for chosen_agent in agents:
        files = reader()
        for folder in folders:
            settings = chosen_agent.settings(settings_for(folder))
            out[(chosen_agent.id, folder)] = payload_text(chosen_agent.agent, folder,
                                                          settings, files)
    return out


def map_root(text: str, temporary: str, real: str) -> str:
    """`text` with the temporary root written as the real root (temporary roots are unique
    random folder names, so a plain replacement finds only them)."""
    return text.replace(temporary, real) if temporary != real else text


def map_context(context: Mapping[Key, str], temporary: str, real: str) -> dict[Key, str]:
    """An effective context computed in a temporary tree, keyed and written as in the real
    one."""
    return {(agent, map_root(folder, temporary, real)): map_root(text, temporary, real)
            for (agent, folder), text in context.items()}


def unified(before: str, after: str, from_name: str, to_name: str) -> tuple[str, int, int]:
    """(the unified diff, lines added, lines removed); a text without a final newline is
    marked as `diff` marks it."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    lines: list[str] = []
    added = removed = 0
    for line in difflib.unified_diff(old, new, from_name, to_name, n=CONTEXT_LINES):
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
        if line.endswith("\n"):
            lines.append(line)
        else:
            lines.append(line + "\n\\ No newline at end of file\n")
    return "".join(lines), added, removed


def diff(before: Mapping[Key, str], after: Mapping[Key, str],
         agent_order: Sequence[str] | None = None,
         names: Callable[[Key], tuple[str, str]] | None = None) -> list[ContextChange]:
    """One change per (agent, folder) whose text differs (a key on one side only counts as
    '' on the other). Ordered by `agent_order` (default: the registry's), then folder.
    `names(key)` gives the diff's (from, to) file names (default `a/<folder>`, `b/<folder>`)."""
    order = list(agent_order or [a.id for a in all_agents()])
    changes = []
    for key in sorted(set(before) | set(after),
                      key=lambda k: (order.index(k[0]) if k[0] in order else len(order),
                                     k[0], k[1])):
        old, new = before.get(key, ""), after.get(key, "")
        if old == new:
            continue
        agent, folder = key
        from_name, to_name = names(key) if names else (f"a/{folder}", f"b/{folder}")
        text, added, removed = unified(old, new, from_name, to_name)
        label = next((a.label for a in all_agents() if a.id == agent), agent)
        changes.append(ContextChange(agent, label, folder, old, new, text, added, removed))
    return changes


def summary(changes: Sequence[ContextChange], trigger: str | None = None,
            several: bool = False) -> str:
    """One sentence: "GEMINI.md changes what Claude Code reads in 3 folders and what Gemini
    CLI reads in 1 folder" ("" when nothing changed); `several`: the trigger names more than
    one file ("… change what …")."""
    if not changes:
        return ""
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.agent_label] = counts.get(change.agent_label, 0) + 1
    parts = [f"what {label} reads in {n} folder{'s' if n != 1 else ''}"
             for label, n in counts.items()]
    said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    verb = "change" if several else "changes"
    return f"{trigger + ' ' + verb if trigger else verb.capitalize()} {said}"


@dataclass
class LastChange:
    """The last change seen for one (agent, folder), and the file whose save made it."""

    change: ContextChange
    trigger: str  # the path of the file saved (or changed on disk)


@dataclass
class EffectiveState:
    """What the language server remembers between saves (on the `WorkspaceService`): the
    chosen agents, the effective context as last saved (`baseline`: None until it is first
    taken), and the last change per (agent, folder) for the diff request."""

    agents: list[ChosenAgent] | None = None
    baseline: dict[Key, str] | None = None
    last: dict[Key, LastChange] | None = None

    def advance(self, now: dict[Key, str], trigger: str) -> list[ContextChange]:
        """`now` becomes the baseline; the changes from the previous one (none the first
        time), remembered per key. An agent with no key in the previous baseline (it joined
        the comparison since) has no changes yet: what it read before is not known."""
        before, self.baseline = self.baseline, now
        if before is None:
            return []
        known = {agent for agent, _folder in before}
        changes = diff(before, {k: v for k, v in now.items() if k[0] in known},
                       [a.id for a in self.agents or []])
        if self.last is None:
            self.last = {}
        for change in changes:
            self.last[(change.agent, change.folder)] = LastChange(change, trigger)
        return changes
