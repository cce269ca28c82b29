"""Run a real agent offline and cut out, byte for byte, the memory it sent its model.

``run_agent(agent, version, workspace, home, cwd, read_path)`` copies the workspace and HOME
to fixed scratch paths (absolute paths appear in the prompt, and the agents write state into
HOME), runs the agent once against the fake model (sandbox.py: clean environment, stdin from
/dev/null, timeout, network namespace when root) and returns a ``Capture``: the memory strings
of its first request and the ones it added after the scripted tool call read ``read_path``.

How each agent is run and where its memory sits in its requests is shared with `memlens
verify`: ``memlens.verify.capture`` (re-exported here under the names the harness used).
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memlens.verify.agent_setup import (
    GEMINI_REQUIRED_SETTINGS,
    PROMPT,
    agent_argv,
    agent_env,
    port_files,
    prepare_home,
)
from memlens.verify.capture import JIT_PREFIX, Block, Capture, Payload, extract, parse_blocks
from tests.conformance.sandbox import Job, JobResult, Request, run_job

__all__ = [
    "GEMINI_REQUIRED_SETTINGS", "JIT_PREFIX", "PINNED", "PROMPT", "REFERENCE", "Block",
    "Capture", "Job", "JobResult", "Payload", "Request", "Staged", "agent_binary", "cache_root",
    "extract", "is_installed", "parse_blocks", "prepare_home", "reference_version", "run_agent",
    "run_job", "scratch_for", "stage",
]

AgentName = Literal["gemini", "claude", "codex", "copilot", "opencode", "pi"]
# The versions the suite runs, newest first per agent: the versions each profile was checked on.
REFERENCE: dict[str, tuple[str, ...]] = {
    "gemini": ("0.61.0", "0.43.0"),
    "claude": ("2.1.330",),
    "codex": ("0.169.0",),
    "copilot": ("1.0.102",),
    "opencode": ("1.18.33",),
    "pi": ("0.73.1",),
}
VERSIONS_ENV = "MEMLENS_AGENT_VERSIONS"


def pinned_versions(
    spec: str | None,
) -> tuple[dict[str, tuple[str, ...]], dict[tuple[str, str], str]]:
    """(the versions to run, {(agent, version): the reference version it is compared as}).

    ``spec`` is ``MEMLENS_AGENT_VERSIONS`` (``claude@2.1.332 codex@0.171.0``, space or comma
    separated; empty: the reference versions): the suite then runs exactly those agents at
    those versions, each compared as the newest reference version of its agent (that
    version's predictor, known differences and goldens): a new release passes when it sends
    what the verified one sent."""
    if not spec or not spec.strip():
        return dict(REFERENCE), {}
    chosen: dict[str, list[str]] = {}
    baseline: dict[tuple[str, str], str] = {}
    for item in re.split(r"[\s,]+", spec.strip()):
        agent, _, version = item.partition("@")
        if agent not in REFERENCE or not re.fullmatch(r"\d+\.\d+\.\d+", version):
            raise ValueError(f"{VERSIONS_ENV}: expected AGENT@X.Y.Z (gemini, claude, codex, "
                             f"copilot, opencode), "
                             f"got {item!r}")
        chosen.setdefault(agent, []).append(version)
        if version not in REFERENCE[agent]:
            baseline[(agent, version)] = REFERENCE[agent][0]
    return {a: tuple(v) for a, v in chosen.items()}, baseline


PINNED, _BASELINE = pinned_versions(os.environ.get(VERSIONS_ENV))


def reference_version(agent: str, version: str) -> str:
    """The reference version ``version`` is compared as (itself unless overridden)."""
    return _BASELINE.get((agent, version), version)


SCRATCH_ROOT = Path(os.environ.get("MEMLENS_CONFORMANCE_SCRATCH",
                                   "/tmp/memlens-conformance"))
TIMEOUT = float(os.environ.get("MEMLENS_CONFORMANCE_TIMEOUT", "120"))


# ----------------------------------------------------------------------------- install


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memlens" / "agents"


def agent_binary(agent: str, version: str) -> Path:
    """Where scripts/agents/install.sh puts the agent (it may not be there yet)."""
    return cache_root() / f"{agent}-{version}" / "node_modules" / ".bin" / agent


def is_installed(agent: str, version: str) -> bool:
    stamp = cache_root() / f"{agent}-{version}" / ".complete"
    return stamp.is_file() and agent_binary(agent, version).exists()


# ----------------------------------------------------------------------------- running


def scratch_for(agent: str, version: str, name: str) -> Path:
    return SCRATCH_ROOT / f"{agent}-{version}" / name


@dataclass(frozen=True)
class Staged:
    """A run's copies at their fixed scratch paths."""

    scratch: Path
    workspace: Path
    home: Path
    cwd: Path
    read_path: Path | None


def stage(
    agent: str,
    version: str,
    workspace: Path,
    home: Path,
    cwd: str = ".",
    read_path: str | None = None,
    *,
    name: str | None = None,
) -> Staged:
    """Copy ``workspace`` and ``home`` to ``SCRATCH_ROOT/<agent>-<version>/<name>/{ws,home}``
    (name: the workspace folder's name), so a run is reproducible, paths included, and give
    HOME what the agent needs to run offline. ``cwd`` and ``read_path`` are relative to the
    workspace (absolute paths inside the workspace or home are mapped to their copies)."""
    scratch = scratch_for(agent, version, name or workspace.name)
    ws_copy, home_copy = _copy_trees(workspace, home, scratch)
    prepare_home(agent, home_copy)
    return Staged(
        scratch=scratch, workspace=ws_copy, home=home_copy,
        cwd=_map_path(cwd, workspace, home, ws_copy, home_copy),
        read_path=_map_path(read_path, workspace, home, ws_copy, home_copy) if read_path else None,
    )


def run_agent(
    agent: str,
    version: str,
    workspace: Path,
    home: Path,
    cwd: str = ".",
    read_path: str | None = None,
    *,
    name: str | None = None,
    tool_call: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
) -> Capture:
    """Run the agent on staged copies of ``workspace`` and ``home`` (see ``stage``) and
    capture its memory. ``tool_call`` ({name, args}, Gemini CLI only): the scripted first
    turn calls that tool instead of reading ``read_path``; the memory files the run wrote are
    captured, and HOME is put back as it was before the run (also kept as ``home-before``,
    for a prediction of what the call writes; the run's own as ``home-after``). ``env``:
    variables added to the agent's environment."""
    staged = stage(agent, version, workspace, home, cwd, read_path, name=name)
    before: dict[str, bytes] = {}
    if tool_call is not None:
        shutil.copytree(staged.home, staged.scratch / HOME_BEFORE, symlinks=True)
        before = memory_files(staged.home)
    argv = _argv(agent, version)
    if tool_call is not None:
        # -p mode leaves out the tools that need an approval (save_memory among them)
        argv[1:1] = ["--approval-mode", "yolo"]
    job = Job(
        argv=argv,
        env={**_env(agent, staged.home), **(env or {})},
        cwd=str(staged.cwd),
        read_path=str(staged.read_path) if staged.read_path else None,
        tool_call=tool_call,
        timeout=TIMEOUT,
        writable=[str(staged.scratch)],
        port_files=port_files(agent, staged.home, env),
    )
    result = run_job(job)
    # Kept for a look by hand, and so extraction can be re-run without the agent.
    (staged.scratch / "result.json").write_text(result.model_dump_json(indent=1), encoding="utf-8")
    capture = extract(agent, version, result, staged.workspace, staged.home, staged.cwd,
                      staged.read_path)
    if tool_call is not None:
        after = memory_files(staged.home)
        capture.tool_call = tool_call
        capture.written = {rel: data.decode("utf-8", "replace")
                           for rel, data in sorted(after.items()) if before.get(rel) != data}
        # HOME back as the agent found it at start (what its start-up payloads came from, so
        # predictions are made on it); what the run left is kept beside it.
        after_copy = staged.scratch / "home-after"
        if after_copy.exists():
            shutil.rmtree(after_copy)
        staged.home.rename(after_copy)
        shutil.copytree(staged.scratch / HOME_BEFORE, staged.home, symlinks=True)
    return capture


HOME_BEFORE = "home-before"


def memory_files(home: Path) -> dict[str, bytes]:
    """The markdown files under HOME (what save_memory may write), by relative path."""
    out: dict[str, bytes] = {}
    for path in sorted(home.rglob("*.md")):
        if path.is_file() and not path.is_symlink():
            out[path.relative_to(home).as_posix()] = path.read_bytes()
    return out


def _copy_trees(workspace: Path, home: Path, scratch: Path) -> tuple[Path, Path]:
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    ws_copy, home_copy = scratch / "ws", scratch / "home"
    shutil.copytree(workspace, ws_copy, symlinks=True)
    shutil.copytree(home, home_copy, symlinks=True)
    return ws_copy, home_copy


def _map_path(path: str, workspace: Path, home: Path, ws_copy: Path, home_copy: Path) -> Path:
    given = Path(path)
    if not given.is_absolute():
        return Path(os.path.normpath(ws_copy / given))
    for source, copy in ((workspace, ws_copy), (home, home_copy)):
        if given.is_relative_to(source):
            return copy / given.relative_to(source)
    return given


def _argv(agent: str, version: str) -> list[str]:
    return agent_argv(agent, str(agent_binary(agent, version)))


def _env(agent: str, home: Path) -> dict[str, str]:
    env = agent_env(agent, home)
    if agent == "copilot":
        # It unpacks itself (235 MB) into $XDG_CACHE_HOME/copilot on first run: once per
        # version in the agent cache, not in every scratch HOME.
        env["XDG_CACHE_HOME"] = str(copilot_unpack_folder())
    return env


def copilot_unpack_folder() -> Path:
    """Where the harness lets Copilot CLI unpack itself (shared by its runs)."""
    folder = cache_root() / "copilot-unpacked"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
