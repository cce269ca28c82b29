"""The VS Code settings that decide which instruction files VS Code's chat agent reads (VS Code
1.139, GitHub Copilot Chat 0.67), read from the workspace's `.vscode/settings.json` over the
user's settings file; each key's default is VS Code's own (docs/reference.md, "VS Code chat").

The settings are read as VS Code reads them: JSON with comments and trailing commas; a file it
cannot read is left out (a problem is recorded); a value of the wrong type is ignored (the
default or the user's value stands). A workspace that is not trusted (VS Code's Restricted
Mode in the editor, `--untrusted` on the command line) gives no value at all: its
`.vscode/settings.json` is not even opened, for any of the eight keys (docs/security.md, "VS
Code chat's instruction locations"). No `.code-workspace` file is read (the folder is taken
as the window's only workspace folder).

Who enabled each instruction location is kept (`ChatSettings.location_scopes`): a location a
repository's settings add is walked only inside the workspace (`locations`).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from memlens.files.structured import StructuredDataError, load_json_file

USE_INSTRUCTION_FILES = "github.copilot.chat.codeGeneration.useInstructionFiles"
USE_AGENTS_MD = "chat.useAgentsMdFile"
USE_NESTED_AGENTS_MD = "chat.useNestedAgentsMdFiles"
USE_CLAUDE_MD = "chat.useClaudeMdFile"
INCLUDE_APPLYING = "chat.includeApplyingInstructions"
INCLUDE_REFERENCED = "chat.includeReferencedInstructions"
LOCATIONS = "chat.instructionsFilesLocations"
PARENT_REPOS = "chat.useCustomizationsInParentRepositories"

# VS Code's defaults (its configuration registry).
DEFAULT_LOCATIONS: dict[str, bool] = {
    ".github/instructions": True,
    ".claude/rules": True,
    "~/.copilot/instructions": True,
    "~/.claude/rules": True,
}
BOOLEAN_DEFAULTS: dict[str, bool] = {
    USE_INSTRUCTION_FILES: True,
    USE_AGENTS_MD: True,
    USE_NESTED_AGENTS_MD: False,
    USE_CLAUDE_MD: True,
    INCLUDE_APPLYING: True,
    INCLUDE_REFERENCED: False,
    PARENT_REPOS: False,
}


@dataclass
class ChatSettings:
    values: dict[str, bool] = field(default_factory=lambda: dict(BOOLEAN_DEFAULTS))
    locations: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_LOCATIONS))
    # Where each key that is not the default came from (a settings file's path).
    origins: dict[str, str] = field(default_factory=dict)
    # Who enabled each location: ("default" | "user" | "workspace", the settings file). A
    # location a later file switches on again keeps the scope that enabled it first.
    location_scopes: dict[str, tuple[str, str | None]] = field(
        default_factory=lambda: {k: ("default", None) for k in DEFAULT_LOCATIONS})
    problems: list[str] = field(default_factory=list)  # files VS Code could not read

    def get(self, key: str) -> bool:
        return self.values[key]

    def changed(self) -> dict[str, object]:
        """The keys set in a settings file, with their values (for `show --json`)."""
        out: dict[str, object] = {k: self.values[k] for k in self.origins if k in self.values}
        if LOCATIONS in self.origins:
            out[LOCATIONS] = dict(self.locations)
        return out


def user_settings_file(home: str) -> str:
    """VS Code's user settings on Linux (code-server keeps its own under
    `~/.local/share/code-server/User`: that one is read when the first is absent)."""
    return posixpath.join(home, ".config", "Code", "User", "settings.json")


def _code_server_settings_file(home: str) -> str:
    return posixpath.join(home, ".local", "share", "code-server", "User", "settings.json")


def _apply(settings: ChatSettings, path: str, scope: str) -> None:
    try:
        data = load_json_file(path, comments=True)
    except StructuredDataError as error:
        settings.problems.append(f"{path}: {error.message}")
        return
    if not isinstance(data, dict):
        if data is not None:
            settings.problems.append(f"{path}: not a JSON object")
        return
    for key in BOOLEAN_DEFAULTS:
        value = data.get(key)
        if isinstance(value, bool):
            settings.values[key] = value
            settings.origins[key] = path
    value = data.get(LOCATIONS)
    if isinstance(value, dict):
        # VS Code merges an object setting's keys over the default's.
        for folder, enabled in value.items():
            if isinstance(enabled, bool):
                name = str(folder)
                if enabled and settings.locations.get(name) is not True:
                    settings.location_scopes[name] = (scope, path)
                settings.locations[name] = enabled
        settings.origins[LOCATIONS] = path


def read_chat_settings(workspace: str, home: str, *, trusted: bool = True) -> ChatSettings:
    """The chat settings for a window open on `workspace`: defaults, then the user's settings
    file, then the workspace's `.vscode/settings.json` (only when `trusted`)."""
    import os

    settings = ChatSettings()
    user = user_settings_file(home)
    if not os.path.lexists(user):
        user = _code_server_settings_file(home)
    if os.path.lexists(user):
        _apply(settings, user, "user")
    if trusted:
        workspace_file = posixpath.join(workspace, ".vscode", "settings.json")
        if os.path.lexists(workspace_file):
            _apply(settings, workspace_file, "workspace")
    return settings
