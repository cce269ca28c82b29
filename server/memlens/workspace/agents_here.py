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

An agent's files *apply* in a folder when they are there or below it (the walk above), or
when the agent, started in the folder, loads one of them from a folder above it or from HOME:
its own `load()` says where it looks, and a file counts for the agent it is named for, as in
the walk (`named_for`).

The agents a command covers without `--agent` (`agents_shown`): the agents in use (pinned by
`MEMLENS_AGENTS` / `memlens.agents`, else every one detected on PATH, in the registry's order:
`settings.chosen_agents`), then every agent whose files apply, each once, in that order. No
agent is shown by default: where none is in use and no files apply, the list is empty (the
command says so; docs/reference.md "Which agent, which version").
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence

from memlens.agents import AGENT_IDS, FIXED_FILE_NAMES, SETTINGS_NAMED, agent_by_id
from memlens.agents.environment import env_value
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
    """The agent `path` is named for, as `agents.owner_of` decides it: `SETTINGS_NAMED`'s
    names first (the user's to choose), then the registry's order."""
    if is_context_file(path, settings.context_file_names):
        return SETTINGS_NAMED
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
    if "opencode" not in ids and any(os.path.isfile(os.path.join(r, n)) for r in roots
                                     for n in ("opencode.json", "opencode.jsonc")):
        ids.append("opencode")
    if "pi" not in ids and any(os.path.isfile(os.path.join(r, ".pi", name)) for r in roots
                               for name in ("SYSTEM.md", "APPEND_SYSTEM.md")):
        ids.append("pi")
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


# Files named for an agent by the folder they sit in rather than by their own name (the walk
# finds these folders in a root: `agents_of_files`).
_FOLDER_MARKS: tuple[tuple[str, str], ...] = (
    ("claude", "/.claude/rules/"),
    ("cursor", "/.cursor/rules/"),
    ("vscode-chat", "/.github/instructions/"),
    ("antigravity", "/.agents/rules/"), ("antigravity", "/.agents/workflows/"),
    ("antigravity", "/.agent/rules/"), ("antigravity", "/.agent/workflows/"),
    ("pi", "/.pi/"),
)


def named_for(path: str, settings: MemorySettings) -> set[str]:
    """The agents a file an agent loads counts for: the agent it is named for (`owner`), the
    agent whose folder holds it (`.claude/rules`, `.cursor/rules`, `.github/instructions`,
    `.agents/rules`), and VS Code's chat for a `.github/copilot-instructions.md`."""
    ids = {a for a, mark in _FOLDER_MARKS if mark in path}
    if (agent := owner(path, settings)) is not None:
        ids.add(agent)
    if path.endswith("/.github/copilot-instructions.md"):
        ids.add(VSCODE_CHAT)
    return ids


# Cheap signs that an agent's own file may apply above a folder or in HOME, looked for before
# the agent is imported to ask its load() (a command imports only the agents it uses): entries
# it reads in a folder or a parent, its folder in HOME, an environment variable that moves that
# folder, and places outside both. Generous on purpose: a sign only lets the load decide.
_SIGNS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "gemini": ((".gemini",), (".gemini",), (), ()),  # + the configured names (settings)
    "claude": (("CLAUDE.md", "CLAUDE.local.md", ".claude"), (".claude",),
               ("CLAUDE_CONFIG_DIR",), ("/etc/claude-code",)),
    "agents": (("AGENTS.md",), (), (), ()),
    "codex": (("AGENTS.md", "AGENTS.override.md"), (".codex",), ("CODEX_HOME",), ()),
    "copilot": ((".github",), (".copilot",), ("COPILOT_HOME",), ()),  # + XDG's (below)
    "vscode-chat": ((".github",), (".copilot",), (), ()),
    "cursor": ((".cursorrules", ".cursor"), (), (), ()),
    "antigravity": ((".agents", ".agent"), (), (), ()),
    "opencode": (("AGENTS.md", "CLAUDE.md", "CONTEXT.md", "opencode.json", "opencode.jsonc",
                  ".opencode"), (".config/opencode", ".claude/CLAUDE.md"),
                 ("OPENCODE_CONFIG_DIR",), ()),  # + XDG's (below)
    # pi: only its own names count for it (AGENTS.md and CLAUDE.md are other agents').
    "pi": (("AGENTS.MD", "CLAUDE.MD", ".pi"), (".pi",), ("PI_CODING_AGENT_DIR",), ()),
}


