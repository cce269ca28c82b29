"""`memlens verify`: run the user's installed agents on a copy of their workspace, offline,
and compare what each sent its model with Memory Lens's prediction.

Only on a folder the user trusts (the CLI's and the editor's trust; `trusted`), and the agents
run the copy, never the repository (docs/security.md, "`memlens verify` runs the agents, never
the repository"). For each agent (found as `agent_versions.detect_installed` finds it):

1. The workspace — its repository root when it is in one, else the folder — is copied to a
   scratch folder (`.git` reduced to an empty marker; `node_modules` and virtual
   environments left out; FIFOs, sockets and devices skipped with a note), and the agent's own
   memory and settings files under HOME to a scratch HOME (`HOME_FILES`: never credentials),
   and those of a global folder the environment moves elsewhere (`moved_global_folders`).
   Both copies are scrubbed (scrub.py): every settings file keeps only the keys that decide
   memory, and files that configure what runs (MCP servers, hooks, `.env`) are removed. The
   user's files are only read.
2. The agent runs once on the copy (capture.py's argv and environment: no key, its own
   offline and quiet flags, hooks and MCP servers off, a base URL on 127.0.0.1) against the
   recording fake model (fake_model.py) inside the sandbox (sandbox.py: bubblewrap; no
   network but loopback, HOME hidden, only the scratch writable). Without a sandbox it is
   refused unless the caller accepts the risk (`unsandboxed`).
   The fake's first answer asks it to read one file (`read`: a file beside a subfolder's
   memory file, chosen unless given), so what the agent loads on read is sent too.
3. Memory Lens predicts the same copy in-process through the workspace service
   (`workspace.reading.agent_show` / `queries.agent_jit_payloads`: what `show --agent A
   --json` and `jit --agent A --json` print), and every payload is compared byte for byte;
   a difference is shown as a unified diff (difflib), the scratch paths mapped back to the user's.

A release that verifies identical is remembered on this machine
(`agent_versions.remember_verification`), so its "unverified" note goes away.
"""

from __future__ import annotations

import difflib
import os
import shutil
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from memlens.agent_versions import (
    AGENT_LABELS,
    COMMANDS,
    InstalledAgent,
    profile_for,
    remember_verification,
)
from memlens.files.walk import remove_tree, walk
from memlens.protocol.verify import AgentVerification, PayloadComparison, VerifyResult
from memlens.verify.agent_setup import (
    MovedFolders,
    agent_argv,
    agent_env,
    moved_global_folders,
    port_files,
    prepare_home,
)
from memlens.verify.capture import Capture, extract
from memlens.verify.sandbox import Job, SandboxUnavailable, best_isolation, run_job
from memlens.verify.scrub import scrub_tree

TIMEOUT = 180.0  # seconds one agent run may take
# What the agent's scratch HOME holds: its memory and settings files, nothing else.
HOME_FILES: dict[str, tuple[str, ...]] = {
    "gemini": (".gemini/GEMINI.md", ".gemini/AGENTS.md", ".gemini/settings.json",
               ".gemini/*.md"),
    "claude": (".claude/CLAUDE.md", ".claude/settings.json", ".claude/rules/**/*.md"),
    "codex": (".codex/AGENTS.md", ".codex/AGENTS.override.md", ".codex/config.toml"),
    "copilot": (".copilot/copilot-instructions.md", ".copilot/instructions/**/*.md"),
    "opencode": (".config/opencode/AGENTS.md", ".config/opencode/opencode.json",
                 ".config/opencode/opencode.jsonc", ".claude/CLAUDE.md"),
    "pi": (".pi/agent/AGENTS.md", ".pi/agent/AGENTS.MD", ".pi/agent/CLAUDE.md",
           ".pi/agent/CLAUDE.MD", ".pi/agent/SYSTEM.md", ".pi/agent/APPEND_SYSTEM.md"),
}
MEMORY_NAMES: dict[str, tuple[str, ...]] = {
    "gemini": ("GEMINI.md",), "claude": ("CLAUDE.md",), "codex": (),
    "copilot": ("AGENTS.md", "CLAUDE.md", "GEMINI.md"),
    "opencode": ("AGENTS.md", "CLAUDE.md", "CONTEXT.md"),
    "pi": (),  # it reads nothing later
}
# The agents that ask git for the repository (a `.git` marker folder must be a repository).
ASKS_GIT = frozenset({"copilot", "opencode"})
SKIPPED_FOLDERS = frozenset({"node_modules", ".venv", "venv", "__pycache__", ".tox"})
MAX_COPY_BYTES = 512 * 1024 * 1024
# Agents run at once: each waits mostly on its own process and on the disk.
PARALLEL = 4

