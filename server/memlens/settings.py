"""Resolving the settings that shape memory (SPEC §3.1).

Precedence, lowest first: defaults, `HOME/.gemini/settings.json`, the workspace's
`.gemini/settings.json` (only when trusted, as Gemini CLI does), the editor's `memlens.*`
settings, then command-line options. Gemini CLI's settings files may contain comments.
"""

from __future__ import annotations

import os
import re
from typing import Any

from .jsonc import read_json_file
from .model import MemorySettings
from .trust import decide_trust


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


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def load_settings(
    cwd: str,
    *,
    home: str | None = None,
    editor: dict[str, Any] | None = None,
    cli: dict[str, Any] | None = None,
) -> MemorySettings:
    """Merge every source into one MemorySettings for the workspace folder `cwd`.

    `editor` holds VS Code's `memlens.*` values (camelCase or snake_case keys).
    """
    editor_home = (editor or {}).get("home")
    home_dir = resolve_home(home or (editor_home if isinstance(editor_home, str) else None))
    merged: dict[str, Any] = {"home": home_dir}
    user = gemini_settings_overrides(read_json_file(os.path.join(home_dir, ".gemini",
                                                                 "settings.json")))
    merged.update(user)
    overrides: dict[str, Any] = {}
    editor_layer = {_snake(k): v for k, v in (editor or {}).items() if k != "home"}
    for layer in (editor_layer, cli or {}):
        overrides.update({k: v for k, v in layer.items() if v is not None})
    trusted, _ = decide_trust(
        cwd, home_dir, explicit=overrides.get("trusted"),
        folder_trust_enabled=overrides.get("folder_trust_enabled",
                                           merged.get("folder_trust_enabled", True)))
    if trusted:
        # Gemini CLI reads the workspace's settings only in a trusted folder.
        workspace = gemini_settings_overrides(
            read_json_file(os.path.join(cwd, ".gemini", "settings.json")))
        if "include_directories" in workspace and "include_directories" in user:
            workspace["include_directories"] = (user["include_directories"]
                                                + workspace["include_directories"])
        workspace.pop("folder_trust_enabled", None)
        merged.update(workspace)
    merged.update(overrides)
    return MemorySettings.model_validate(merged)
