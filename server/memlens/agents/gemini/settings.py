"""Resolving the settings that shape memory (docs/reference.md "The command line").

Precedence, lowest first: defaults, `HOME/.gemini/settings.json`, the workspace's
`.gemini/settings.json` (only when trusted, as Gemini CLI does), the editor's `memlens.*`
settings, then command-line options. Gemini CLI's settings files may contain comments.
"""

from __future__ import annotations

import json
import math
import os
import posixpath
import re
from collections.abc import Mapping
from typing import Any, Literal

from memlens.agent_versions import (
    AgentProfile,
    InstalledAgent,
    chosen_agents,
    parse_agent_spec,
    profile_for,
)
from memlens.agents.gemini.jsonc import read_settings_file
from memlens.agents.gemini.trust import decide_trust
from memlens.files.nodecompat import is_subpath, js_number, js_trim, js_truthy, resolve
from memlens.files.secrets import register_secret
from memlens.files.structured import StructuredDataError
from memlens.model import (
    MemorySettings,
    SettingsProblem,
    context_name_is_path,
    file_name_problem,
)
from memlens.protocol.wire import Severity

Origin = Literal["user", "workspace", "editor", "cli", "env"]
AGENTS_ENV = "MEMLENS_AGENTS"
_AGENTS_KEYS = {"editor": "memlens.agents", "env": AGENTS_ENV}


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


_FILE_NAME_KEYS = {"user": "context.fileName", "workspace": "context.fileName",
                   "editor": "memlens.contextFileNames", "cli": "--file-name"}
_INCLUDE_KEYS = {"user": "context.includeDirectories", "workspace": "context.includeDirectories",
                 "editor": "memlens.includeDirectories", "cli": "--include"}


