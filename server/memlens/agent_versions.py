"""Which coding agents are installed, in which version, and which profile serves each
(docs/reference.md "Which agent, which version").

Contract (pure engine: no LSP, no terminal; the CLI and the server wire it in):

- `detect_installed(path_env)` → `{agent: InstalledAgent}` for `gemini`, `claude`, `codex`
  found on `path_env` (a PATH string; None: this process's PATH). Never raises: a broken
  executable, a timeout or output without a version leaves that agent out.
  The version comes from the npm `package.json` that owns the executable's real path (the
  nearest one up whose `name` is the agent's package: no process is started), else from
  `<exe> --version` (no shell, stdin closed, the environment kept, a timeout, the first
  `X.Y.Z` in its output). `--version` answers are cached by (real path, mtime_ns, size): in
  memory for the process and on disk (`$XDG_CACHE_HOME/memlens/agent-versions.json`, else
  `~/.cache/...`), so an unchanged executable is asked once, ever; an upgrade changes the key
  and is re-checked. A failed answer (non-zero exit, no version) is cached too, a timeout only
  in memory (a slow machine should not hide an agent for good). The disk cache is written
  atomically (temp file + `os.replace`); a corrupt or unwritable one is ignored.
  Relative PATH entries are skipped: a workspace could plant a `gemini` there, and asking it
  its version would run it.
- `profile_for(agent, version)` → `AgentProfile`: which profile serves a detected version, a
  pinned one (`0.43`, `0.44`, `0.44+`, `0.61.0`, `2.1`) or None (the newest profile, verified).
  A profile is *verified* for the versions it was checked on: from the start of its range (or,
  for an agent's oldest profile, from the version it was checked on: older releases were never
  compared) up to the next profile, and for the newest profile up to the version it was
  checked on. Anything else (newer, or older) is served by the nearest profile, with
  `verified=False` and a `note` saying so; a pinned `X.Y` counts as verified when any release
  of that line is. Bad version text: `ValueError` with a one-line message.
- `parse_agent_spec("NAME[@VERSION]")` → `(name, version | None)`; `chosen_agents(pins,
  installed)` → the profiles of the agents in use (see there).
- `version_diagnostic(profile, path)` → the `agent-version-unverified` info diagnostic at line
  1 of `path`, or None when the profile is verified.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from memlens.files.probe import run_bounded
from memlens.files.structured import json_file_or_none
from memlens.protocol.memory import Diagnostic

Version = tuple[int, int, int]

# The agents whose version is detected: the command on PATH, its npm package, its name; in
# the agent registry's order (agents/__init__.py), which is the order of the agents in use.
COMMANDS: dict[str, tuple[str, str]] = {
    "gemini": ("@google/gemini-cli", "Gemini CLI"),
    "claude": ("@anthropic-ai/claude-code", "Claude Code"),
    "codex": ("@openai/codex", "Codex"),
    "copilot": ("@github/copilot", "GitHub Copilot CLI"),
    "opencode": ("opencode-ai", "OpenCode"),
    "pi": ("@mariozechner/pi-coding-agent", "pi"),
}


@dataclass(frozen=True)
class Unverified:
    """An agent Memory Lens shows with no program to verify it against: no version, never
    called verified."""

    label: str  # how messages name it: "AGENTS.md"
    basis: str  # "convention" (a documented convention) or "sources" (read from its sources)
    note: str  # why it is not verified, for hovers and pickers
    # The one version it was read for (`vscode-chat@1.139`); "" when it has no versions.
    profile: str = ""


# The agents without a program here, by id. Adding one: an entry here and its agent package.
UNVERIFIED: dict[str, Unverified] = {
    "agents": Unverified("AGENTS.md", "convention",
                         "the agents.md convention (nearest AGENTS.md wins), not a verified "
                         "agent"),
    "vscode-chat": Unverified("VS Code chat", "sources",
                              "read from VS Code 1.139's and GitHub Copilot Chat 0.67's "
                              "sources, and checked against that real chat on six trees in "
                              "CI (a recording model); `memlens verify` cannot run it on "
                              "yours", profile="1.139"),
    "cursor": Unverified("Cursor", "convention",
                         "Cursor's project rules as its docs describe them (cursor.com/docs/rules)"
                         ", not a verified agent"),
    "antigravity": Unverified("Antigravity CLI", "convention",
                              "Antigravity CLI as public descriptions of it say it reads "
                              "GEMINI.md, AGENTS.md and .agents/, not a verified agent"),
}
# Other names `--agent` and `memlens.agents` take for an agent (`copilot-cli`:
# docs/reference.md "GitHub Copilot CLI").
ALIASES: dict[str, str] = {"copilot-cli": "copilot"}
CONVENTION = "agents"  # the AGENTS.md convention (Codex's fallback in `memlens diff`)
AGENT_LABELS: dict[str, str] = {**{a: label for a, (_, label) in COMMANDS.items()},
                                **{a: u.label for a, u in UNVERIFIED.items()}}


def is_unverified(agent: str) -> bool:
    """`agent` has no program to verify against (a convention, or read from sources)."""
    return agent in UNVERIFIED


def basis_of(agent: str) -> str:
    """How Memory Lens knows what `agent` reads: "agent" (checked against the real agent),
    "convention" or "sources"."""
    entry = UNVERIFIED.get(agent)
    return entry.basis if entry else "agent"
VERSION_TIMEOUT = 10.0  # seconds `<exe> --version` may take
CACHE_FORMAT = 1
_VERSION_IN_OUTPUT = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_PINNED = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?(\+?)$")
_OUTPUT_LIMIT = 65536  # bytes of `--version` output looked at


@dataclass(frozen=True)
class _Profile:
    agent: str
    profile: str  # as pinned: `gemini@0.44+`
    serves_from: Version | None  # None: every version before the next profile
    verified_on: str  # the reference release the profile was built and checked on
    # Later releases verified since (scripts/agents/keep-up.py): each sent exactly what the
    # reference sent. Verified one by one: a release between two of them was never run.
    also_verified: tuple[str, ...] = ()

    @property
    def newest_verified(self) -> str:
        return max((self.verified_on, *self.also_verified), key=_version)


DATA_FILE = os.path.join(os.path.dirname(__file__), "data", "verified-agents.json")


def _load_profiles(path: str = DATA_FILE) -> tuple[_Profile, ...]:
    """The profiles and their verified releases, oldest first per agent, from
    `data/verified-agents.json` (shipped in the wheel): the first release listed is the one the
    profile was built on, the others were verified later by scripts/agents/keep-up.py."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    out = []
    for entry in data["profiles"]:
        versions = [str(v["version"]) for v in entry["verified"]]
        start = entry.get("servesFrom")
        out.append(_Profile(str(entry["agent"]), str(entry["profile"]),
                            _version(start) if start else None, versions[0],
                            tuple(versions[1:])))
    return tuple(out)