Progress = Callable[[str], None]
Predict = Callable[[str, str, Capture], tuple[list[str], list[str]]]


class VerifyError(Exception):
    """A problem with what was asked (no such folder, unknown agent): exit 2."""


def verify(path: str, installed: Mapping[str, InstalledAgent], agents: list[str] | None = None,
           *, home: str | None = None, read: str | None = None, remember: bool = True,
           progress: Progress | None = None, timeout: float = TIMEOUT,
           predict: Predict | None = None, trusted: bool | None = None, unsandboxed: bool = False,
           ) -> VerifyResult:
    """Verify each of `agents` (default: every installed one) on the workspace at `path`.
    `trusted`: the user's decision for this run (None: the trust rules, `decide_trust`);
    an untrusted folder is refused. `unsandboxed`: run the agents even where no sandbox can
    (the user named the risk). `predict` (tests): another prediction (agent, version,
    capture) → (start-up payloads, on-read payloads) in place of the workspace service's."""
    folder = os.path.realpath(path)
    if not os.path.isdir(folder):
        raise VerifyError(f"not a directory: {path}")
    wanted = agents or [a for a in COMMANDS if a in installed] or list(COMMANDS)
    for agent in wanted:
        if agent not in COMMANDS:
            raise VerifyError(f"unknown agent {agent!r} (one of {', '.join(COMMANDS)})")
    user_home = os.path.realpath(home or os.path.expanduser("~"))
    if read is not None and not os.path.isfile(os.path.normpath(os.path.join(folder, read))):
        raise VerifyError(f"--read: no such file in the workspace: {read}")
    if any(a in installed for a in wanted):  # something will run: the folder's, sandboxed
        _require_trust(folder, user_home, trusted)
        if not unsandboxed and best_isolation() != "sandbox":
            raise VerifyError(NO_SANDBOX)
    started = time.monotonic()
    results: dict[str, AgentVerification] = {}
    for agent in wanted:
        if agent not in installed:
            results[agent] = AgentVerification(
                agent=agent, label=AGENT_LABELS[agent], status="missing",
                message=f"{AGENT_LABELS[agent]} is not installed (no `{agent}` on PATH): "
                        f"nothing to verify")
    running = [installed[a] for a in wanted if a in installed]
    if running:
        results.update(_verify_all(running, folder, user_home, read, remember, timeout,
                                   predict, unsandboxed, progress, started))
    ordered = [results[a] for a in wanted]
    ran = [r for r in ordered if r.status in ("identical", "differs")]
    return VerifyResult(path=folder, agents=ordered,
                        identical=bool(ran) and all(r.status == "identical" for r in ran),
                        seconds=round(time.monotonic() - started, 1))