class _Layer:
    """One source of settings, and the problems found in it."""

    def __init__(self, origin: Origin, source: str | None, problems: list[SettingsProblem]):
        self.origin, self.source, self.problems = origin, source, problems
        # What environment expansion put into this file's values: (the variable's value, how
        # the file named it). A value from the environment (GEMINI_API_KEY, a cloud token)
        # is never quoted back: messages show the reference as written.
        self.expanded: list[tuple[str, str]] = []

    def shown(self, value: str) -> str:
        """`value` (or a path made from it) as it may be printed: each variable's value that
        expansion put in it is shown as the reference the file wrote (`$GEMINI_API_KEY`)."""
        for secret, reference in self.expanded:
            value = value.replace(secret, reference)
        return value

    def read(self) -> Any:
        """The layer's settings file (None when there is none); one that cannot be read (not a
        regular file, too large, nested too deeply, not JSON) is reported and ignored."""
        assert self.source is not None
        try:
            return read_settings_file(self.source)
        except StructuredDataError as err:
            self.problems.append(SettingsProblem(
                origin=self.origin, source=self.source, setting="settings.json", value="",
                code="settings-unreadable", severity="error", reason=err.message,
                message=f"the settings file {self.source} {err.message}: ignored"))
            return None

    def where(self, setting: str) -> str:
        return f"{self.source} ({setting})" if self.source else setting

    def report(self, setting: str, value: str, code: str, severity: Severity, noun: str,
               reason: str) -> None:
        value = self.shown(value)
        literal = json.dumps(value, ensure_ascii=False)
        self.problems.append(SettingsProblem(
            origin=self.origin, source=self.source, setting=setting, value=value, code=code,
            severity=severity, reason=reason,
            message=f"{noun} {literal} in {self.where(setting)} {reason}: ignored"))

    def note_include(self, setting: str, directory: str, absolute: str, home: str) -> None:
        """Say, on the settings file, what an include directory gives the agents."""
        directory, absolute = self.shown(directory), self.shown(absolute)
        literal = json.dumps(directory, ensure_ascii=False)
        where = self.where(setting)
        if is_subpath(os.path.realpath(absolute), os.path.realpath(home)):
            self.problems.append(SettingsProblem(
                origin=self.origin, source=self.source, setting=setting, value=directory,
                code="settings-include-home", severity="warning", reason="contains HOME",
                message=f"include directory {literal} in {where} contains your home folder "
                        f"{home}: Gemini CLI and the chat may read every file in it (SSH keys "
                        "and shell start-up files included) and edit them with approval"))
        else:
            self.problems.append(SettingsProblem(
                origin=self.origin, source=self.source, setting=setting, value=directory,
                code="settings-include-directory", severity="info", reason="adds a folder",
                message=f"include directory {literal} in {where} makes "
                        f"{json.dumps(absolute, ensure_ascii=False)} a workspace folder of "
                        "Gemini CLI and of the chat"))

    def file_names(self, names: list[str]) -> list[str]:
        """The plain file names of `names`; the others are dropped and reported."""
        kept = []
        for name in names:
            problem = file_name_problem(name)
            if problem is None:
                kept.append(name)
                for secret, _reference in self.expanded:
                    if secret in name:
                        # Gemini CLI names its context files in what it sends (and so does
                        # `show`): a value from the environment there is redacted on output
                        register_secret(secret)
                if context_name_is_path(name):
                    shown = self.shown(name)
                    self.problems.append(SettingsProblem(
                        origin=self.origin, source=self.source,
                        setting=_FILE_NAME_KEYS[self.origin], value=shown,
                        code="settings-file-name-path", severity="warning",
                        reason="is a path",
                        message=f"context file name {json.dumps(shown, ensure_ascii=False)} in "
                                f"{self.where(_FILE_NAME_KEYS[self.origin])} is a path: Gemini "
                                "CLI reads it below each folder of the upward search and in "
                                "~/.gemini (never in subfolders), and save_memory writes "
                                f"~/.gemini/{self.shown(posixpath.normpath(name))}"))
            else:
                self.report(_FILE_NAME_KEYS[self.origin], name, "settings-invalid-file-name",
                            "error", "context file name", problem)
        return kept

    def include_directories(self, cwd: str, home: str, dirs: list[str],
                            origins: dict[str, str]) -> list[str]:
        """The include directories that exist; missing ones are dropped and reported. Those
        of a settings file are read as Gemini CLI reads them (`~`, `path.normalize`); one
        that does not exist stops Gemini CLI 0.43 at start, so that is an error."""
        kept = []
        setting = _INCLUDE_KEYS[self.origin]
        for written in dirs:
            directory = written
            if self.source is not None:
                directory = resolve_include_path(written, home)
            absolute = resolve(cwd, directory)
            if os.path.isdir(absolute):
                kept.append(directory)
                origins.setdefault(directory, self.where(setting))
                if self.source is not None:
                    self.note_include(setting, written, absolute, home)
            elif self.source is not None:
                failure = ("Path is not a directory" if os.path.exists(absolute)
                           else "Directory does not exist")
                self.report(setting, written, "settings-include-not-found", "error",
                            "include directory",
                            f"does not exist as a folder: Gemini CLI stops at start "
                            f"(\"{failure}: {self.shown(absolute)}\"); the preview leaves it out")
            else:
                self.report(setting, written, "settings-include-not-found", "warning",
                            "include directory", "does not exist")
        return kept


def env_agent_pins() -> list[str]:
    """The `NAME[@VERSION]` pins of the MEMLENS_AGENTS environment variable (comma-separated),
    as written (not checked)."""
    return [p.strip() for p in os.environ.get(AGENTS_ENV, "").split(",") if p.strip()]


def _agent_pins(merged: dict[str, Any], problems: list[SettingsProblem]
                ) -> tuple[Origin, list[str]]:
    """The `NAME[@VERSION]` pins and where they came from: `memlens.agents` (or `--agent`,
    checked by the command line already), else the MEMLENS_AGENTS environment variable
    (comma-separated). Bad pins are dropped and reported."""
    origin: Origin
    if isinstance(merged.get("agents"), list) and merged["agents"]:
        origin, raw = "editor", [p for p in merged["agents"] if isinstance(p, str)]
    else:
        origin, raw = "env", env_agent_pins()
    pins = []
    for pin in (p.strip() for p in raw):
        if not pin:
            continue
        try:
            parse_agent_spec(pin)
        except ValueError as err:
            _Layer(origin, None, problems).report(_AGENTS_KEYS[origin], pin,
                                                   "settings-invalid-agent", "error", "agent",
                                                   str(err))
            continue
        pins.append(pin)
    return origin, pins