def verified_releases(path: str = DATA_FILE) -> list[tuple[str, str, str, str]]:
    """(agent, profile, version, date) of every release in the verified list, as stored."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    return [(str(e["agent"]), str(e["profile"]), str(v["version"]), str(v.get("date", "")))
            for e in data["profiles"] for v in e["verified"]]


@dataclass(frozen=True)
class InstalledAgent:
    """An agent found on PATH."""

    agent: str  # "gemini", "claude", "codex"
    version: str  # "0.61.0"
    executable: str  # the path PATH gave (see its real path for the program itself)
    source: str = "package.json"  # how the version was learnt: "package.json" or "--version"


@dataclass(frozen=True)
class AgentProfile:
    """The profile that serves an agent's version, and whether that version was verified."""

    agent: str  # "gemini", "claude", "codex", "agents"
    profile: str  # "0.43", "0.44+", "2.1", "0.169"; "" for the AGENTS.md convention
    verified_on: str | None  # the version the profile was checked against (None: convention)
    installed: str | None  # the version this is for: detected or pinned (None: not known)
    verified: bool
    note: str | None = None  # why it is not verified (None when it is)
    # The release whose behaviour is predicted: the detected or pinned release; a profile name
    # or a release line (`codex@0.169`, `claude@2.1`, `gemini@0.44+`) means the newest
    # verified release it covers (0.169.0, 2.1.332, 0.61.0). None: the agent's newest.
    release: str | None = None

    @property
    def name(self) -> str:
        """`gemini@0.44+`, `claude@2.1`, `agents`: what `--agent` takes."""
        return f"{self.agent}@{self.profile}" if self.profile else self.agent

    @property
    def short_label(self) -> str:
        """For a status item: `Gemini CLI 0.61.0` (the detected or pinned version), `Claude
        Code`, `AGENTS.md`."""
        name = AGENT_LABELS.get(self.agent, self.agent)
        return f"{name} {self.installed}" if self.installed else name

    @property
    def label(self) -> str:
        """For a status item: `Gemini CLI 0.61.0 (gemini@0.44+)`, `Claude Code (claude@2.1)`."""
        who = AGENT_LABELS.get(self.agent, self.agent)
        version = f" {self.installed}" if self.installed else ""
        entry = UNVERIFIED.get(self.agent)
        if entry is not None:
            kind = "convention" if entry.basis == "convention" else "from sources"
            return f"{entry.label} ({kind})"
        return f"{who}{version} ({self.name}{'' if self.verified else ', unverified'})"