# The folder of `$XDG_CONFIG_HOME` (relative: from the working folder) an agent reads when the
# variable is set: OpenCode's config folder, the `.copilot` Copilot CLI moves files from.
_XDG_CONFIG_SIGNS: dict[str, str] = {"opencode": "opencode", "copilot": ".copilot"}


def _may_apply(agent_id: str, folder: str, settings: MemorySettings) -> bool:
    """A sign (`_SIGNS`) that `agent_id`'s own file may apply working in `folder`; an agent
    without an entry always may."""
    signs = _SIGNS.get(agent_id)
    if signs is None:
        return True
    names, home_names, env_names, places = signs
    if agent_id == SETTINGS_NAMED:
        names = (*names, *(posixpath.basename(n) for n in settings.context_file_names))
    if any(env_value(name) for name in env_names):
        return True
    xdg = env_value("XDG_CONFIG_HOME")
    if xdg and agent_id in _XDG_CONFIG_SIGNS and os.path.lexists(
            posixpath.join(os.path.abspath(folder), xdg, _XDG_CONFIG_SIGNS[agent_id])):
        return True
    if any(os.path.lexists(p) for p in places):
        return True
    if settings.home and any(os.path.lexists(posixpath.join(settings.home, n))
                             for n in home_names):
        return True
    current = os.path.abspath(folder)
    while True:
        if any(os.path.lexists(posixpath.join(current, n)) for n in names):
            return True
        parent = posixpath.dirname(current)
        if parent == current:
            return False
        current = parent


def agents_loading_here(folder: str, settings: MemorySettings,
                        reader: FileReader | None = None,
                        skip: Iterable[str] = ()) -> list[str]:
    """The agents (registry order, but those in `skip`) that, started in `folder`, load a
    file of their own: one above the folder (up to where the agent looks) or in HOME, by the
    agent's own `load()`. Gemini CLI counts as trusted here: its files apply even where it
    would not read them until the folder is trusted (the trust note says so)."""
    trusted = settings.model_copy(update={"trusted": True, "editor_trusted": None})
    skipped = set(skip)
    found = []
    for agent_id in AGENT_IDS:
        if agent_id in skipped or not _may_apply(agent_id, folder, settings):
            continue
        agent = agent_by_id(agent_id)
        try:
            # Folder trust is Gemini CLI's own (see above).
            memory = agent.load(folder, trusted if agent_id == "gemini" else settings, reader)
        except (OSError, ValueError):
            continue  # a folder it cannot read: nothing of it applies
        if any(f.content is not None and agent_id in named_for(f.path, settings)
               for f in memory.files):
            found.append(agent_id)
    return found


def agents_applying(folder: str, settings: MemorySettings, with_files: Sequence[str],
                    reader: FileReader | None = None, skip: Iterable[str] = ()) -> list[str]:
    """The agents (registry order) whose files apply working in `folder`: `with_files` (those
    the folder and its subfolders hold), and each other agent whose own load finds a file of
    its own above the folder or in HOME (`skip`: agents not worth that load)."""
    above = agents_loading_here(folder, settings, reader, skip={*with_files, *skip})
    return [a for a in AGENT_IDS if a in {*with_files, *above}]


def agents_shown(in_use: Sequence[str], folder: str, settings: MemorySettings,
                 with_files: Sequence[str], reader: FileReader | None = None) -> list[str]:
    """The agents to show working in `folder`: `in_use`, then every agent whose files apply
    (`agents_applying`), each once, in that order."""
    return agents_to_cover(in_use, agents_applying(folder, settings, with_files, reader,
                                                   skip=in_use))