def _verify_all(running: list[InstalledAgent], folder: str, user_home: str, read: str | None,
                remember: bool, timeout: float, predict: Predict | None, unsandboxed: bool,
                progress: Progress | None, started: float) -> dict[str, AgentVerification]:
    """Every installed agent at once (up to PARALLEL): the workspace copied once (once more
    for an agent that asks git), each agent's run in a thread of its own; each prediction in
    this thread as its run ends, all of them in one walk of the copy (files/tree.py). Each
    agent's `seconds` is the wall time from the start of `verify` to its result."""
    from memlens.files.tree import one_walk

    root = _workspace_root(folder)
    scratch = Path(tempfile.mkdtemp(prefix="memlens-verify-"))
    copies = _Copies(Path(root), scratch)
    labels = {f.agent: f"{AGENT_LABELS[f.agent]} {f.version}" for f in running}
    waiting = dict(labels)

    def say() -> None:
        if progress:
            done = len(labels) - len(waiting)
            progress(f"running {', '.join(waiting.values())} offline"
                     + (f" ({done} of {len(labels)} done)" if done else ""))

    out: dict[str, AgentVerification] = {}
    # Each copy is removed, in the background, as soon as the last agent using it is compared.
    def own_copy(agent: str) -> bool:
        return agent in ASKS_GIT and unsandboxed

    users = {kind: sum(own_copy(f.agent) == kind for f in running) for kind in (False, True)}
    removing: list[threading.Thread] = []

    def remove_later(path: Path) -> None:
        thread = threading.Thread(target=remove_tree, args=(path,), name="memlens-verify-rm",
                                  daemon=True)
        thread.start()
        removing.append(thread)

    try:
        say()
        workers = min(len(running), PARALLEL)
        with ThreadPoolExecutor(max_workers=workers) as pool, one_walk():
            futures = {pool.submit(_run_one, found, copies, folder, root, user_home, read,
                                   timeout, unsandboxed): found for found in running}
            for future in as_completed(futures):
                found = futures[future]
                ran = future.result()
                verified = ran.verification
                if ran.capture is not None:
                    _compare_run(ran, predict, remember)
                verified.seconds = round(time.monotonic() - started, 1)
                out[found.agent] = verified
                waiting.pop(found.agent, None)
                kind = own_copy(found.agent)
                users[kind] -= 1
                remove_later(scratch / found.agent)
                if users[kind] == 0:
                    remove_later(scratch / ("ws-git" if kind else "ws"))
                if waiting:
                    say()
        if progress and any(t.is_alive() for t in removing):
            progress("removing the copies")
    finally:
        for thread in removing:
            thread.join()
        remove_tree(scratch)
    return out


# Where the sandbox comes from: bubblewrap, on Linux only (no sandbox elsewhere yet).
_GET_SANDBOX = ("bubblewrap: `apt-get install bubblewrap`, and user namespaces allowed"
                if sys.platform.startswith("linux") else
                f"Memory Lens has no sandbox for {sys.platform} yet")
NO_SANDBOX = (f"no sandbox can run here ({_GET_SANDBOX}), and a repository's files could make "
              "your agents run commands as you: --unsafe-no-sandbox runs them anyway")


def _require_trust(folder: str, home: str, trusted: bool | None) -> None:
    """verify runs the user's agents on the folder's files: only where the user trusts it."""
    if trusted is True:
        return
    from memlens.agents.gemini.settings import load_settings
    from memlens.agents.gemini.trust import how_to_trust

    settings = load_settings(folder, home=home,
                             cli={"trusted": trusted} if trusted is False else None,
                             installed={})
    if settings.trusted:
        return
    raise VerifyError(f"{folder} is not trusted: verify runs your agents on its files; "
                      f"{how_to_trust(folder, home)} (this run)")


class _Copies:
    """The workspace copied once per run and shared by the agents (a second copy, with a
    repository marker, for an agent that asks git), made by the first agent that needs it."""

    def __init__(self, root: Path, scratch: Path) -> None:
        self.root, self.scratch = root, scratch
        self.lock = threading.Lock()
        self.made: dict[bool, tuple[Path, list[str]] | None] = {}
        self.markers: dict[bool, list[str]] = {}  # the folders holding a `.git`, relative

    def get(self, repository: bool) -> tuple[Path, list[str]] | None:
        """(the copy, its notes); None when the workspace is too large to copy."""
        with self.lock:
            if repository not in self.made:
                where = self.scratch / ("ws-git" if repository else "ws")
                copy = where / (self.root.name or "workspace")
                try:
                    markers: list[str] = []
                    skipped = _copy_workspace(self.root, copy, repository=repository,
                                              markers=markers)
                    self.markers[repository] = markers
                    self.made[repository] = (copy, [*skipped, *scrub_tree(copy)])
                except _TooLarge:
                    self.made[repository] = None
            return self.made[repository]


