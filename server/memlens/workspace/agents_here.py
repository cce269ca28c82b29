"""Which agents have memory files in a folder, and which agents a command covers there (pure
engine; issue 24).

An agent *has files* in a folder when the folder, or a folder below it, holds a memory file
named for it: `GEMINI.md` (or the configured names) for Gemini CLI, `CLAUDE.md`,
`CLAUDE.local.md`, `.claude/CLAUDE.md` or a `.claude/rules` folder for Claude Code,
`AGENTS.override.md` for Codex, `.github/copilot-instructions.md` or a
`.github/instructions` folder in a root for VS Code's chat, `.cursorrules` or a `.cursor/rules`
folder (in the folder itself) for Cursor, `.agents/rules` or `.agents/workflows` (`.agent/…` in
older workspaces) in the folder itself for Antigravity CLI, and `AGENTS.md` for the AGENTS.md
convention — the agent the
project names an `AGENTS.md` for (`agents.owner_of`) — or for Codex when Codex is among the
agents in use (it reads `AGENTS.md` exactly; one of the two is enough). The walk is the
workspace walk: ignore files honoured, at most `memlens.maxIndexedFolders` folders read.

The agents a command covers without `--agent`: the agents in use (pinned by
`MEMLENS_AGENTS` / `memlens.agents`, else detected on PATH: `settings.chosen_agents`), then
every agent with files, each once, in that order.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence

from memlens.agents import AGENT_IDS, FIXED_FILE_NAMES
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings, is_context_file

CODEX = "codex"
CONVENTION = "agents"
VSCODE_CHAT = "vscode-chat"


def file_names(settings: MemorySettings) -> list[str]:
    """Every agent's memory-file names (as `agents.workspace_file_names`, without importing
    the agents: a folder with Gemini CLI's files alone never loads the others)."""
    return list(dict.fromkeys([*settings.context_file_names,
                               *(n for names in FIXED_FILE_NAMES.values() for n in names)]))


def owner(path: str, settings: MemorySettings) -> str | None:
    """The agent `path` is named for, as `agents.owner_of` decides it: the primary agent's
    names first (the user's to choose), then the registry's order."""
    if is_context_file(path, settings.context_file_names):
        return AGENT_IDS[0]
    name = posixpath.basename(path)
    return next((a for a in AGENT_IDS if name in FIXED_FILE_NAMES.get(a, ())), None)


def owners(paths: Iterable[str], settings: MemorySettings) -> list[str]:
    """The agents (ids, in the registry's order) the files `paths` are named for."""
    found = {agent for p in paths if (agent := owner(p, settings)) is not None}
    return [a for a in AGENT_IDS if a in found]


def agents_with_files(roots: Sequence[str], settings: MemorySettings,
                      reader: FileReader | None = None) -> list[str]:
    """The agents whose memory files the folders `roots` (and their subfolders) hold."""
    from memlens.workspace.queries import workspace_files_named

    names = file_names(settings)
    found = workspace_files_named(MemoryEngine(settings, reader), list(roots), names)
    return agents_of_files(roots, (p for n in names for p in found[n]), settings)


def agents_of_files(roots: Sequence[str], found: Iterable[str],
                    settings: MemorySettings) -> list[str]:
    """The agents of the memory files `found` under `roots` (a walk's, or the language
    server index's), and Claude Code for a root holding `.claude/rules`."""
    ids = owners(found, settings)
    if "claude" not in ids and any(os.path.isdir(os.path.join(r, ".claude", "rules"))
                                   for r in roots):
        ids.append("claude")
    # VS Code's chat: a root's `.github/copilot-instructions.md` or `.github/instructions`
    # (its other files, AGENTS.md and CLAUDE.md, are other agents' by name).
    if VSCODE_CHAT not in ids and any(
            os.path.isfile(os.path.join(r, ".github", "copilot-instructions.md"))
            or os.path.isdir(os.path.join(r, ".github", "instructions")) for r in roots):
        ids.append(VSCODE_CHAT)
    if "cursor" not in ids and any(os.path.isdir(os.path.join(r, ".cursor", "rules"))
                                   for r in roots):
        ids.append("cursor")
    if "antigravity" not in ids and any(
            os.path.isdir(os.path.join(r, folder, sub)) for r in roots
            for folder in (".agents", ".agent") for sub in ("rules", "workflows")):
        ids.append("antigravity")
    return [a for a in AGENT_IDS if a in ids]


def chosen_ids(settings: MemorySettings) -> list[str]:
    """The agents in use (pinned, else detected), each once, in their order."""
    return list(dict.fromkeys(p.agent for p in settings.chosen_agents if p.agent in AGENT_IDS))


def agents_to_cover(chosen: Sequence[str], with_files: Sequence[str]) -> list[str]:
    """The agents in use, then every agent with files; the AGENTS.md convention is left out
    when Codex is covered (it reads the same `AGENTS.md`)."""
    ids = list(dict.fromkeys([*chosen, *with_files]))
    if CODEX in ids and CONVENTION in ids and CONVENTION not in chosen:
        ids.remove(CONVENTION)
    return ids
