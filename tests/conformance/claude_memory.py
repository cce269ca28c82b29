"""Claude Code's auto memory against the real Claude Code: one case (`MemoryCase`: settings,
variables, the memory folder and its index, the working folder, a worktree) built at the fixed
scratch paths, predicted by memlens's engine and run through the real agent offline (`run`),
and a generator of such cases (`generated(seed, count)`: realistic and adversarial, pure and
deterministic) for the differential runs of issue 20.

    python -m tests.conformance.claude_memory --seed 1 --cases 200 [--version 2.1.332]

prints each case that differs and the figures; test_claude_memory.py runs the hand-written
cases and a few generated ones in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlens.agents.claude.messages import payload
from memlens.agents.claude.startup import ClaudeLoader
from tests.conformance.agents import PINNED, Staged, is_installed, run_agent, scratch_for, stage

# The pinned release and the newest one (scripts/agents/install.sh installs both).
VERSIONS = tuple(dict.fromkeys([*PINNED.get("claude", ()), "2.1.332"]))
TOPIC = "---\nname: {name}\ndescription: {description}\nmetadata:\n  type: {type}\n---\n{body}\n"
DEFAULT_TOPICS = (
    ("user_role.md", TOPIC.format(name="user-role", description="the user's role", type="user",
                                  body="Senior engineer.")),
    ("testing.md", TOPIC.format(name="testing", description="testing feedback", type="feedback",
                                body="Run tests.")),
)
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
    # The memory folder's topic files (file name, text); None: two well-formed ones.
    topics: tuple[tuple[str, str], ...] | None = None


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
    # `{home}` in a file or a setting: the HOME the agent sees (an absolute path there).
    at_home = str(staged / "home")
    for rel, text in case.files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text.replace("{home}", at_home) + "\n")
    cwd = "wt" if case.worktree else case.cwd
    (workspace / cwd).mkdir(parents=True, exist_ok=True)
    if case.user_settings is not None:
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text(
            json.dumps(case.user_settings).replace("{home}", at_home))
    slug = re.sub(r"[^a-zA-Z0-9]", "-", str(staged / "ws"))
    memory = home / (case.memory or f".claude/projects/{slug}/memory")
    memory.mkdir(parents=True)
    topics = case.topics if case.topics is not None else DEFAULT_TOPICS
    for stamp, (file, text) in enumerate(topics):
        path = memory / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
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


def run(case: MemoryCase, version: str, source: Path) -> Seen:
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




# --- generated cases -------------------------------------------------------------------------
_WORDS = ["Senior engineer", "prefers tabs", "日本語のメモ", "emoji 🚀", "a\u200bzero width",
          "tab\there", "**bold**", "`code`", "see [[testing]]", "@./inc.md", "<!-- note -->",
          "</system-reminder>", "<command-name>x</command-name>", "<channel>", "a\u202eb",
          "trailing  ", "x" * 180, "Ünïcödé ✓", "> quote", "# heading", "\u00a0nbsp"]
_DIRECTORIES = ["~/mem-a", "~/mem b", "{home}/abs-mem", "relative/mem", "~", "", "~/mem-a/",
                "$HOME/mem", "~/日本語"]
_SWITCHES: list[str | None] = [None, None, None, "1", "0", "true", "false", "", "yes"]


def _index(rng: random.Random) -> str | None:
    shape = rng.choice(["small", "small", "none", "near-lines", "near-chars", "long-line",
                        "messy", "empty", "frontmatter"])
    if shape == "none":
        return None
    if shape == "empty":
        return rng.choice(["", "\n", "\n\n  \n"])
    line = lambda: f"- [{rng.choice(_WORDS)}]({rng.choice(['a.md', 'b.md', 'x/y.md'])}) — " + \
        " ".join(rng.choice(_WORDS) for _ in range(rng.randint(0, 3)))  # noqa: E731
    if shape == "near-lines":
        count = rng.choice([199, 200, 201, 202, 260])
        return "".join(line() + "\n" for _ in range(count))
    if shape == "near-chars":
        width = rng.choice([120, 124, 125, 126, 130])
        count = rng.choice([190, 199, 200, 210])
        end = rng.choice(["\n", "\r\n"])
        return "".join(f"- {n:03d} " + "w" * width + end for n in range(count))
    if shape == "long-line":
        width = rng.choice([24_999, 25_000, 25_001, 26_000])
        return "z" * width + rng.choice(["", "\n", "\nnext\n"])
    if shape == "frontmatter":
        return rng.choice(["---\nk: v\n---\n", "---\n---\n", "---\nbroken: [\n---\n",
                           "\ufeff---\nk: v\n---\n"]) + "".join(line() + "\n" for _ in range(3))
    lines = [line() for _ in range(rng.randint(1, 12))]
    if shape == "messy":
        lines.insert(rng.randint(0, len(lines)), rng.choice(["<!--", "<!-- one -->", "-->",
                                                             "```", "", "  indented", "\t"]))
    end = rng.choice(["\n", "\n", "\r\n", ""])
    return end.join(lines) + rng.choice([end, "", "\n\n"])


def _topics(rng: random.Random) -> tuple[tuple[str, str], ...] | None:
    if rng.random() < 0.4:
        return None
    out = []
    for n in range(rng.randint(0, 4)):
        name = rng.choice(["role", "testing", "deploy", "日本", "with space", "a" * 60])
        kind = rng.choice(["user", "feedback", "project", "reference", "other", ""])
        description = rng.choice(["one line", "", "x" * 200, "with: colon", "日本語"])
        body = rng.choice(["Body.", "", "see [[role]]", "\n\n"])
        text = rng.choice([
            TOPIC.format(name=name, description=description, type=kind, body=body),
            f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n{body}\n",
            f"no frontmatter {body}\n",
            f"---\nname: [broken\n---\n{body}\n",
        ])
        file = rng.choice([f"t{n}.md", f"sub/t{n}.md", f"T{n}.MD", f"t{n}.txt", f".t{n}.md"])
        out.append((file, text))
    return tuple(out)


def _settings(rng: random.Random) -> dict[str, Any] | None:
    if rng.random() < 0.5:
        return None
    data: dict[str, Any] = {}
    if rng.random() < 0.5:
        data["autoMemoryDirectory"] = rng.choice(_DIRECTORIES)
    if rng.random() < 0.3:
        data["autoMemoryEnabled"] = rng.choice([True, False, "false", 0])
    return data


def generate(seed: int, index: int) -> MemoryCase:
    """Case `index` of `seed` (pure: the same pair gives the same case)."""
    rng = random.Random(f"claude-memory:{seed}:{index}")
    env: dict[str, str] = {}
    switch = rng.choice(_SWITCHES)
    if switch is not None:
        env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = switch
    if rng.random() < 0.1:
        env["CLAUDE_CODE_REMOTE_MEMORY_DIR"] = "{home}/remote"
    files: dict[str, str] = {}
    cwd = rng.choice([".", ".", "sub"])
    for where in (".claude/settings.json", ".claude/settings.local.json",
                  "sub/.claude/settings.json", "sub/.claude/settings.local.json"):
        data = _settings(rng)
        if data is not None:
            files[where] = rng.choice([json.dumps(data), json.dumps(data), "{broken"])
    if cwd == "sub":
        files.setdefault("sub/x.txt", "x")
    user = _settings(rng)
    memory = None
    # The memory is put where one of the settings points (`~/x`), most of the time: which
    # one wins is the engine's to say, not the generator's.
    named = [(user or {}).get("autoMemoryDirectory")]
    for text in files.values():
        with contextlib.suppress(ValueError):
            data = json.loads(text)
            named.append(data.get("autoMemoryDirectory") if isinstance(data, dict) else None)
    directories = [d for d in named if isinstance(d, str) and d.startswith("~/") and d[2:]]
    if directories and rng.random() < 0.8:
        memory = rng.choice(directories)[2:].rstrip("/") or None
    return MemoryCase(f"gen-{seed}-{index}", env=env, files=files, user_settings=user,
                      memory=memory, index=_index(rng), cwd=cwd, topics=_topics(rng))


def generated(seed: int, count: int) -> list[MemoryCase]:
    return [generate(seed, i) for i in range(count)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.conformance.claude_memory")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--version", default=VERSIONS[0])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    if not is_installed("claude", args.version):
        print(f"claude@{args.version} not installed: bash scripts/agents/install.sh")
        return 2
    cases = generated(args.seed, args.cases)
    with tempfile.TemporaryDirectory() as source:
        def one(case: MemoryCase) -> Seen:
            return run(case, args.version, Path(source) / case.id)

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            seen = list(pool.map(one, cases))
    differ = [(c, s) for c, s in zip(cases, seen, strict=True)
              if (s.predicted, s.predicted_folder) != (s.sent, s.memory_folder)]
    for case, got in differ:
        print(f"DIFFERS {case.id}: {case!r}")
        if got.predicted_folder != got.memory_folder:
            print(f"  folder: memlens {got.predicted_folder!r}, "
                  f"Claude Code {got.memory_folder!r}")
        if got.predicted != got.sent:
            diff = difflib.unified_diff(got.sent.splitlines(), got.predicted.splitlines(),
                                        "Claude Code", "memlens", lineterm="", n=1)
            print("\n".join(f"  {line[:200]}" for line in list(diff)[:40]))
    print(f"claude@{args.version} auto memory: {len(cases) - len(differ)} of {len(cases)} "
          f"generated cases identical (seed {args.seed})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