@dataclass
class _Ran:
    """One agent's run, before its comparison."""

    verification: AgentVerification
    capture: Capture | None = None
    mapping: list[tuple[str, str]] = field(default_factory=list)
    target: Path | None = None
    folder: str = ""
    environment: dict[str, str] = field(default_factory=dict)  # the moved global folders'


def _run_one(found: InstalledAgent, copies: _Copies, folder: str, root: str, user_home: str,
             read: str | None, timeout: float, unsandboxed: bool = False) -> _Ran:
    """Copy what the agent needs and run it (in a worker thread)."""
    agent, label = found.agent, f"{AGENT_LABELS[found.agent]} {found.version}"
    base = AgentVerification(agent=agent, label=label, version=found.version,
                             executable=found.executable, status="failed", message="")
    # An agent that asks git shares the copy in the sandbox, a repository marker bound over
    # each `.git` for its run only; unsandboxed, it gets a copy of its own.
    own_copy = agent in ASKS_GIT and unsandboxed
    made = copies.get(own_copy)
    if made is None:
        base.message = (f"{label}: the workspace is over {MAX_COPY_BYTES >> 20} MB; "
                        f"verify a smaller folder")
        return _Ran(base)
    ws_copy, notes = made
    own = copies.scratch / agent
    overlays: list[tuple[str, str]] = []
    if agent in ASKS_GIT and not own_copy:
        for i, folder_with_git in enumerate(copies.markers.get(False, [])):
            marker = own / "git" / str(i)
            _repository_marker(marker)
            overlays.append((str(marker), str(ws_copy / folder_with_git / ".git")))
    home_copy = own / "home"
    _copy_home(agent, Path(user_home), home_copy)
    base.notes = [*notes, *(f"HOME: {note}" for note in scrub_tree(home_copy))]
    prepare_home(agent, home_copy)
    moved = moved_global_folders(agent, own / "env", user_home)  # absolute: a scrubbed copy
    if moved.refused:
        base.message = f"{label} was not run: {moved.refused[0]}"
        return _Ran(base)
    for copy, _ in moved.copies:  # named by its variable (CODEX_HOME's: codex_home/.codex)
        shown, folder_copy = copy.relative_to(own / "env").parts[0].upper(), copy.parent
        base.notes += [f"{shown}: {n}" for n in scrub_tree(copy if copy.is_dir() else folder_copy)]
    cwd = ws_copy / os.path.relpath(folder, root)
    memory_mapping = _copy_auto_memory(agent, user_home, folder, home_copy, cwd, moved)
    target = _read_target(agent, ws_copy, cwd, read)
    base.read = os.path.relpath(target, cwd) if target else None
    env = {**agent_env(agent, home_copy), **moved.env}  # the copies win (CODEX_HOME)
    job = Job(argv=agent_argv(agent, found.executable), env=env,
              cwd=str(cwd), read_path=str(target) if target else None, timeout=timeout,
              writable=[str(ws_copy.parent), str(own)], overlays=overlays,
              isolation="best" if unsandboxed else "sandbox",
              port_files=port_files(agent, home_copy, env))
    try:
        result = run_job(job)
    except SandboxUnavailable:
        base.message = f"{label}: {NO_SANDBOX}"
        return _Ran(base)
    except (OSError, RuntimeError) as error:
        base.message = f"{label} could not be started: {str(error).splitlines()[0]}"
        return _Ran(base)
    base.isolation = "loopback-only" if result.isolation == "none" else result.isolation
    if result.exit_code == -1:
        base.status = "timeout"
        base.message = f"{label} did not finish within {timeout:.0f} s"
        return _Ran(base)
    capture = extract(agent, found.version, result, ws_copy, home_copy, cwd, target)
    if not result.requests or not (capture.startup or _asked_model(agent, result)):
        base.status = "offline"
        tail = result.stderr.strip().splitlines()[-1:] or ["no output"]
        base.message = (f"{label} sent nothing to the local model (exit "
                        f"{result.exit_code}: {tail[0][:200]}): it cannot run offline here")
        return _Ran(base)
    if result.exit_code != 0:
        base.message = (f"{label} exited {result.exit_code}: "
                        f"{(result.stderr.strip().splitlines() or [''])[-1][:200]}")
        return _Ran(base)
    mapping = [*memory_mapping, *((str(copy), real) for copy, real in moved.copies),
               (str(ws_copy), root), (str(home_copy), user_home)]
    return _Ran(base, capture, mapping, target, folder, moved.env)


