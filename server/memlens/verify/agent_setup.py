"""How each real agent is run once, offline, against the recording fake model: its command
line, its whole environment and its scratch HOME (shared by `memlens verify`,
memlens.verify.run, and the conformance harness, tests/conformance/agents.py). Where in the
recorded requests the memory sits is memlens.verify.capture's part."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from memlens.files.structured import load_json_file

PROMPT = "Read the file the tool call names, then stop."

# OpenCode offline: its whole configuration in the environment (a provider named `fake` on
# the recording model), nothing written into the tree or HOME.
OPENCODE_CONFIG = {
    "model": "fake/fake-model", "small_model": "fake/fake-model", "autoupdate": False,
    "share": "disabled",
    "provider": {"fake": {
        "npm": "@ai-sdk/openai-compatible", "name": "fake",
        "options": {"baseURL": "http://127.0.0.1:{PORT}/v1", "apiKey": "fake"},
        "models": {"fake-model": {"name": "fake-model", "tool_call": True,
                                  "limit": {"context": 128000, "output": 4096}}}}},
}
# The switches of the user's environment that change what OpenCode reads: passed on, so the
# run reads what the prediction (made in this environment) reads.
OPENCODE_PASSED_ENV = ("OPENCODE_DISABLE_CLAUDE_CODE", "OPENCODE_DISABLE_CLAUDE_CODE_PROMPT",
                       "OPENCODE_DISABLE_PROJECT_CONFIG")
# Copilot CLI unpacks itself into $XDG_CACHE_HOME/copilot on its first run (235 MB): a
# shared folder named by this variable saves doing it in every scratch HOME.
COPILOT_CACHE_ENV = "MEMLENS_COPILOT_CACHE"


class GlobalFolderVariable(NamedTuple):
    """A variable of the user's environment that moves an agent's global folder (the
    prediction reads it through memlens.agents.environment.env_value)."""

    name: str
    patterns: tuple[str, ...]  # the files of that folder that decide memory (globs under it)
    # A link among them is copied as the file it leads to (Copilot CLI moves no link out of
    # its XDG folder: nor may the copy).
    links: bool = True
    # The copy is made in a folder of this name, so scrub.py scrubs its settings as that
    # folder's (`.codex/config.toml`, `.claude/settings.json`); "": the copy itself.
    copy_as: str = ""
    tilde: bool = False  # a leading `~/` (or `~` alone) is HOME, as pi reads it
    # The variable names one file, not a folder: it is copied under this name (OpenCode's
    # OPENCODE_CONFIG as `opencode.json`, so scrub.py scrubs it as one).
    file: str = ""


GLOBAL_FOLDER_ENV: dict[str, tuple[GlobalFolderVariable, ...]] = {
    "opencode": (
        GlobalFolderVariable("XDG_CONFIG_HOME", ("opencode/AGENTS.md", "opencode/opencode.json",
                                                 "opencode/opencode.jsonc")),
        GlobalFolderVariable("OPENCODE_CONFIG_DIR",
                             ("AGENTS.md", "opencode.json", "opencode.jsonc")),
        GlobalFolderVariable("OPENCODE_CONFIG", (), file="opencode.json"),
    ),
    "copilot": (
        GlobalFolderVariable("COPILOT_HOME", ("copilot-instructions.md", "instructions/**/*.md")),
        GlobalFolderVariable("XDG_CONFIG_HOME", (".copilot/copilot-instructions.md",),
                             links=False),
    ),
    # config.toml can name commands (MCP servers, `notify`): scrubbed as `.codex/config.toml`.
    "codex": (
        GlobalFolderVariable("CODEX_HOME", ("AGENTS.override.md", "AGENTS.md", "config.toml",
                                            "skills/**/SKILL.md"), copy_as=".codex"),
    ),
    # Its auto memory (`projects/<slug>/memory/`) is copied by memlens.verify.run, as HOME's.
    "claude": (
        GlobalFolderVariable("CLAUDE_CONFIG_DIR", ("CLAUDE.md", "settings.json", "rules/**/*.md",
                                                   "skills/**/SKILL.md"), copy_as=".claude"),
    ),
    # Its context and prompt files, as HOME's `.pi/agent` (memlens.verify.run HOME_FILES):
    # never settings.json, models.json or auth.json.
    "pi": (
        GlobalFolderVariable("PI_CODING_AGENT_DIR", (
            "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD", "SYSTEM.md", "APPEND_SYSTEM.md"),
            tilde=True),
    ),
}


# The variables an agent reads as unset when empty (OpenCode's empty OPENCODE_CONFIG_DIR is
# the working folder itself, and so is Claude Code's empty CLAUDE_CONFIG_DIR: its user
# CLAUDE.md, rules and skills are then read from there).
EMPTY_IS_UNSET = frozenset({"XDG_CONFIG_HOME", "COPILOT_HOME", "CODEX_HOME",
                            "PI_CODING_AGENT_DIR", "OPENCODE_CONFIG"})


@dataclass
class MovedFolders:
    """The run's values of the variables that move an agent's global folder (the prediction
    of the run is made with the same: `memlens.agents.environment.environment_overrides`)."""

    env: dict[str, str] = field(default_factory=dict)
    # (copy, the user's folder; for a file variable, the copied file and the user's file)
    copies: list[tuple[Path, str]] = field(default_factory=list)
    # Why the agent is not run: a variable names a folder of the workspace (see below).
    refused: list[str] = field(default_factory=list)


def moved_global_folders(agent: str, scratch: Path, home: str | None = None) -> MovedFolders:
    """The variables of this process's environment that move `agent`'s global folder (or name
    its configuration file: OpenCode's OPENCODE_CONFIG), as the run gets them: an empty value
    the agent reads as unset as it is; an absolute one (pi's `~/…` from the user's `home`) as
    a copy under `scratch` of the memory files its folder holds (the caller scrubs it), never
    the user's folder itself (the sandbox hides HOME, and the agent writes there: Copilot CLI
    moves its XDG file, Codex and Claude Code keep their state there). A relative value (or
    OpenCode's and Claude Code's empty one) names a folder of the workspace: the agent would
    take its whole configuration from the repository there (OpenCode's plugins, Copilot CLI's
    MCP servers, Codex's config.toml, Claude Code's hooks), which verify never lets a
    repository give, so the agent is not run (`refused`)."""
    moved = MovedFolders()
    for variable in GLOBAL_FOLDER_ENV.get(agent, ()):
        name = variable.name
        value = os.environ.get(name)
        if value is None:
            continue
        if not value and name in EMPTY_IS_UNSET:
            moved.env[name] = value
            continue
        if variable.tilde and (value == "~" or value.startswith("~/")):
            value = (home or os.path.expanduser("~")) + value[1:]
        if not os.path.isabs(value):
            where = f"{name}={value}" if value else f"an empty {name}"
            moved.refused.append(
                f"{where} names a {'file' if variable.file else 'folder'} of the workspace, "
                "from which it would read its "
                "configuration (code it runs included), and verify never runs a repository's "
                f"configuration; set {name} to an absolute path or unset it to verify it")
            continue
        folder = Path(os.path.normpath(value))
        copy = scratch / name.lower() / variable.copy_as if variable.copy_as else (
            scratch / name.lower())
        copy.mkdir(parents=True, exist_ok=True)
        if variable.file:  # (a file the user's variable names but that is missing: as missing)
            if folder.is_file():
                shutil.copy2(folder, copy / variable.file)
            moved.env[name] = str(copy / variable.file)
            moved.copies.append((copy / variable.file, str(folder)))
            continue
        for pattern in variable.patterns:
            for path in sorted(folder.glob(pattern)):
                if path.is_file() and (variable.links or not path.is_symlink()):
                    target = copy / path.relative_to(folder)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, target)
        moved.env[name] = str(copy)
        moved.copies.append((copy, str(folder)))
    return moved


def agent_argv(agent: str, binary: str) -> list[str]:
    """The command line that runs the agent once on ``PROMPT``, offline against the fake model
    (``{PORT}`` is its port)."""
    if agent == "codex":
        provider = (
            '{name="fake",base_url="http://127.0.0.1:{PORT}/v1",env_key="FAKE_API_KEY",'
            'wire_api="responses"}'
        )
        return [
            binary, "exec", "--skip-git-repo-check",
            "-c", "model_provider=fake", "-c", f"model_providers.fake={provider}",
            "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false",
            "--disable", "plugins", PROMPT,
        ]
    if agent == "copilot":
        # No --trust-folder: the copy's own configuration (hooks, MCP servers) stays untrusted.
        return [binary, "-p", PROMPT, "--allow-all-tools", "--no-auto-update",
                "--disable-client-telemetry"]
    if agent == "opencode":
        return [binary, "run", PROMPT]
    if agent == "claude":
        # Its own switches on top of the scrubbed copy (verify/scrub.py): no hook of any
        # settings file runs, and no MCP server but --mcp-config's (none).
        return [binary, "-p", PROMPT, "--strict-mcp-config", "--settings", CLAUDE_FLAG_SETTINGS]
    if agent == "pi":
        # Its provider "fake" is in the scratch HOME's models.json (`prepare_home`).
        # --no-extensions: no extension of the copy (code) is loaded.
        return [binary, "--offline", "--no-session", "--no-extensions", "--provider", "fake",
                "--model", "fake-model", "-p", PROMPT]
    return [binary, "-p", PROMPT]


CLAUDE_FLAG_SETTINGS = '{"disableAllHooks": true, "disableSkillShellExecution": true}'


def agent_env(agent: str, home: Path) -> dict[str, str]:
    """The agent's whole environment, built from nothing (as ``env -i`` would): PATH (node's
    folder and the system's), HOME, a fixed time zone and locale, and the variables that point
    it at the fake model and switch off its outside traffic."""
    node = shutil.which("node")
    path_dirs = [str(Path(node).parent)] if node else []
    path_dirs += [d for d in ("/usr/local/bin", "/usr/bin", "/bin") if d not in path_dirs]
    env = {
        "PATH": ":".join(path_dirs), "HOME": str(home), "TZ": "UTC", "LANG": "C.UTF-8",
        "TERM": "dumb",
    }
    if agent == "gemini":
        env |= {
            "GEMINI_API_KEY": "fake-key",
            "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:{PORT}",
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
    elif agent == "claude":
        env |= {
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:{PORT}",
            "ANTHROPIC_API_KEY": "fake-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
    elif agent == "codex":
        env |= {"CODEX_HOME": str(home / ".codex"), "FAKE_API_KEY": "fake-key"}
    elif agent == "copilot":
        # Its offline bring-your-own-model mode (`copilot help environment`): no GitHub
        # sign-in, telemetry or update check; Chat Completions to the fake model.
        env |= {
            "COPILOT_OFFLINE": "true",
            "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:{PORT}/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": "fake-key",
            "COPILOT_MODEL": "gpt-4.1",
            "COPILOT_AUTO_UPDATE": "false",
        }
        if COPILOT_CACHE_ENV in os.environ:  # where it unpacks itself (once, not per run)
            env["XDG_CACHE_HOME"] = os.environ[COPILOT_CACHE_ENV]
    elif agent == "opencode":
        env |= {
            "OPENCODE_CONFIG_CONTENT": json.dumps(OPENCODE_CONFIG),
            "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        }
        env |= {k: os.environ[k] for k in OPENCODE_PASSED_ENV if k in os.environ}
    elif agent == "pi":
        env |= {"FAKE_API_KEY": "fake-key", "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1",
                "PI_TELEMETRY": "0"}
    else:
        raise ValueError(f"unknown agent {agent!r}")
    return env


GEMINI_REQUIRED_SETTINGS: dict[str, Any] = {
    # 0.61 exits 41 without an auth type; the other two stop its only outside lookup.
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def prepare_home(agent: str, home: Path) -> None:
    """Give a scratch HOME what the agent needs to run offline (Gemini CLI: its auth type and
    no usage statistics, merged into the settings it holds)."""
    if agent == "gemini":
        settings_file = home / ".gemini" / "settings.json"
        settings: dict[str, Any] = {}
        if settings_file.is_file():
            # the user's settings (comments allowed); a file that cannot be read (nested too
            # deeply, not JSON) is a StructuredDataError (a ValueError) naming why
            loaded = load_json_file(str(settings_file), comments=True)
            settings = loaded if isinstance(loaded, dict) else {}
        settings_file.parent.mkdir(parents=True, exist_ok=True)
        settings_file.write_text(
            json.dumps(_deep_merge(settings, GEMINI_REQUIRED_SETTINGS), indent=2) + "\n",
            encoding="utf-8",
        )
    elif agent == "codex":
        (home / ".codex").mkdir(exist_ok=True)
    elif agent == "pi":
        prepare_pi_folder(home / ".pi" / "agent")


# pi's offline provider: the fake model on Chat Completions, the system prompt as a `system`
# message. `{PORT}` is filled in when the model listens (sandbox.Job.port_files).
PI_PROVIDER: dict[str, Any] = {
    "baseUrl": "http://127.0.0.1:{PORT}/v1", "api": "openai-completions",
    "apiKey": "FAKE_API_KEY",
    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
    "models": [{"id": "fake-model"}],
}


def prepare_pi_folder(folder: Path) -> Path:
    """pi's global folder given the fake provider in its models.json (merged into the
    user's); the file to fill the port into."""
    models = folder / "models.json"
    data: dict[str, Any] = {}
    if models.is_file():
        loaded = load_json_file(str(models), comments=False)
        data = loaded if isinstance(loaded, dict) else {}
    providers = data.get("providers")
    data["providers"] = {**(providers if isinstance(providers, dict) else {}),
                         "fake": PI_PROVIDER}
    folder.mkdir(parents=True, exist_ok=True)
    models.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return models


def port_files(agent: str, home: Path, env: dict[str, str] | None = None) -> list[str]:
    """The files `{PORT}` is filled into for this agent's run (pi's models.json, in its
    global folder: `PI_CODING_AGENT_DIR` when the run sets it, a leading `~/` HOME as pi
    reads it, else HOME/.pi/agent)."""
    if agent != "pi":
        return []
    folder = (env or {}).get("PI_CODING_AGENT_DIR")
    if folder:
        if folder == "~" or folder.startswith("~/"):
            folder = str(home) + folder[1:]
        return [str(prepare_pi_folder(Path(folder)))]
    return [str(home / ".pi" / "agent" / "models.json")]


# ----------------------------------------------------------------------------- extraction
