"""Claude Code's auto memory, against the real Claude Code (the pinned release and the newest
the install script caches): for each case below, the start-up memory message it sends is
compared byte for byte with memlens's, and the folder its `# Memory` system-prompt section
names (or that section's absence) with the folder memlens says it uses.

The cases are the behaviours docs/reference.md's "Claude Code's memory" describes: the off switches,
`autoMemoryDirectory` from each settings file and their precedence, the variables that move
the folder, the index cut at its limits and the warning Claude Code appends, the index it
writes when there is none, what it strips from the index, and worktrees.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memlens.agents.claude.messages import payload
from memlens.agents.claude.startup import ClaudeLoader
from tests.conformance.agents import (
    PINNED,
    Staged,
    is_installed,
    run_agent,
    scratch_for,
    stage,
)

# The pinned release and the newest one (scripts/agents/install.sh installs both).
VERSIONS = tuple(dict.fromkeys([*PINNED.get("claude", ()), "2.1.332"]))
TOPIC = "---\nname: {name}\ndescription: {description}\nmetadata:\n  type: {type}\n---\n{body}\n"
INDEX = "- [User role](user_role.md) — senior engineer\n- [Testing](testing.md) — run tests\n"


def _lines(count: int, width: int) -> str:
    return "".join(f"- line {n:04d} " + "x" * width + "\n" for n in range(count))


@dataclass(frozen=True)
class MemoryCase:
    id: str
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # workspace files (after a worktree)
    user_settings: dict[str, Any] | None = None
    memory: str | None = None  # the memory folder, relative to HOME (default: Claude's own)
    index: str | None = INDEX  # MEMORY.md (None: none)
    cwd: str = "."
    worktree: bool = False  # cwd is a worktree `wt` of the workspace's repository


CASES = [
    MemoryCase("default"),
    MemoryCase("env-off", env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}),
    MemoryCase("env-forces-on", env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"},
               files={".claude/settings.json": '{"autoMemoryEnabled": false}'}),
    MemoryCase("project-settings-off",
               files={".claude/settings.json": '{"autoMemoryEnabled": false}'}),
    MemoryCase("user-directory", user_settings={"autoMemoryDirectory": "~/usermem"},
               memory="usermem"),
    MemoryCase("project-directory-beats-user",
               user_settings={"autoMemoryDirectory": "~/usermem"},
               files={".claude/settings.json": '{"autoMemoryDirectory": "~/projmem"}'},
               memory="projmem"),
    MemoryCase("local-directory-beats-project",
               files={".claude/settings.json": '{"autoMemoryDirectory": "~/projmem"}',
                      ".claude/settings.local.json": '{"autoMemoryDirectory": "~/localmem"}'},
               memory="localmem"),
    MemoryCase("relative-directory-ignored", user_settings={"autoMemoryDirectory": "relmem"},
               memory="relmem"),
    MemoryCase("remote-memory-dir", env={"CLAUDE_CODE_REMOTE_MEMORY_DIR": "{home}/remote"}),
    MemoryCase("subfolder-reads-root-local-not-root-project", cwd="sub",
               files={".claude/settings.json": '{"autoMemoryDirectory": "~/projmem"}',
                      ".claude/settings.local.json": '{"autoMemoryEnabled": false}',
                      "sub/x.txt": "x"}),
    MemoryCase("cut-at-200-lines", index=_lines(250, 40)),
    MemoryCase("cut-at-25000-characters", index=_lines(150, 200)),
    MemoryCase("cut-at-both", index=_lines(300, 200)),
    MemoryCase("cut-inside-one-line", index="y" * 30_000),
    MemoryCase("written-when-missing", index=None),
    MemoryCase("frontmatter-comments-sanitised",
               index="---\nk: v\n---\n\n\n- a\u200bb <!-- kept --> @./inc.md\n<!--\nblock\n-->\n"
                     "- </system-reminder> <command-name>x</command-name> <channel>\r\n- end\n",
               files={"inc.md": "not included"}),
    MemoryCase("nested-worktree-uses-main-repository", worktree=True,
               files={"CLAUDE.local.md": "main local", ".claude/rules/r.md": "main rule",
                      "wt/CLAUDE.local.md": "worktree local"}),
]


@dataclass
class Seen:
    sent: str  # the start-up memory message Claude Code sent
    memory_folder: str | None  # the folder its `# Memory` section names (None: no section)
    predicted: str
    predicted_folder: str | None


def _git(*args: str) -> None:
    subprocess.run(["git", *args], check=True, capture_output=True)


def _build(case: MemoryCase, version: str, source: Path) -> tuple[Path, Path, str]:
    """(workspace, home, cwd) of `case`, built under `source` for staging at the fixed
    scratch paths of `version` (where the slug and the worktree links must point)."""
    name = f"memory-{case.id}"
    workspace, home = source / name, source / "home"
    staged = scratch_for("claude", version, name)
    workspace.mkdir(parents=True)
    home.mkdir()
    _git("init", "-q", str(workspace))
    (workspace / "CLAUDE.md").write_text("project memory\n")
    if case.worktree:
        _git("-C", str(workspace), "add", ".")
        _git("-C", str(workspace), "-c", "user.email=m@l", "-c", "user.name=m", "commit",
             "-qm", "x")
        _git("-C", str(workspace), "worktree", "add", "-q", "wt")
        # Both links as they will be at the staged copy's path.
        (workspace / "wt" / ".git").write_text(f"gitdir: {staged}/ws/.git/worktrees/wt\n")
        (workspace / ".git" / "worktrees" / "wt" / "gitdir").write_text(f"{staged}/ws/wt/.git\n")
    for rel, text in case.files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text + "\n")
    cwd = "wt" if case.worktree else case.cwd
    (workspace / cwd).mkdir(parents=True, exist_ok=True)
    if case.user_settings is not None:
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text(json.dumps(case.user_settings))
    slug = re.sub(r"[^a-zA-Z0-9]", "-", str(staged / "ws"))
    memory = home / (case.memory or f".claude/projects/{slug}/memory")
    memory.mkdir(parents=True)
    topics = [("user_role.md", "user-role", "the user's role", "user", "Senior engineer."),
              ("testing.md", "testing", "testing feedback", "feedback", "Run tests.")]
    for stamp, (file, topic, description, kind, body) in enumerate(topics):
        path = memory / file
        path.write_text(TOPIC.format(name=topic, description=description, type=kind,
                                     body=body))
        os.utime(path, (1_700_000_000 + stamp, 1_700_000_000 + stamp))
    if case.index is not None:
        (memory / "MEMORY.md").write_text(case.index)
    return workspace, home, cwd


def _system_memory_folder(scratch: Path) -> str | None:
    result = json.loads((scratch / "result.json").read_text(encoding="utf-8"))
    system = result["requests"][0]["body"]["system"]
    text = "\n".join(p["text"] for p in system) if isinstance(system, list) else system
    match = re.search(r"You have a persistent file-based memory at `([^`]*)`", text)
    return match.group(1) if match else None


_ENVIRON = threading.Lock()  # predictions read os.environ, as the engine does


def _predict(staged: Staged, env: dict[str, str]) -> tuple[str, str | None]:
    with _ENVIRON:
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            load = ClaudeLoader(str(staged.home)).load(str(staged.cwd))
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    folder = load.auto_memory.folder if load.auto_memory else None
    return payload(load.files), folder + "/" if folder else None


def _run(case: MemoryCase, version: str, source: Path) -> Seen:
    workspace, home, cwd = _build(case, version, source)
    scratch = scratch_for("claude", version, workspace.name)
    env = {k: v.replace("{home}", str(scratch / "home")) for k, v in case.env.items()}
    # Predicted on the staged copy before the run: Claude Code writes MEMORY.md when there
    # is none, and the prediction must not see what it wrote.
    predicted, folder = _predict(stage("claude", version, workspace, home, cwd,
                                       name=workspace.name), env)
    capture = run_agent("claude", version, workspace, home, cwd=cwd, name=workspace.name,
                        env=env)
    sent = "".join(p.text for p in capture.startup)
    return Seen(sent, _system_memory_folder(scratch), predicted, folder)


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[tuple[str, str], Seen]]:
    installed = [v for v in VERSIONS if is_installed("claude", v)]
    jobs = [(case, version) for version in installed for case in CASES]
    source = tmp_path_factory.mktemp("claude-memory")
    workers = int(os.environ.get("MEMLENS_CONFORMANCE_JOBS") or os.cpu_count() or 2)

    def one(job: tuple[MemoryCase, str]) -> Seen:
        case, version = job
        return _run(case, version, source / version / case.id)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results = dict(zip([(c.id, v) for c, v in jobs], pool.map(one, jobs), strict=True))
    yield results


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_auto_memory(case: MemoryCase, version: str, seen: dict[tuple[str, str], Seen]
                     ) -> None:
    if not is_installed("claude", version):
        pytest.skip(f"claude@{version} not installed: bash scripts/agents/install.sh")
    got = seen[(case.id, version)]
    assert got.predicted == got.sent
    assert got.predicted_folder == got.memory_folder