def _compare_run(ran: _Ran, predict: Predict | None, remember: bool) -> None:
    """Predict the run's copy and compare (in the calling thread: the engine's walks)."""
    base, capture, mapping, target = ran.verification, ran.capture, ran.mapping, ran.target
    assert capture is not None and base.version is not None
    agent = base.agent
    sent_start, sent_read = sent_payloads(capture)
    if predict is not None:
        want_start, want_read = predict(agent, base.version, capture)
    else:
        want_start, want_read = predicted_payloads(agent, base.version, capture,
                                                   ran.environment)
    if capture.memory_instructions:
        base.memory_instructions = _mapped(capture.memory_instructions, mapping)
    base.payloads = _compare("start-up", sent_start, want_start, mapping)
    if target is not None:
        shown = os.path.relpath(_mapped(str(target), mapping), ran.folder)
        base.payloads += _compare(f"after reading {shown}", sent_read, want_read, mapping)
    differing = [p for p in base.payloads if not p.identical]
    base.status = "differs" if differing else "identical"
    base.message = (f"{len(differing)} of {len(base.payloads)} payloads differ" if differing
                    else "identical" if base.payloads
                    else "identical (it sends no memory here, as predicted)")
    if remember:
        # `remembered` tells the user what changed: a release the verified list did not
        # hold is now verified here (the list's own releases are recorded all the same).
        listed = profile_for(agent, base.version).verified
        written = remember_verification(agent, base.version, base.status,
                                        time.strftime("%Y-%m-%d", time.gmtime()))
        base.remembered = written and base.status == "identical" and not listed


def _asked_model(agent: str, result: object) -> bool:
    routes = {"gemini": "gemini-stream", "claude": "anthropic", "codex": "openai",
              "copilot": "openai-chat", "opencode": "openai-chat",
              "pi": "openai-chat"}[agent]
    return any(r.route == routes for r in getattr(result, "requests", []))


def sent_payloads(capture: Capture) -> tuple[list[str], list[str]]:
    """What the agent sent, as the strings `show --agent A --json` / `jit --agent A --json`
    predict (the conformance suite compares the same): (at start, after the read)."""
    if capture.agent == "gemini":
        start = [p.text for p in capture.startup if p.text]
        appended = "".join(p.text for p in capture.on_read)
        return start, [appended] if appended else []
    if capture.agent == "claude":
        joined = "".join(p.text for p in capture.startup)
        messages: dict[str, str] = {}
        for payload in capture.on_read:
            messages[payload.where] = messages.get(payload.where, "") + payload.text
        return [joined] if joined else [], list(messages.values())
    if capture.agent in ("copilot", "opencode"):
        return [p.text for p in capture.startup], [p.text for p in capture.on_read]
    return [p.text for p in capture.startup], []


def predicted_payloads(agent: str, version: str, capture: Capture,
                       environment: Mapping[str, str] | None = None
                       ) -> tuple[list[str], list[str]]:
    """Memory Lens's prediction for the run's copy, in-process through the workspace service,
    with the profile that serves `version`, and the run's values of the variables that move
    the agent's global folder (`environment`)."""
    from memlens.agents.environment import environment_overrides

    with environment_overrides(environment or {}):
        return _predicted(agent, version, capture)