def _choose_agents(merged: dict[str, Any], installed: Mapping[str, InstalledAgent],
                   problems: list[SettingsProblem]) -> list[AgentProfile]:
    """The agents shown, the chosen first, and (unless the command line fixed it) Gemini CLI's
    profile: the pinned Gemini CLI's, else the detected one's, else the newest (0.44+)."""
    _, pins = _agent_pins(merged, problems)
    merged["agents"] = pins
    chosen = chosen_agents(pins, installed)
    if "gemini_profile" not in merged:
        gemini = next((p for p in chosen if p.agent == "gemini"), None)
        if gemini is None:
            detected = installed.get("gemini")
            gemini = profile_for("gemini", detected.version if detected else None)
        merged["gemini_profile"] = gemini.profile
    return chosen


_ENV_VAR = re.compile(r"\$(?:([A-Za-z0-9_]+)|\{([^}]+?)(?::-([^}]*))?\})")


# Variables whose values are no secret: the home folder, the user and the usual folders are in
# every path memlens prints (`~/.gemini/GEMINI.md` written out), so shown as they expand —
# Gemini CLI's own start error names `$HOME/inc` expanded, and so does the diagnostic.
_PUBLIC_VARIABLES = frozenset({
    "HOME", "USERPROFILE", "USER", "USERNAME", "LOGNAME", "PWD", "TMPDIR", "TMP", "TEMP",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
})


def expand_env_vars(value: Any, env: Mapping[str, str] | None = None,
                    expanded: list[tuple[str, str]] | None = None) -> Any:
    """Gemini CLI's `resolveEnvVarsInObject`: `$VAR`, `${VAR}` and `${VAR:-default}` in every
    string value of a settings file (not in keys) become the variable's value; an unset
    variable without a default stays as written. `expanded` collects (a variable's value, the
    reference that named it) for every value taken from the environment, longest first, so
    that messages can show the reference instead (`_Layer.shown`)."""
    environ = os.environ if env is None else env
    if isinstance(value, str):
        def one(match: re.Match[str]) -> str:
            name = match[1] or match[2] or ""
            if not name:
                return match[0]
            if name in environ:
                if expanded is not None and environ[name] and name not in _PUBLIC_VARIABLES:
                    expanded.append((environ[name], match[0]))
                return environ[name]
            return match[3] if match[3] is not None else match[0]

        return _ENV_VAR.sub(one, value)
    if isinstance(value, list):
        return [expand_env_vars(v, environ, expanded) for v in value]
    if isinstance(value, dict):
        return {k: expand_env_vars(v, environ, expanded) for k, v in value.items()}
    return value


def max_dirs_budget(value: Any) -> int:
    """`context.discoveryMaxDirs` as Gemini CLI's folder search counts it (`scanned < value`,
    batches of `value - scanned`): a fraction rounds up, a numeric string counts as its number,
    zero, a negative value or anything else that is not a number reads no folder at all.
    Infinity is our "no cap" (-1)."""
    number = js_number(value)
    if number != number or number <= 0:
        return 0
    if number == float("inf"):
        return -1
    return math.ceil(number)


def resolve_include_path(directory: str, home: str) -> str:
    """Gemini CLI's `resolvePath` for an include directory: `~` or `~/…` and `%userprofile%…`
    start at HOME, then `path.normalize` (a relative path stays relative to the working
    folder)."""
    if not directory:
        return ""
    expanded = directory
    if directory.lower().startswith("%userprofile%"):
        expanded = home + directory[len("%userprofile%"):]
    elif directory == "~" or directory.startswith("~/"):
        expanded = home + directory[1:]
    normal = posixpath.normpath(expanded)
    if expanded.endswith("/") and normal != "/":
        normal += "/"  # path.normalize keeps a trailing slash
    return normal


