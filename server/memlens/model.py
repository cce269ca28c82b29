"""The engine's settings model and the names of Gemini CLI's profiles. Payloads that cross a
boundary, and the words they share (severities, tiers, modes), live in `protocol/`."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from memlens.protocol.wire import Mode, Severity, Wire

if TYPE_CHECKING:
    from memlens.agent_versions import AgentProfile

# Which Gemini CLI the engine reproduces (docs/reference.md "Which agent, which version"): 0.43
# (classic and jit modes, context.fileName replaces GEMINI.md) or 0.44 and later (verified on
# 0.61.0: jit only, context.fileName adds to GEMINI.md, a folder named like a context file is
# skipped).
GeminiProfile = Literal["0.43", "0.44+"]
DEFAULT_CONTEXT_FILE = "GEMINI.md"


def gemini_profile_for(version: str | None) -> GeminiProfile:
    """The profile for a Gemini CLI version (`0.43`, `0.43.0`, `0.44+`, `0.61.0`, …); no
    version: today's default, 0.43. Versions before 0.43 use the 0.43 profile. ValueError
    when `version` is not a version."""
    if version is None:
        return "0.43"
    parts = version.strip().removesuffix("+").split(".")
    if len(parts) < 2 or len(parts) > 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a Gemini CLI version: {version!r} (e.g. 0.43, 0.44, 0.61.0)")
    return "0.44+" if (int(parts[0]), int(parts[1])) >= (0, 44) else "0.43"


def file_name_problem(name: str) -> str | None:
    """Why `name` cannot be a context file name, or None. Gemini CLI joins the name to every
    folder it searches and to HOME/.gemini: a relative path below the folder
    (`docs/CONTEXT.md`) is read as Gemini CLI reads it (and warned about: `context_name_is_path`),
    but one that climbs out (`../.bashrc`) or is absolute would read and, through save_memory,
    write the user's own files, so it is refused (a deliberate difference, G5 in
    KNOWN_DIFFERENCES)."""
    if not name.strip():
        return "is empty"
    if "\\" in name:
        return "is a path, not a file name"
    if name.startswith("/"):
        return "is an absolute path, not a file name"
    if name in (".", "..") or "\0" in name:
        return "is not a file name"
    parts = name.split("/")
    if ".." in parts:
        return "climbs out of the folder (..)"
    if posixpath.normpath(name) in (".", "") or name.endswith("/"):
        return "is not a file name"
    return None


def context_name_is_path(name: str) -> bool:
    """A context file name with a folder in it (`docs/CONTEXT.md`): found only by the upward
    search and in HOME/.gemini, never by a downward search (which compares file names)."""
    return "/" in posixpath.normpath(name)


def join_context_name(folder: str, name: str) -> str:
    """`path.join(folder, name)` as Gemini CLI does it: `./x` and `a//b` normalised."""
    joined = posixpath.join(folder, name)
    return posixpath.normpath(joined) if "/" in name else joined


def is_context_file(path: str, names: list[str]) -> bool:
    """Whether `path` is one of the context files `names` name (a relative name matches the
    end of the path)."""
    if posixpath.basename(path) in names:
        return True
    return any(path.endswith("/" + posixpath.normpath(n)) for n in names
               if context_name_is_path(n))


class SettingsProblem(Wire):
    """A setting that was dropped (or is doubtful), and where it came from."""

    origin: Literal["user", "workspace", "editor", "cli", "env"]
    source: str | None = None  # the settings.json it came from (user and workspace origins)
    setting: str  # as the user wrote it: `context.fileName`, `--include`, `contextFileNames`
    value: str
    code: str
    severity: Severity
    reason: str  # "is a path, not a file name", "does not exist"
    message: str


class MemorySettings(Wire):
    home: str
    gemini_profile: GeminiProfile = "0.43"
    # The agents the user runs, as `NAME[@VERSION]` pins (`memlens.agents`, MEMLENS_AGENTS,
    # `--agent`), the chosen one first; empty: the detected ones (`load_settings`).
    agents: list[str] = Field(default_factory=list)
    context_file_names: list[str] = Field(default_factory=lambda: ["GEMINI.md"], min_length=1)
    jit_context: bool = True
    # Gemini CLI's `context.discoveryMaxDirs`; a negative value means no cap.
    discovery_max_dirs: int = 200
    memory_boundary_markers: list[str] = Field(default_factory=lambda: [".git"])
    import_format: Literal["tree", "flat"] = "tree"
    include_directories: list[str] = Field(default_factory=list)
    load_memory_from_include_directories: bool = False
    extension_context_files: list[str] = Field(default_factory=list)
    discover_gemini_extensions: bool = True
    # Gemini CLI's settings default `context.fileFiltering.respectGitIgnore` to true, and that
    # default reaches its memory search: `.git` and git-ignored folders are skipped.
    respect_git_ignore: bool = True
    respect_gemini_ignore: bool = True
    # None: decided by Gemini CLI's folder-trust rules (trustedFolders.json, env).
    trusted: bool | None = None
    # The editor's workspace trust (VS Code's is the window's): an upper bound and the default.
    # Within a trusted window a folder that trustedFolders.json marks DO_NOT_TRUST stays
    # untrusted, as Gemini CLI started there would treat it (trust.decide_trust).
    editor_trusted: bool | None = None
    folder_trust_enabled: bool = True
    max_context_chars: int = Field(default=4_000_000, gt=0)
    # save_memory handed to the memory manager agent (opt-in).
    memory_manager: bool = False
    # A folder's memory past this many (estimated) tokens gets `context-over-budget`
    # (`memlens.budget`; 0 or less: off). See budgets.py.
    budget: int = 0
    # A single memory file above this many bytes gets a `file-too-large` warning.
    large_file_bytes: int = Field(default=1_000_000, gt=0)
    # Folders the workspace walk (the index, `memlens check`) reads at most, over all the
    # workspace folders; past it the walk stops and says so (`index-budget-exhausted`).
    max_indexed_folders: int = Field(default=50_000, gt=0)
    # The language server refuses to index `/` or the user's home folder as a workspace
    # folder (a walk of everything) unless this is set.
    allow_broad_workspace: bool = False
    # What `load_settings` dropped or doubts, and where each include directory came from:
    # not settings themselves, so not on the wire.
    _problems: list[SettingsProblem] = PrivateAttr(default_factory=list)
    _include_origins: dict[str, str] = PrivateAttr(default_factory=dict)
    # The profiles serving the agents shown, the chosen one first (`load_settings` decides,
    # from the pins and the agents detected on PATH); empty when nobody decided.
    _chosen_agents: list[AgentProfile] = PrivateAttr(default_factory=list)

    @field_validator("context_file_names")
    @classmethod
    def _plain_file_names(cls, names: list[str]) -> list[str]:
        for name in names:
            problem = file_name_problem(name)
            if problem is not None:
                raise ValueError(f"context file name {name!r} {problem}")
        return names

    @model_validator(mode="after")
    def _profile_rules(self) -> MemorySettings:
        """Gemini CLI 0.44+: JIT is the only mode (`experimental.jitContext` and the classic
        search are gone), and `context.fileName` adds to GEMINI.md: the configured names first,
        trimmed and normalised, each once, then GEMINI.md (`setGeminiMdFilename`). Idempotent."""
        if self.gemini_profile == "0.44+":
            self.jit_context = True
            # path.normalize: `./docs//CONTEXT.md` is named `docs/CONTEXT.md` (also in the
            # system instruction's header).
            names = [posixpath.normpath(n.strip()) if "/" in n else n.strip()
                     for n in self.context_file_names if n.strip()]
            self.context_file_names = list(dict.fromkeys([*names, DEFAULT_CONTEXT_FILE]))
        return self

    @property
    def skips_git_folders(self) -> bool:
        """Whether Gemini CLI's file service ignores `.git` folders in its classic search: with
        git-ignore rules on (`respect_git_ignore`, true unless a setting turns it off)."""
        return self.respect_git_ignore

    @property
    def chosen_agents(self) -> list[AgentProfile]:
        """The agents shown, the chosen one first
        (docs/reference.md "Which agent, which version")."""
        return self._chosen_agents

    def agent_version(self, agent: str) -> str | None:
        """The release of `agent` whose behaviour is predicted among the chosen agents: the
        installed or pinned one, a pinned profile name's or release line's verified release
        (None: not known, the agent's newest)."""
        return next((p.release for p in self._chosen_agents if p.agent == agent), None)

    @property
    def mode(self) -> Mode:
        return "jit" if self.jit_context else "classic"

    @property
    def problems(self) -> list[SettingsProblem]:
        return self._problems

    @property
    def include_origins(self) -> dict[str, str]:
        """Each include directory (as written) → where it came from, for the user."""
        return self._include_origins