def _predicted(agent: str, version: str, capture: Capture) -> tuple[list[str], list[str]]:
    from memlens.agents import agent_by_id
    from memlens.agents.gemini.settings import load_settings
    from memlens.protocol.memory import AgentProfileInfo
    from memlens.workspace.queries import agent_jit_payloads
    from memlens.workspace.reading import agent_show

    settings = load_settings(capture.cwd, home=capture.home,
                             cli={"trusted": True, "agents": [f"{agent}@{version}"]},
                             installed={})
    profile = profile_for(agent, version)
    info = AgentProfileInfo(agent=agent, profile=profile.name, version=profile.profile or None,
                            installed=version, verified=profile.verified, note=profile.note)
    engine_agent = agent_by_id(agent)
    start = agent_show(engine_agent, capture.cwd, settings, info).payloads
    after: list[str] = []
    if capture.read_path:
        entries = agent_jit_payloads(engine_agent, capture.cwd, [capture.read_path], settings)
        after = entries[0].payloads if entries else []
    return list(start), list(after)


def _mapped(text: str, mapping: list[tuple[str, str]]) -> str:
    for copy, original in mapping:
        text = text.replace(copy, original)
    return text


def _compare(what: str, sent: list[str], predicted: list[str],
             mapping: list[tuple[str, str]]) -> list[PayloadComparison]:
    out = []
    for i in range(max(len(sent), len(predicted))):
        got = _mapped(sent[i], mapping) if i < len(sent) else ""
        want = _mapped(predicted[i], mapping) if i < len(predicted) else ""
        name = f"{what}, message {i + 1}"
        if i >= len(sent):
            name += " (predicted, not sent)"
        elif i >= len(predicted):
            name += " (sent, not predicted)"
        same = i < len(sent) and i < len(predicted) and sent[i] == predicted[i]
        diff = "" if same else "".join(difflib.unified_diff(
            want.splitlines(keepends=True), got.splitlines(keepends=True),
            fromfile=f"predicted: {name}", tofile=f"sent: {name}", n=2))
        if not same and not diff:  # differ only in a final newline or are both empty
            diff = f"--- predicted: {name}\n+++ sent: {name}\n{want!r} != {got!r}\n"
        out.append(PayloadComparison(name=name, identical=same, sent=got, predicted=want,
                                     diff=diff))
    return out


def _workspace_root(folder: str) -> str:
    from memlens.files.roots import repository_root

    return repository_root(folder) or folder


class _TooLarge(Exception):
    pass


def _copy_workspace(source: Path, target: Path, *, repository: bool = False,
                    markers: list[str] | None = None) -> list[str]:
    """Copy the tree (symlinks as symlinks; without recursion, so a deep hostile tree cannot
    exhaust the stack): `.git` becomes an empty marker folder (the agents look for it to find
    the project root), heavy folders are left out, and what is neither a file, a folder nor a
    link (a FIFO, a socket, a device: opening one can block forever) or cannot be read is
    skipped — the notes say which. `repository`: the marker is a minimal repository git
    recognises (HEAD, objects/, refs/), for an agent that asks git (GitHub Copilot CLI)."""
    total = 0
    gits: list[str] = []
    notes: list[str] = []
    target.mkdir(parents=True)
    for folder, dirs, files in walk(source):
        relative = os.path.relpath(folder, source)
        copy = target / relative
        if ".git" in dirs or ".git" in files:
            gits.append(relative)
        entered = []
        for name in sorted([*dirs, *files]):
            if name == ".git" or (name in SKIPPED_FOLDERS and name in dirs):
                continue
            path = os.path.join(folder, name)
            where = os.path.relpath(path, source)
            try:
                info = os.lstat(path)
                if stat.S_ISLNK(info.st_mode):
                    os.symlink(os.readlink(path), copy / name)
                elif stat.S_ISDIR(info.st_mode):
                    (copy / name).mkdir()
                    entered.append(name)
                elif stat.S_ISREG(info.st_mode):
                    total += info.st_size
                    if total > MAX_COPY_BYTES:
                        raise _TooLarge
                    shutil.copy2(path, copy / name, follow_symlinks=False)
                else:
                    notes.append(f"skipped {where}: not a regular file (a FIFO, socket or "
                                 "device)")
            except OSError as error:
                notes.append(f"skipped {where}: {error.strerror or error}")
        dirs[:] = entered
    for folder in gits:
        marker = target / folder / ".git"
        marker.mkdir(exist_ok=True)
        if repository:
            _repository_marker(marker)
    if markers is not None:
        markers += gits
    return notes