def lookup_dotted(data: Any, dotted: str) -> tuple[bool, Any]:
    """(present, value) of a dotted settings key ("context.fileName") in nested objects."""
    for key in dotted.split("."):
        if not isinstance(data, dict) or key not in data:
            return False, None
        data = data[key]
    return True, data


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or (isinstance(value, str)
                                       and value.lower() in ("true", "false"))


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and js_trim(value) != "" and js_number(value) == js_number(
        value)


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


_SCHEMA: dict[str, Any] = {
    "context": dict, "context.fileFiltering": dict, "experimental": dict, "security": dict,
    "security.folderTrust": dict,
    "context.fileName": lambda v: isinstance(v, str) or _is_strings(v),
    "context.importFormat": lambda v: isinstance(v, str),
    "context.discoveryMaxDirs": _is_number,
    "context.memoryBoundaryMarkers": _is_strings,
    "context.includeDirectories": _is_strings,
    "context.loadMemoryFromIncludeDirectories": _is_bool,
    "context.fileFiltering.respectGitIgnore": _is_bool,
    "context.fileFiltering.respectGeminiIgnore": _is_bool,
    "experimental.jitContext": _is_bool,
    "security.folderTrust.enabled": _is_bool,
}


def _schema_valid(data: Any) -> bool:
    """Whether Gemini CLI's settings schema accepts the memory settings of this file (the
    other settings are assumed valid). A null is never valid (the schema's fields are
    optional, not nullable)."""
    if not isinstance(data, dict):
        return False
    for key, check in _SCHEMA.items():
        present, value = lookup_dotted(data, key)
        if not present:
            continue
        ok = isinstance(value, dict) if check is dict else check(value)
        if not ok:
            return False
    return True


