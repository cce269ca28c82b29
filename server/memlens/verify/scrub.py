"""What the scratch copy and the scratch HOME of `memlens verify` may hold: what decides memory,
and nothing that runs a command, reaches a server or carries a secret.

A repository's settings files can make an agent run commands at start (Claude Code's hooks,
`apiKeyHelper`, `statusLine`, `processWrapper`; Gemini CLI's `mcpServers`, `hooks`,
`tools.discoveryCommand`; Codex's `mcp_servers` and `notify`), and a user's settings carry
secrets (`env.ANTHROPIC_API_KEY`). So every settings file of the copies is rewritten to hold
**only the keys Memory Lens reads to decide memory** (an allow-list, so a key an agent adds next
week is dropped too), and the files that only configure what runs are removed
(docs/security.md, "`memlens verify` runs the agents, never the repository"). The prediction is
made on the same scrubbed copy, so the comparison stays exact; what the scrubbing drops cannot
change what Memory Lens predicts, because Memory Lens never reads it.

One exception keeps the copies faithful: Claude Code ignores a whole settings file when one of
its simple-typed keys has a value of the wrong type (agents/claude/settings_schema.py). Such
keys are kept as they are — a number where a string is expected is not a command — so the file
is ignored in the copy as it is in the user's tree.

A settings file that cannot be read (not JSON, not TOML, too large) is replaced by text that no
agent can read either, so it is ignored in the copy, never executed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memlens.agents.claude.settings_schema import invalid_setting
from memlens.agents.gemini.settings import lookup_dotted
from memlens.files.structured import StructuredDataError, load_json_file, load_toml_file
from memlens.files.walk import remove_tree, walk

# Claude Code: the keys of `.claude/settings.json` / `settings.local.json` Memory Lens reads
# (agents/claude/memory_folder.py).
CLAUDE_MEMORY_KEYS = ("autoMemoryEnabled", "autoMemoryDirectory")
# Gemini CLI: the dotted keys of `.gemini/settings.json` Memory Lens reads
# (agents/gemini/settings.py: gemini_settings_overrides); `security.auth` is what the run needs.
GEMINI_MEMORY_KEYS = (
    "context.fileName", "context.importFormat", "context.discoveryMaxDirs",
    "context.includeDirectories", "context.loadMemoryFromIncludeDirectories",
    "context.memoryBoundaryMarkers", "context.fileFiltering.respectGitIgnore",
    "context.fileFiltering.respectGeminiIgnore", "experimental.jitContext",
    "security.folderTrust.enabled", "security.auth.selectedType",
)
# Codex: the keys of `config.toml` Memory Lens reads (agents/codex/agent.py), and each
# project's `trust_level`.
CODEX_MEMORY_KEYS = ("project_doc_max_bytes", "project_doc_fallback_filenames",
                     "project_root_markers")
# OpenCode: `opencode.json[c]` keeps only its `instructions`, and of those only the globs that
# stay in the folder they are read from (no http(s) address it would fetch, no absolute or
# `~/` path, no `..`): Memory Lens reads nothing else (agents/opencode/load.py). Its
# `.opencode/` folders (plugins, tools, commands, agents: code it runs, packages it installs)
# are removed whole.
OPENCODE_CONFIG_NAMES = frozenset({"opencode.json", "opencode.jsonc"})
OPENCODE_FOLDER = ".opencode"
# Files that only configure what runs (MCP servers, hooks, environment files): removed.
REMOVED_FILES = frozenset({".mcp.json", ".env"})
# (parent folder, name) pairs removed whole: Gemini CLI's workspace extensions (MCP servers,
# hooks), GitHub Copilot CLI's repository hooks.
REMOVED_FOLDERS = frozenset({(".gemini", "extensions"), (".github", "hooks"),
                             (".pi", "extensions")})
UNREADABLE = "memlens verify: this settings file could not be read, so it was left out\n"
# The folders whose settings the agents read: one that is a link is made a real folder of
# links (settings scrubbed), so a link cannot carry unscrubbed settings into the copy.
CONFIG_FOLDERS = frozenset({".claude", ".gemini", ".codex", ".github", ".pi"})
MAX_LINKED_ENTRIES = 10_000


def scrub_tree(root: Path) -> list[str]:
    """Scrub every settings file under `root` in place (links are never followed: a linked
    settings file is replaced by a scrubbed regular copy of what it points to, read through
    the bounded reader); the notes say what was removed, relative to `root`."""
    notes: list[str] = []
    for folder, dirs, files in walk(root):
        base = Path(folder)
        parent = base.name
        for name in list(dirs):
            if name in CONFIG_FOLDERS and (base / name).is_symlink():
                _materialise(base / name)
                notes.append(f"{_rel(base / name, root)} is a link: its settings were scrubbed "
                             "in a folder of links")
            if (parent, name) in REMOVED_FOLDERS or name == OPENCODE_FOLDER:
                _remove(base / name)
                dirs.remove(name)
                notes.append(f"removed {_rel(base / name, root)}/ (it configures what runs)")
        for name in files:
            path = base / name
            if name in REMOVED_FILES:
                _remove(path)
                notes.append(f"removed {_rel(path, root)} (it configures what runs)")
            elif parent == ".claude" and name in ("settings.json", "settings.local.json"):
                _rewrite(path, _claude_settings, notes, root)
            elif parent == ".gemini" and name == "settings.json":
                _rewrite(path, _gemini_settings, notes, root)
            elif parent == ".codex" and name == "config.toml":
                _rewrite(path, _codex_config, notes, root)
            elif name in OPENCODE_CONFIG_NAMES:
                _rewrite(path, _opencode_config, notes, root)
            elif parent == ".pi" and name == "settings.json":
                # pi's project settings name packages and extensions (code it runs); no key
                # of it decides memory.
                _remove(path)
                notes.append(f"removed {_rel(path, root)} (it configures what runs)")
    return notes


def _materialise(link: Path) -> None:
    """Replace the link to a folder by a real folder whose entries link to the target's
    (bounded): what the agents read through it stays the same, and its settings files and
    removed folders meet the scrubbing above (they are walked next)."""
    target = link.resolve()
    link.unlink()
    link.mkdir()
    if not target.is_dir():
        return
    try:
        with os.scandir(target) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_LINKED_ENTRIES:
                    break
                (link / entry.name).symlink_to(os.path.join(target, entry.name))
    except OSError:
        return


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _remove(path: Path) -> None:
    remove_tree(path)


def _rewrite(path: Path, scrub: Any, notes: list[str], root: Path) -> None:
    try:
        text = scrub(str(path))
    except StructuredDataError:
        text = UNREADABLE
    dropped = text == UNREADABLE
    path.unlink(missing_ok=True)  # a link is replaced, never written through
    path.write_text(text, encoding="utf-8")
    notes.append(f"{'left out' if dropped else 'kept only the memory settings of'} "
                 f"{_rel(path, root)}")


def _claude_settings(path: str) -> str:
    data = load_json_file(path)
    if not isinstance(data, dict):
        return json.dumps(data) + "\n"  # not an object: Claude Code ignores it whole
    kept = {k: data[k] for k in CLAUDE_MEMORY_KEYS if k in data}
    for key, value in data.items():
        if key not in kept and invalid_setting({key: value}):
            kept[key] = value  # the file stays ignored as a whole, as in the user's tree
    return json.dumps(kept, indent=2, ensure_ascii=False) + "\n"


def _gemini_settings(path: str) -> str:
    data = load_json_file(path, comments=True)
    if not isinstance(data, dict):
        return "{}\n"
    kept: dict[str, Any] = {}
    for dotted in GEMINI_MEMORY_KEYS:
        found, value = lookup_dotted(data, dotted)
        if found:
            _store(kept, dotted, value)
    return json.dumps(kept, indent=2, ensure_ascii=False) + "\n"


def _store(target: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        target = target.setdefault(key, {})
    target[last] = value


def _codex_config(path: str) -> str:
    import tomli_w

    data = load_toml_file(path) or {}
    kept: dict[str, Any] = {k: data[k] for k in CODEX_MEMORY_KEYS if k in data}
    projects = data.get("projects")
    if isinstance(projects, dict):
        levels = {key: {"trust_level": entry["trust_level"]} for key, entry in projects.items()
                  if isinstance(entry, dict) and "trust_level" in entry}
        if levels:
            kept["projects"] = levels
    elif projects is not None:
        kept["projects"] = projects  # not a table: Codex refuses the file, as in the user's
    return tomli_w.dumps(kept)


def _opencode_config(path: str) -> str:
    data = load_json_file(path, comments=True)
    if not isinstance(data, dict):
        return "{}\n"
    value = data.get("instructions")
    if value is None:
        return "{}\n"
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        # OpenCode refuses the file (and does not start), as in the user's tree
        return json.dumps({"instructions": value}, ensure_ascii=False) + "\n"
    kept = [v for v in value if _stays_inside(v)]
    return json.dumps({"instructions": kept}, indent=2, ensure_ascii=False) + "\n"


def _stays_inside(pattern: str) -> bool:
    """An `instructions` entry that names files only below the folder it is read from."""
    if pattern.startswith(("https://", "http://", "~/", "/")):
        return False
    return ".." not in pattern.replace("\\", "/").split("/")