# --- versions ------------------------------------------------------------------------------
def _version(text: str) -> Version:
    major, minor, patch = (int(p) for p in text.split("."))
    return major, minor, patch


def _show(version: Version) -> str:
    return ".".join(map(str, version))


PROFILES: tuple[_Profile, ...] = _load_profiles()  # oldest first, per agent


def _profiles(agent: str) -> list[_Profile]:
    if agent not in COMMANDS:
        known = ", ".join([*COMMANDS, *UNVERIFIED])
        raise ValueError(f"unknown agent {agent!r} (one of {known})")
    return [p for p in PROFILES if p.agent == agent]


def _serving(profiles: list[_Profile], version: Version) -> int:
    """The index of the profile whose range holds `version` (the oldest for older ones)."""
    index = 0
    for i, profile in enumerate(profiles):
        if profile.serves_from is None or version >= profile.serves_from:
            index = i
    return index


def _verified_range(profiles: list[_Profile], index: int) -> tuple[Version, Version, bool]:
    """(low, high, high is inclusive) of the versions profile `index` is verified for."""
    profile = profiles[index]
    low = profile.serves_from if index > 0 and profile.serves_from else _version(
        profile.verified_on)
    if index + 1 < len(profiles) and profiles[index + 1].serves_from is not None:
        return low, profiles[index + 1].serves_from or low, False
    return low, _version(profile.verified_on), True


def _within(version: Version, low: Version, high: Version, inclusive: bool) -> bool:
    return low <= version and (version <= high if inclusive else version < high)


def _unverified_profile(agent: str, entry: Unverified, version: str | None) -> AgentProfile:
    """A convention (no versions) or a profile read from one version's sources: that version
    pinned as `X.Y` or any `X.Y.Z` of it, else a one-line ValueError."""
    if version is None:
        return AgentProfile(agent, entry.profile, None, None, verified=False, note=entry.note)
    text = version.strip()
    if not entry.profile:
        kind = "convention" if entry.basis == "convention" else "profile read from sources"
        raise ValueError(f"the {entry.label} {kind} has no versions (got {version!r})")
    if text != entry.profile and not text.startswith(f"{entry.profile}."):
        raise ValueError(f"{entry.label} has one profile, {agent}@{entry.profile} "
                         f"(got {version!r})")
    installed = None if text == entry.profile else text
    return AgentProfile(agent, entry.profile, None, installed, verified=False, note=entry.note,
                        release=installed)


def _release_named(profiles: list[_Profile], text: str) -> str | None:
    """The newest verified release that `text` names: a line `X.Y` (its `X.Y.z` releases), a
    profile name `X.Y+` (that profile's releases from X.Y on). None when none is verified."""
    if text.endswith("+"):
        start = _version(text[:-1] + ".0")
        found = [v for p in profiles for v in (p.verified_on, *p.also_verified)
                 if _version(v) >= start]
    else:
        found = [v for p in profiles for v in (p.verified_on, *p.also_verified)
                 if v.startswith(text + ".")]
    return max(found, key=_version) if found else None


