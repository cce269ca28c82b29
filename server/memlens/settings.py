"""Resolving the settings that shape memory (SPEC §3.1).

Precedence, lowest first: defaults, `HOME/.gemini/settings.json`, the workspace's
`.gemini/settings.json` (only when trusted, as Gemini CLI does), the editor's `memlens.*`
settings, then command-line options. Gemini CLI's settings files may contain comments.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from .model import MemorySettings

_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*[\s\S]*?\*/')


def strip_json_comments(text: str) -> str:
    return _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)


def read_json_file(path: str | Path) -> Any:
    """Parsed JSON (comments and trailing commas tolerated), or None if missing or invalid."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    text = re.sub(r",(\s*[}\]])", r"\1", strip_json_comments(text))
    try:
        return json.loads(text)
    except ValueError:
        return None


def resolve_home(explicit: str | None = None) -> str:
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    env = os.environ.get("GEMINI_CLI_HOME")
    if env:
        return os.path.abspath(env)
    return os.path.expanduser("~")


def _get(data: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def gemini_settings_overrides(data: Any) -> dict[str, Any]:
    """Map one Gemini CLI settings.json onto our setting names."""
    out: dict[str, Any] = {}
    name = _get(data, "context.fileName")
    if isinstance(name, str) and name.strip():
        out["context_file_names"] = [name]
    elif isinstance(name, list):
        names = [n for n in name if isinstance(n, str) and n.strip()]
        if names:
            out["context_file_names"] = names
    simple = {
        "experimental.jitContext": ("jit_context", bool),
        "context.discoveryMaxDirs": ("discovery_max_dirs", int),
        "context.importFormat": ("import_format", str),
        "context.loadMemoryFromIncludeDirectories": ("load_memory_from_include_directories", bool),
        "context.fileFiltering.respectGitIgnore": ("respect_git_ignore", bool),
        "context.fileFiltering.respectGeminiIgnore": ("respect_gemini_ignore", bool),
        "security.folderTrust.enabled": ("folder_trust_enabled", bool),
    }
    for key, (field, kind) in simple.items():
        value = _get(data, key)
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            if field == "import_format" and value not in ("tree", "flat"):
                continue
            out[field] = value
    markers = _get(data, "context.memoryBoundaryMarkers")
    if isinstance(markers, list):
        out["memory_boundary_markers"] = [m for m in markers if isinstance(m, str)]
    includes = _get(data, "context.includeDirectories")
    if isinstance(includes, list):
        out["include_directories"] = [d for d in includes if isinstance(d, str)]
    return out


def load_settings(
    cwd: str,
    *,
    home: str | None = None,
    editor: dict[str, Any] | None = None,
    cli: dict[str, Any] | None = None,
    read_workspace_file: bool = True,
) -> MemorySettings:
    """Merge every source into one MemorySettings for the workspace folder `cwd`."""
    home_dir = resolve_home(home)
    merged: dict[str, Any] = {"home": home_dir}
    user = gemini_settings_overrides(read_json_file(os.path.join(home_dir, ".gemini",
                                                                 "settings.json")))
    merged.update(user)
    if read_workspace_file:
        workspace_file = os.path.join(cwd, ".gemini", "settings.json")
        workspace = gemini_settings_overrides(read_json_file(workspace_file))
        # Gemini CLI appends includeDirectories across scopes; other arrays replace.
        if "include_directories" in workspace and "include_directories" in user:
            workspace["include_directories"] = (user["include_directories"]
                                                + workspace["include_directories"])
        merged.update(workspace)
    for layer in (editor or {}, cli or {}):
        merged.update({k: v for k, v in layer.items() if v is not None})
    return MemorySettings.model_validate(merged)