def _repository_marker(marker: Path) -> None:
    """A `.git` folder git recognises as a repository (HEAD, objects/, refs/)."""
    (marker / "objects").mkdir(parents=True, exist_ok=True)
    (marker / "refs").mkdir(exist_ok=True)
    (marker / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")


def _copy_home(agent: str, home: Path, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for pattern in HOME_FILES[agent]:
        for path in sorted(home.glob(pattern)):
            if path.is_file():
                copy = target / path.relative_to(home)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, copy)


def _copy_auto_memory(agent: str, user_home: str, folder: str, home_copy: Path, cwd: Path,
                      moved: MovedFolders) -> list[tuple[str, str]]:
    """Claude Code: the user's auto-memory folder for `folder` copied to where Claude Code
    keeps it for the copy (its markdown files, bounded), so MEMORY.md is verified too; the
    path mapping back. Only when both lie in their HOME or CLAUDE_CONFIG_DIR (`moved`: the
    user's and the run's copy; a folder settings move elsewhere is left alone: the agent
    would read, and could write, the real one), never one the repository's settings chose."""
    if agent != "claude":
        return []
    from memlens.agents.claude.memory_folder import auto_memory_folder, topic_paths
    from memlens.agents.environment import environment_overrides
    place = auto_memory_folder(user_home, folder)
    if place.setting is not None and place.setting.scope in ("project", "local"):
        return []  # a folder the repository chose (it could name ~/.ssh): never read
    real = place.folder
    with environment_overrides(moved.env):  # where the run keeps it
        copy = auto_memory_folder(str(home_copy), str(cwd)).folder
    if real is None or copy is None or not os.path.isdir(real):
        return []
    reals = [user_home, *(user for _, user in moved.copies)]  # CLAUDE_CONFIG_DIR's and copy
    copies = [str(home_copy), *(str(made) for made, _ in moved.copies)]
    if not (any(real.startswith(r.rstrip("/") + "/") for r in reals)
            and any(copy.startswith(c.rstrip("/") + "/") for c in copies)):
        return []
    total = 0
    for path in [os.path.join(real, "MEMORY.md"), *topic_paths(real)]:
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        total += os.path.getsize(path)
        if total > MAX_COPY_BYTES:
            break
        target = Path(copy) / os.path.relpath(path, real)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return [(copy, real)]


def _read_target(agent: str, ws: Path, cwd: Path, read: str | None) -> Path | None:
    """The file the scripted tool call reads: `read` (relative to the working folder), else a
    file beside the first subfolder memory file of this agent (so its on-read loading is
    verified too), else none."""
    if read is not None:
        target = Path(os.path.normpath(cwd / read))
        if not target.is_file():
            raise VerifyError(f"--read: no such file in the workspace: {read}")
        return target
    names = MEMORY_NAMES[agent]
    if not names:
        return None
    for folder, dirs, files in walk(cwd):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        if Path(folder) == cwd or not any(n in files for n in names):
            continue
        others = sorted(f for f in files if f not in names and not f.startswith(".")
                        and os.path.isfile(os.path.join(folder, f)))
        if others:
            return Path(folder) / others[0]
    return None