def profile_for(agent: str, version: str | None) -> AgentProfile:
    """The profile for `agent` at `version` (detected `0.62.1`, pinned `0.43`/`0.44+`/`2.1`,
    or None: the newest profile). ValueError for an unknown agent or bad version text."""
    entry = UNVERIFIED.get(agent)
    if entry is not None:
        return _unverified_profile(agent, entry, version)
    profiles = _profiles(agent)
    label = AGENT_LABELS[agent]
    if version is None:
        newest = profiles[-1]
        return AgentProfile(agent, newest.profile, newest.verified_on, None, verified=True)
    text = version.strip()
    for profile in profiles:  # the profile named outright: `gemini@0.44+`, `claude@2.1`
        if text == profile.profile:
            return AgentProfile(agent, profile.profile, profile.verified_on, None,
                                verified=True, release=_release_named(profiles, text))
    match = _PINNED.match(text)
    if match is None:
        raise ValueError(f"not a {label} version: {version!r} (e.g. "
                         f"{', '.join(p.profile for p in profiles)} or "
                         f"{profiles[-1].verified_on})")
    major, minor, patch, _plus = match.groups()
    whole_line = patch is None  # `0.44`: every 0.44.x release
    first: Version = (int(major), int(minor), int(patch or 0))
    last: Version = (int(major), int(minor), 2**63) if whole_line else first
    shown = text.removesuffix("+")
    index = _serving(profiles, first)
    profile = profiles[index]
    low, high, inclusive = _verified_range(profiles, index)
    verified = (_within(first, low, high, inclusive) or _within(last, low, high, inclusive)
                or (first < low and last > high))
    later = [_version(v) for v in profile.also_verified]
    verified = verified or any(first <= v <= last for v in later)
    remembered = None if whole_line or verified else remembered_verification(agent, shown)
    verified = verified or remembered == "identical"
    note = None
    if not verified:
        name = f"{agent}@{profile.profile}"
        top = _version(profile.newest_verified)
        if later and high < first < top:
            note = (f"{label} {shown} was not verified (verified: "
                    f"{', '.join([profile.verified_on, *profile.also_verified])}): shown with "
                    f"the {name} profile")
        elif first > high or (first == high and not inclusive):
            note = (f"{label} {shown} is newer than the newest verified version "
                    f"({profile.newest_verified if inclusive else profile.verified_on}): shown "
                    f"with the {name} profile")
        elif index == 0:
            note = (f"{label} {shown} is older than the oldest verified version "
                    f"({profile.verified_on}): shown with the {name} profile")
        else:  # below a range's verified start: cannot happen with today's table
            note = (f"{label} {shown} was not verified: shown with the {name} profile "
                    f"(verified on {profile.verified_on})")
        if remembered == "differs":
            note += (f"; `memlens verify` found that {label} {shown} sends something else on "
                     f"this machine: run it to see the differences")
    release = (_release_named(profiles, shown) or shown) if whole_line else shown
    return AgentProfile(agent, profile.profile, profile.verified_on, shown, verified, note,
                        release=release)


def parse_agent_spec(spec: str) -> tuple[str, str | None]:
    """`NAME[@VERSION]` → (name, version or None); ValueError with a one-line message."""
    name, at, version = spec.strip().partition("@")
    name = ALIASES.get(name.strip(), name.strip())
    if at and not version.strip():
        raise ValueError(f"no version after '@' in {spec!r}")
    profile_for(name, version.strip() or None)  # validates both
    return name, version.strip() or None


def chosen_agents(pins: Sequence[str], installed: Mapping[str, InstalledAgent]
                  ) -> list[AgentProfile]:
    """The agents in use, the chosen one first.

    With pins (`memlens.agents`, e.g. ["claude", "gemini@0.43"], or the CLI's `--agent`): those,
    in order; a pin without a version takes the detected version of that agent, else its newest
    profile. Without pins: every detected agent, in the fixed order of `COMMANDS` (the agent
    registry's), none preferred; nothing detected: none (the agents whose files apply are
    added where a folder is shown, docs/reference.md "Which agent, which version"). The same
    profile for the same version is listed once. ValueError (one line) for a bad pin."""
    out: list[AgentProfile] = []
    if pins:
        for pin in pins:
            name, version = parse_agent_spec(pin)
            if version is None and name in installed:
                version = installed[name].version
            out.append(profile_for(name, version))
    else:
        out += [profile_for(agent, installed[agent].version) for agent in COMMANDS
                if agent in installed]
    unique: dict[tuple[str, str, str | None], AgentProfile] = {}
    for profile in out:
        unique.setdefault((profile.agent, profile.profile, profile.installed), profile)
    return list(unique.values())


