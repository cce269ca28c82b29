"""Where Claude Code keeps its auto memory, and whether it uses it at all — as Claude Code
2.1.330 and 2.1.332 were seen to decide (tests/conformance/test_claude_memory.py runs them):

- Off: `CLAUDE_CODE_DISABLE_AUTO_MEMORY` set to a true word (1, true, yes, on), or
  `CLAUDE_CODE_SIMPLE`, or `autoMemoryEnabled: false` in the settings in force (user,
  project, local or managed: the usual settings precedence). The same variable set to a
  false word (0, false, no, off) forces it on whatever the settings say.
- The folder: `CLAUDE_COWORK_MEMORY_PATH_OVERRIDE` if set; else the first
  `autoMemoryDirectory` among the managed, local, project and user settings (in that order:
  a cloned repository's committed `.claude/settings.json` can move it — older descriptions
  of Claude Code say project settings are ignored for this key; 2.1.330 honours them); a
  value that is not absolute after `~/` expansion is ignored (the default is used, not the
  next source); else `<config>/projects/<slug>/memory/` where `<config>` is
  `CLAUDE_CODE_REMOTE_MEMORY_DIR` or the Claude config folder (`CLAUDE_CONFIG_DIR`,
  `~/.claude`) and `<slug>` the canonical repository root with every non-alphanumeric
  character turned into `-` (long ones cut at 200 and suffixed with a hash).
- The canonical root of a git worktree is its main repository's root (so every worktree of
  a repository shares one memory folder); outside git, the working folder.
- Project settings are `.claude/settings.json` of the working folder only; local settings
  `.claude/settings.local.json` of the working folder and of the repository root (the root's
  wins where both set a key).

Who chose the folder (`AutoMemoryFolder.chosen_by`) decides whether Memory Lens may write there
without asking (docs/security.md, "Claude Code's memory folder"): `repository` when project or
local settings — files inside the workspace, which a cloned repository can commit — named it;
`user` when the user's own settings, the machine's managed settings or the environment did;
`default` for the folder under the Claude config folder.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Literal

from memlens.agents.claude.settings_schema import invalid_setting
from memlens.agents.environment import env_value
from memlens.files.nodecompat import dirname, resolve
from memlens.files.roots import repository_root
from memlens.files.structured import json_file_or_none
from memlens.files.walk import walk

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")
MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"
SLUG_MAX = 200
CONFIG_DIR_ENV = "CLAUDE_CONFIG_DIR"


def claude_home(home: str) -> str:
    """The Claude config folder: `$CLAUDE_CONFIG_DIR`, else HOME/.claude (read through
    `env_value`, so `memlens verify` predicts its run with the run's value)."""
    return env_value(CONFIG_DIR_ENV) or posixpath.join(home, ".claude")


def _env_word(name: str, env: dict[str, str]) -> str:
    return env.get(name, "").strip().lower()


def java_hash(text: str) -> int:
    """The 32-bit string hash Claude Code suffixes long folder names with (over UTF-16 code
    units, wrapping like JavaScript's `| 0`)."""
    h = 0
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i:i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def project_slug(path: str) -> str:
    """Claude Code's folder name for a project under `~/.claude/projects/`."""
    slug = re.sub(r"[^a-zA-Z0-9]", "-", path)
    if len(slug) <= SLUG_MAX:
        return slug
    return f"{slug[:SLUG_MAX]}-{_base36(abs(java_hash(path)))}"


def canonical_root(cwd: str) -> str:
    """The repository root Claude Code keys memory by: a worktree's main repository (when the
    worktree's `.git` file and the main repository's record of it agree), else the nearest
    folder holding `.git`, else `cwd` itself."""
    root = repository_root(cwd)
    if root is None:
        return resolve(cwd)
    main = main_repository(root)
    return main if main is not None else root


def main_repository(root: str) -> str | None:
    """The main repository of the worktree at `root`, or None when `root` is not a worktree
    (its `.git` is a folder) or the link does not hold both ways."""
    dot_git = posixpath.join(root, ".git")
    if not os.path.isfile(dot_git):
        return None
    try:
        with open(dot_git, encoding="utf-8") as handle:
            first = handle.readline(4096).strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = resolve(root, first[len("gitdir:"):].strip())
    try:
        with open(posixpath.join(gitdir, "commondir"), encoding="utf-8") as handle:
            common = resolve(gitdir, handle.readline(4096).strip())
        with open(posixpath.join(gitdir, "gitdir"), encoding="utf-8") as handle:
            back = resolve(gitdir, handle.readline(4096).strip())
    except (OSError, UnicodeDecodeError):
        return None
    if back != dot_git or posixpath.basename(common) != ".git":
        return None
    return dirname(common)


@dataclass
class SettingsSource:
    """One Claude Code settings file and what it holds (None: missing or unreadable)."""

    scope: str  # "managed" | "local" | "project" | "user"
    path: str
    data: dict[str, Any] | None  # None: missing, unreadable, or ignored by Claude Code
    # Why Claude Code ignores the whole file (a key of the wrong type), or None.
    rejected: str | None = None


def settings_sources(home: str, cwd: str) -> list[SettingsSource]:
    """The settings files Claude Code reads from `cwd`, highest precedence first."""
    cwd = resolve(cwd)
    root = repository_root(cwd)
    local = [posixpath.join(d, ".claude", "settings.local.json")
             for d in dict.fromkeys([root or cwd, cwd])]
    paths = [("managed", MANAGED_SETTINGS), *[("local", p) for p in local],
             ("project", posixpath.join(cwd, ".claude", "settings.json")),
             ("user", posixpath.join(claude_home(home), "settings.json"))]
    out = []
    for scope, path in paths:
        data = json_file_or_none(path)
        rejected = invalid_setting(data) if isinstance(data, dict) else None
        out.append(SettingsSource(scope, path, data if isinstance(data, dict) and not rejected
                                  else None, rejected))
    return out


def expand_directory(value: object, home: str) -> str | None:
    """An `autoMemoryDirectory` value as Claude Code takes it (`~/` expanded, normalised, no
    trailing slash), or None when it ignores it: not a string, not absolute, `~/..`, the root
    or a path shorter than 3 characters, a NUL."""
    if not isinstance(value, str) or not value:
        return None
    path = value
    if path.startswith("~/"):
        rest = posixpath.normpath(path[2:] or ".")
        if rest in (".", "..") or rest.startswith("../"):
            return None
        path = posixpath.join(home, path[2:])
    normal = posixpath.normpath(path).rstrip("/")
    if not normal.startswith("/") or len(normal) < 3 or "\x00" in normal:
        return None
    return unicodedata.normalize("NFC", normal)


ChosenBy = Literal["repository", "user", "default"]


@dataclass
class AutoMemoryFolder:
    """Whether Claude Code uses auto memory here, where, and why."""

    folder: str | None  # None when auto memory is off
    reason: str  # why it is off, or where the folder comes from
    setting: SettingsSource | None = None  # the settings file that decided, if one did
    key: str | None = None  # the key in it
    ignored: list[tuple[SettingsSource, str]] = field(default_factory=list)
    # Who named the folder, and in what (a settings file, or an environment variable).
    chosen_by: ChosenBy = "default"
    chosen_in: str | None = None

    @property
    def index(self) -> str | None:
        return posixpath.join(self.folder, "MEMORY.md") if self.folder else None


def chosen_by(source: SettingsSource, home: str) -> ChosenBy:
    """`repository` for project and local settings (inside the workspace: a cloned repository
    can commit them), unless the file is really the user's own settings file (the working
    folder is HOME); `user` for the user's and the managed settings."""
    if source.scope not in ("project", "local"):
        return "user"
    user = posixpath.join(claude_home(home), "settings.json")
    return "user" if os.path.realpath(source.path) == os.path.realpath(user) else "repository"


def auto_memory_folder(home: str, cwd: str, env: dict[str, str] | None = None
                       ) -> AutoMemoryFolder:
    env = dict(os.environ) if env is None else env
    home = resolve(home)
    sources = settings_sources(home, cwd)
    switch = _env_word("CLAUDE_CODE_DISABLE_AUTO_MEMORY", env)
    if switch in TRUE_WORDS:
        return AutoMemoryFolder(None, "CLAUDE_CODE_DISABLE_AUTO_MEMORY is set")
    if switch not in FALSE_WORDS:
        if _env_word("CLAUDE_CODE_SIMPLE", env) not in ("", *FALSE_WORDS):
            return AutoMemoryFolder(None, "CLAUDE_CODE_SIMPLE is set")
        for source in sources:  # highest precedence first: the first that sets it decides
            if source.data is not None and "autoMemoryEnabled" in source.data:
                if source.data["autoMemoryEnabled"] is False:
                    return AutoMemoryFolder(None, f"autoMemoryEnabled is false in {source.path}",
                                            source, "autoMemoryEnabled")
                break
    override = env.get("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE")
    if override:
        folder = expand_directory(override, "")
        if folder:
            return AutoMemoryFolder(folder, "CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",
                                    chosen_by="user",
                                    chosen_in="CLAUDE_COWORK_MEMORY_PATH_OVERRIDE")
    ignored: list[tuple[SettingsSource, str]] = []
    for source in sources:
        if source.data is None or source.data.get("autoMemoryDirectory") is None:
            continue
        folder = expand_directory(source.data["autoMemoryDirectory"], home)
        if folder:
            return AutoMemoryFolder(folder, f"autoMemoryDirectory in {source.path}", source,
                                    "autoMemoryDirectory", chosen_by=chosen_by(source, home),
                                    chosen_in=source.path)
        ignored.append((source, "autoMemoryDirectory"))
        break  # the first value decides; an unusable one leaves the default
    base = env.get("CLAUDE_CODE_REMOTE_MEMORY_DIR") or claude_home(home)
    root = canonical_root(cwd)
    folder = unicodedata.normalize(
        "NFC", posixpath.join(base, "projects", project_slug(root), "memory"))
    return AutoMemoryFolder(folder, f"the default for {root}", ignored=ignored)


# The topic files of a memory folder: at most this many, this deep.
MAX_TOPICS = 2_000
MAX_DEPTH = 8


def topic_paths(folder: str) -> list[str]:
    """Every `.md` file in the memory folder and below it but the index and hidden ones (a
    name starting with `.`: Claude Code leaves them out of the index it writes), bounded, in
    order."""
    out: list[str] = []
    for base, dirs, files in walk(folder):
        depth = base[len(folder):].count("/")
        dirs[:] = sorted(d for d in dirs if depth < MAX_DEPTH and not d.startswith("."))
        for name in sorted(files):
            path = posixpath.join(base, name)
            if (name.endswith(".md") and not name.startswith(".")
                    and path != posixpath.join(folder, "MEMORY.md")):
                out.append(path)
                if len(out) >= MAX_TOPICS:
                    return out
    return out