def gemini_settings_overrides(data: Any, layer: _Layer | None = None) -> dict[str, Any]:
    """Map one Gemini CLI settings.json onto our setting names, reading each value as Gemini
    CLI 0.43 does: environment variables expanded, then JavaScript's truthiness for the
    switches and its number conversion for the folder budget (a value of the wrong type is
    only a warning there, and is used as it is)."""
    layer = layer or _Layer("user", None, [])
    found: list[tuple[str, str]] = []
    data = expand_env_vars(data, expanded=found)
    layer.expanded = sorted(set(found), key=lambda pair: len(pair[0]), reverse=True)
    # A file that passes Gemini CLI's schema is used as the schema reads it ("true"/"false"
    # and numeric strings become booleans and numbers); one that fails it only warns, and its
    # values are used as written (JavaScript's truthiness, its number comparison).
    valid = _schema_valid(data)
    out: dict[str, Any] = {}
    name = _get(data, "context.fileName")
    if isinstance(name, str):
        name = [name]
    if isinstance(name, list):
        # setGeminiMdFilename trims each name; an empty string or list leaves GEMINI.md.
        # (A name that is blank is kept as written, so the problem reported names it.)
        trimmed = [js_trim(n) or n for n in name if isinstance(n, str)]
        names = layer.file_names(trimmed)
        # A name given twice is searched twice; a file that sets no usable name (a blank
        # string, an empty list) still replaces an earlier file's names: GEMINI.md.
        out["context_file_names"] = names or ["GEMINI.md"]
    switches = {
        # `?? true`: only a missing value keeps the default
        "experimental.jitContext": ("jit_context", True),
        "security.folderTrust.enabled": ("folder_trust_enabled", True),
        # spread over the defaults: null is a value (false)
        "context.fileFiltering.respectGitIgnore": ("respect_git_ignore", False),
        "context.fileFiltering.respectGeminiIgnore": ("respect_gemini_ignore", False),
        # `|| false`
        "context.loadMemoryFromIncludeDirectories": ("load_memory_from_include_directories",
                                                     False),
    }
    for key, (field, null_keeps_default) in switches.items():
        present, value = lookup_dotted(data, key)
        if not present or (value is None and null_keeps_default):
            continue
        if valid and isinstance(value, str):
            value = value.lower() == "true"
        out[field] = js_truthy(value)
    present, budget = lookup_dotted(data, "context.discoveryMaxDirs")
    if present:
        out["discovery_max_dirs"] = max_dirs_budget(budget)
    present, import_format = lookup_dotted(data, "context.importFormat")
    if present:  # `|| "tree"`, then only "flat" is flat: a later file's "" means tree
        out["import_format"] = "flat" if import_format == "flat" else "tree"
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
    installed: Mapping[str, InstalledAgent] | None = None,
) -> MemorySettings:
    """Merge every source into one MemorySettings for the workspace folder `cwd`.

    `editor` holds VS Code's `memlens.*` values (camelCase or snake_case keys). Settings that
    name paths are checked whatever their source: a context file name must be a plain file
    name, an include directory must exist. What is dropped is kept in `settings.problems`.
    `installed`: the agents found on PATH (`agent_versions.detect_installed`), which decide
    the agents shown and Gemini CLI's profile when nothing pins them
    (docs/reference.md "Which agent, which version").
    """
    editor_home = (editor or {}).get("home")
    home_dir = resolve_home(home or (editor_home if isinstance(editor_home, str) else None))
    problems: list[SettingsProblem] = []
    origins: dict[str, str] = {}
    merged: dict[str, Any] = {"home": home_dir}
    user_file = os.path.join(home_dir, ".gemini", "settings.json")
    user_layer = _Layer("user", user_file, problems)
    user = gemini_settings_overrides(user_layer.read(), user_layer)
    merged.update(user)
    overrides: dict[str, Any] = {}
    editor_layer = {_snake(k): v for k, v in (editor or {}).items() if k != "home"}
    options: list[tuple[Origin, dict[str, Any]]] = [("editor", editor_layer), ("cli", cli or {})]
    for origin, values in options:
        layer = _Layer(origin, None, problems)
        values = {k: v for k, v in values.items() if v is not None}
        names = values.get("context_file_names")
        if isinstance(names, list):
            names = layer.file_names([n for n in names if isinstance(n, str)])
            if names:
                values["context_file_names"] = names
            else:
                values.pop("context_file_names")
        overrides.update(values)
    trusted, _ = decide_trust(
        cwd, home_dir, explicit=overrides.get("trusted"), editor=overrides.get("editor_trusted"),
        folder_trust_enabled=overrides.get("folder_trust_enabled",
                                           merged.get("folder_trust_enabled", True)))
    if "include_directories" in user:
        user["include_directories"] = user_layer.include_directories(
            cwd, home_dir, user["include_directories"], origins)
        merged["include_directories"] = user["include_directories"]
    if trusted:
        # Gemini CLI reads the workspace's settings only in a trusted folder.
        workspace_file = os.path.join(cwd, ".gemini", "settings.json")
        workspace_layer = _Layer("workspace", workspace_file, problems)
        workspace = gemini_settings_overrides(workspace_layer.read(), workspace_layer)
        if "include_directories" in workspace:
            workspace["include_directories"] = workspace_layer.include_directories(
                cwd, home_dir, workspace["include_directories"], origins)
            if "include_directories" in user:
                workspace["include_directories"] = (user["include_directories"]
                                                    + workspace["include_directories"])
        workspace.pop("folder_trust_enabled", None)
        merged.update(workspace)
    for origin, values in options:
        dirs = values.get("include_directories")
        if isinstance(dirs, list):
            origins.clear()  # the editor's or the command line's list replaces the others
            overrides["include_directories"] = _Layer(origin, None, problems).include_directories(
                cwd, home_dir, [d for d in dirs if isinstance(d, str)], origins)
    merged.update(overrides)
    chosen = _choose_agents(merged, installed or {}, problems)
    settings = MemorySettings.model_validate(merged)
    settings._chosen_agents = chosen
    settings._problems = problems
    settings._include_origins = {d: origins[d] for d in settings.include_directories
                                 if d in origins}
    return settings