def version_diagnostic(profile: AgentProfile, path: str) -> Diagnostic | None:
    """`agent-version-unverified` (info) at line 1 of `path`, or None: verified, or the
    AGENTS.md convention (which has no version to verify)."""
    if profile.verified or is_unverified(profile.agent) or profile.note is None:
        return None
    return Diagnostic(
        path=path, line=1, col=1, end_line=1, end_col=1, severity="info",
        code="agent-version-unverified", message=profile.note,
        detail=(f"Memory Lens reproduces {AGENT_LABELS[profile.agent]} as verified on "
                f"{profile.verified_on}; what this version sends may differ. Run `memlens "
                f"verify` to compare it on your workspace (a version that verifies identical "
                f"is remembered on this machine), or pin a version with memlens.agents or "
                f"--agent {profile.name} to choose the profile."))


# --- versions verified on this machine (memlens verify) -------------------------------------
VERIFICATIONS_ENV = "MEMLENS_VERIFICATIONS"  # another file (the tests use one of their own)
VERIFICATIONS_FORMAT = 1


def verifications_path() -> str:
    """`$XDG_CACHE_HOME/memlens/verified-here.json` (else `~/.cache/...`), or
    `$MEMLENS_VERIFICATIONS`."""
    return os.environ.get(VERIFICATIONS_ENV) or os.path.join(
        os.path.dirname(default_cache_path()), "verified-here.json")


def _read_verifications(path: str) -> dict[str, dict[str, dict[str, str]]]:
    data = json_file_or_none(path)
    if not isinstance(data, dict) or data.get("format") != VERIFICATIONS_FORMAT:
        return {}
    agents = data.get("agents")
    if not isinstance(agents, dict):
        return {}
    return {a: {v: r for v, r in e.items() if isinstance(r, dict)}
            for a, e in agents.items() if isinstance(e, dict)}


def remembered_verification(agent: str, version: str) -> str | None:
    """"identical" or "differs": what `memlens verify` last found for this release here, or
    None (never verified here, or the record is unreadable)."""
    result = _read_verifications(verifications_path()).get(agent, {}).get(version, {})
    found = result.get("result")
    return found if found in ("identical", "differs") else None


def remember_verification(agent: str, version: str, result: str, when: str) -> bool:
    """Record what `memlens verify` found for `agent` `version` ("identical" or "differs", on
    date `when`): written atomically (temp file + `os.replace`). False when it could not be
    written."""
    path = verifications_path()
    data = _read_verifications(path)
    data.setdefault(agent, {})[version] = {"result": result, "date": when}
    try:
        _write_json_atomic(path, {"format": VERIFICATIONS_FORMAT, "agents": data}, indent=1)
    except OSError:
        return False
    return True


def _write_json_atomic(path: str, value: object, *, indent: int | None = None) -> None:
    """`value` as JSON at `path`: a temp file in the same folder, then `os.replace` (a reader
    never sees half a file; the temp file never stays behind). OSError when it cannot."""
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    name = os.path.basename(path)
    temp = None
    try:
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder,
                                         prefix=f".{name}.", suffix=".tmp",
                                         delete=False) as handle:
            temp = handle.name
            json.dump(value, handle, indent=indent)
        os.replace(temp, path)
        temp = None
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)

# --- detection -----------------------------------------------------------------------------
def default_cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memlens", "agent-versions.json")


@dataclass
class VersionCache:
    """`--version` answers by (agent, real path, mtime_ns, size): in memory, and in a JSON file
    (`path`; None: memory only). Entries map a real path to `[mtime_ns, size, version or
    null]`."""

    path: str | None
    _entries: dict[str, dict[str, list[object]]] | None = field(default=None, init=False)
    _timeouts: set[tuple[str, str, int, int]] = field(default_factory=set, init=False)

    def _load(self) -> dict[str, dict[str, list[object]]]:
        if self._entries is None:
            self._entries = {}
            if self.path is not None:
                data = json_file_or_none(self.path)
                if (isinstance(data, dict) and data.get("format") == CACHE_FORMAT
                        and isinstance(data.get("agents"), dict)):
                    self._entries = {a: e for a, e in data["agents"].items()
                                     if isinstance(e, dict)}
        return self._entries

    def get(self, agent: str, real: str, stamp: tuple[int, int]) -> tuple[bool, str | None]:
        """(known, version): known False when it must be asked."""
        if (agent, real, *stamp) in self._timeouts:
            return True, None
        entry = self._load().get(agent, {}).get(real)
        if (isinstance(entry, list) and len(entry) == 3 and entry[0] == stamp[0]
                and entry[1] == stamp[1] and (entry[2] is None or isinstance(entry[2], str))):
            return True, entry[2] if isinstance(entry[2], str) else None
        return False, None

    def put(self, agent: str, real: str, stamp: tuple[int, int], version: str | None) -> None:
        self._load().setdefault(agent, {})[real] = [stamp[0], stamp[1], version]
        self._save()

    def timed_out(self, agent: str, real: str, stamp: tuple[int, int]) -> None:
        self._timeouts.add((agent, real, *stamp))

    def _save(self) -> None:
        if self.path is None:
            return
        # An unwritable cache only costs a `--version` next time.
        with contextlib.suppress(OSError, TypeError, ValueError):
            _write_json_atomic(self.path, {"format": CACHE_FORMAT, "agents": self._entries})


@functools.cache
def process_cache() -> VersionCache:
    """The process's cache (memory + `default_cache_path()`), made on first use."""
    return VersionCache(default_cache_path())


def package_version(executable: str, package: str) -> str | None:
    """The version in the nearest `package.json` above the executable's real path whose
    `name` is `package` (an npm install), or None."""
    try:
        folder = os.path.dirname(os.path.realpath(executable))
    except (OSError, ValueError):
        return None
    while True:
        # A project's own package.json may sit above a `node_modules/.bin/gemini`: read
        # through the one reader for what others supply (regular files, bounded, any parser
        # failure is "no version here")
        data = json_file_or_none(os.path.join(folder, "package.json"), max_bytes=1_000_000)
        if isinstance(data, dict) and data.get("name") == package:
            found = _VERSION_IN_OUTPUT.search(str(data.get("version", "")))
            return found.group(0) if found else None
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def ask_version(executable: str, timeout: float = VERSION_TIMEOUT) -> tuple[str | None, bool]:
    """(the first `X.Y.Z` `<exe> --version` prints, timed out). No shell, stdin closed, the
    environment kept; its output is read up to 64 KiB (`files.probe.run_bounded`): a program
    that prints more, or runs past the timeout, has its whole process group killed. Never
    raises."""
    probed = run_bounded([executable, "--version"], max_output=_OUTPUT_LIMIT, timeout=timeout,
                         merge_stderr=True)
    if probed.timed_out:
        return None, True
    if not probed.ok:  # could not start, failed, or printed without end
        return None, False
    found = _VERSION_IN_OUTPUT.search(probed.output.decode("utf-8", "replace"))
    return (found.group(0) if found else None), False


def _absolute_path(path_env: str) -> str:
    return os.pathsep.join(p for p in path_env.split(os.pathsep) if os.path.isabs(p))


def detect_installed(path_env: str | None = None, *, cache: VersionCache | None = None,
                     timeout: float = VERSION_TIMEOUT) -> dict[str, InstalledAgent]:
    """The agents on `path_env` (None: this process's PATH) and their versions (see the module
    docstring). `cache`: None uses the process's (memory and disk)."""
    search = _absolute_path(os.environ.get("PATH", "") if path_env is None else path_env)
    if not search:
        return {}
    cache = process_cache() if cache is None else cache
    found: dict[str, InstalledAgent] = {}
    for agent, (package, _label) in COMMANDS.items():
        try:
            executable = shutil.which(agent, path=search)
            if executable is None:
                continue
            version = package_version(executable, package)
            if version is not None:
                found[agent] = InstalledAgent(agent, version, executable)
                continue
            real = os.path.realpath(executable)
            info = os.stat(real)
        except (OSError, ValueError):
            continue
        stamp = (info.st_mtime_ns, info.st_size)
        known, version = cache.get(agent, real, stamp)
        if not known:
            version, timed_out = ask_version(executable, timeout)
            if timed_out:
                cache.timed_out(agent, real, stamp)
            else:
                cache.put(agent, real, stamp, version)
        if version is not None:
            found[agent] = InstalledAgent(agent, version, executable, "--version")
    return found
