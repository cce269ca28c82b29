"""The views agree: for many small generated trees × every agent, what `memlens report`'s
matrix says about each file is what `show --agent A --json`, `jit --agent A` (over every file
of the tree), `check --agent A` and the report's own diagnostics say — compared as sets of
paths per (agent, folder). Each command runs in-process through its own CLI module (its parser,
its settings, its `run`), so the check sees what a user sees, without a process per command.

The trees hold the shapes where the views used to part ways (a nested AGENTS.md, a CLAUDE.md
including @AGENTS.md, nested `.claude/rules` with `paths:`, a file a nested CLAUDE.md
includes, a Copilot `applyTo` or a Cursor glob matching no file, a blank or comment-only
file...), alone and combined two or three at a time (a fixed seed)."""

from __future__ import annotations

import io
import json
import os
import random
import re
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from memlens.agents import AGENT_IDS

from .conftest import TreeSpec, build_tree

IGNORES = "agent-ignores-file"
READ_LATER = ("on-read", "on-demand")
LISTED_NOT_READ = ("lost", "excluded", "shadowed")
NO_MATCH = "on read, but no file matches today"
NEVER = re.compile(r"\bnever\b|\bnot (?:read|sent)\b|\bdoes not (?:read|send)\b", re.IGNORECASE)

GIT: TreeSpec = {".git/HEAD": "ref: refs/heads/main\n"}
# Each shape is a small tree of its own; the trees are these alone and some combined.
SHAPES: dict[str, TreeSpec] = {
    # A root CLAUDE.md read from a subfolder (`memlens list src`).
    "claude-root": {"CLAUDE.md": "Use tabs.\n", "src/app.py": "print(1)\n"},
    "nested-agents": {"AGENTS.md": "root agents\n", "api/AGENTS.md": "api agents\n",
                      "api/handler.py": "x = 1\n"},
    "web-claude-includes-agents": {"web/CLAUDE.md": "@AGENTS.md\nweb rules\n",
                                   "web/AGENTS.md": "web agents\n",
                                   "web/index.ts": "export {}\n"},
    "dot-claude": {".claude/CLAUDE.md": "dot claude\n", "notes.txt": "n\n"},
    "nested-claude-rules": {"pkg/.claude/rules/py.md": "---\npaths:\n  - \"**/*.py\"\n---\n"
                                                       "python in pkg\n",
                            "pkg/mod.py": "y = 2\n", "pkg/CLAUDE.md": "pkg memory\n"},
    "root-claude-rules": {".claude/rules/ts.md": "---\npaths:\n  - \"src/**/*.ts\"\n---\nts\n",
                          ".claude/rules/all.md": "always\n", "src/a.ts": "let a\n"},
    "claude-rule-no-match": {".claude/rules/go.md": "---\npaths:\n  - \"**/*.go\"\n---\ngo\n",
                             "CLAUDE.md": "root\n"},
    "nested-claude-include": {"lib/CLAUDE.md": "@notes/extra.md\nlib memory\n",
                              "lib/notes/extra.md": "extra notes\n", "lib/code.c": "int x;\n"},
    "copilot-apply-none": {".github/instructions/rust.instructions.md":
                           "---\napplyTo: \"**/*.rs\"\n---\nrust rules\n",
                           ".github/copilot-instructions.md": "copilot\n",
                           "main.py": "pass\n"},
    "copilot-apply-match": {".github/instructions/py.instructions.md":
                            "---\napplyTo: \"**/*.py\"\n---\npython rules\n",
                            "app/main.py": "pass\n"},
    "cursor-glob-none": {".cursor/rules/go.mdc": "---\ndescription: go\nglobs: \"**/*.go\"\n"
                                                 "alwaysApply: false\n---\ngo rules\n",
                         "main.py": "pass\n"},
    "cursor-glob-match": {".cursor/rules/py.mdc": "---\nglobs: \"**/*.py\"\nalwaysApply: false\n"
                                                  "---\npy rules\n",
                          ".cursor/rules/always.mdc": "---\nalwaysApply: true\n---\nalways\n",
                          "src/x.py": "pass\n"},
    "blank-files": {"AGENTS.md": "\n\n", "sub/CLAUDE.md": "", "sub/GEMINI.md": "  \n",
                    "sub/file.txt": "t\n"},
    "comment-only": {"CLAUDE.md": "<!-- a note for people -->\n",
                     "sub/AGENTS.md": "<!-- nothing yet -->\n", "sub/file.txt": "t\n"},
    "agents-md": {"AGENTS.md": "Run the tests.\n", "src/lib.rs": "fn main() {}\n"},
    "gemini-import": {"GEMINI.md": "@./docs/style.md\nproject\n", "docs/style.md": "style\n"},
    "nested-gemini": {"GEMINI.md": "root gemini\n", "sub/GEMINI.md": "sub gemini\n",
                      "sub/x.txt": "x\n"},
    "codex-override": {"AGENTS.override.md": "override\n", "AGENTS.md": "plain\n",
                       "svc/AGENTS.md": "svc\n", "svc/run.sh": "true\n"},
    "antigravity-rules": {".agents/rules/py.md": "---\ntrigger: glob\nglobs: \"**/*.py\"\n---\n"
                                                 "py\n",
                          ".agents/rules/rs.md": "---\ntrigger: glob\nglobs: \"**/*.rs\"\n---\n"
                                                 "rs\n",
                          ".agents/rules/on.md": "---\ntrigger: always_on\n---\non\n",
                          "tool.py": "pass\n"},
    "claude-and-agents": {"CLAUDE.md": "claude\n", "AGENTS.md": "agents\n",
                          "deep/AGENTS.md": "deep agents\n", "deep/x.py": "pass\n"},
}


# Shapes added after the first 41 trees were drawn: trees of their own, so the draw stays.
LATER_SHAPES: dict[str, TreeSpec] = {
    # A subfolder's instruction files (Copilot CLI sends a blank always-on one on read too)
    # and its `.claude/CLAUDE.md`.
    "nested-instructions": {"svc/.github/instructions/empty.instructions.md": "",
                            "svc/.github/instructions/go.instructions.md":
                            "---\napplyTo: \"**/*.go\"\n---\ngo in svc\n",
                            "svc/.github/instructions/all.instructions.md": "all of svc\n",
                            "svc/.claude/CLAUDE.md": "svc claude\n", "svc/main.go": "package x\n",
                            ".github/copilot-instructions.md": "root copilot\n",
                            # Its globs match a file of the root, not one below svc/.
                            "svc/.github/instructions/py.instructions.md":
                            "---\napplyTo: \"**/*.py\"\n---\npython in svc\n",
                            "tool.py": "pass\n",
                            "svc/.github/instructions/not-cli.instructions.md":
                            "---\nexcludeAgent: \"coding-agent\"\n---\nnot for the CLI\n"},
    # Claude Code's skills found on a read: listed on read (not sent), or not offered (a
    # folder git ignores); the working folder's own skill is listed at start.
    "claude-skills-on-read": {"CLAUDE.md": "root\n", ".gitignore": "gen/\n",
                              ".claude/skills/top/SKILL.md": "---\ndescription: T\n---\n",
                              "pkg/.claude/skills/lint/SKILL.md": "---\ndescription: L\n---\n",
                              "pkg/deep/.claude/skills/lint/SKILL.md": "# Inner\n",
                              "pkg/deep/mod.py": "x = 1\n",
                              "gen/.claude/skills/g/SKILL.md": "---\ndescription: G\n---\n",
                              "gen/out.txt": "o\n"},
}


def _trees() -> dict[str, TreeSpec]:
    trees = {name: {**GIT, **shape} for name, shape in SHAPES.items()}
    names = sorted(SHAPES)
    pick = random.Random(31)
    while len(trees) < 41:
        chosen = sorted(pick.sample(names, pick.choice((2, 3))))
        tree: TreeSpec = dict(GIT)
        for name in chosen:
            tree.update(SHAPES[name])
        trees.setdefault("+".join(chosen), tree)
    return {**trees, **{name: {**GIT, **shape} for name, shape in LATER_SHAPES.items()}}


TREES = _trees()


def run_cli(command: str, *words: str) -> str:
    """`memlens COMMAND WORDS...` through the command's own parser and `run`, its stdout."""
    from memlens.cli.common import apply_agent
    from memlens.cli.main import _module, build_parser

    args = build_parser(command).parse_args([command, *words])
    apply_agent(args)
    out = io.StringIO()
    with redirect_stdout(out):
        _module(command).run(args)  # type: ignore[attr-defined]
    return out.getvalue()


def _run(command: str, *words: str) -> Any:
    """`run_cli`'s JSON."""
    return json.loads(run_cli(command, *words))


def _files(root: Path) -> list[str]:
    """Every file under `root` but git's own, as `jit` targets (relative to `root`)."""
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        out += [os.path.relpath(os.path.join(folder, n), root) for n in sorted(names)]
    return out


def subfolders(root: Path) -> list[Path]:
    """The tree's top-level folders a user works in (`src/`, `api/`...: not dot folders)."""
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def disagreements(root: Path, home: Path, agent: str, where: Path | None = None) -> list[str]:
    """Each way the views part for `agent` working in `where` (default: the tree's root, whose
    files `rel` names paths by; empty: they agree)."""
    common = ["--agent", agent, "--home", str(home), "--trusted"]
    where = where or root
    folder = str(where)
    report = _run("report", folder, *common)
    cells = {row["path"]: row["cells"][agent] for row in report["rows"]
             if agent in row["cells"]}
    state = {p: c["state"] for p, c in cells.items()}
    problems: list[str] = []

    def rel(paths: set[str]) -> list[str]:
        return sorted(os.path.relpath(p, root) for p in paths)

    # show --agent A --json: its files at start-up and later are the matrix's.
    shown = {f["path"]: f["when"] for f in _run("show", folder, *common, "--json")["files"]}
    listed = {p: s for p, s in state.items() if s != "not-read"
              and not cells[p]["why"].startswith("imported into")}
    if shown != listed:
        problems.append(f"show {sorted(shown.items())} != matrix {sorted(listed.items())}")
    # list --agent A --json: every file it reads at start-up, and the folder's own files it
    # lists beside them (rules by glob or description; "lost", "excluded", "shadowed": not
    # read), each as the matrix has it.
    tiers = {f["path"]: f.get("tier", "") for f in _run("list", folder, *common, "--json")["files"]}
    not_read = {p for p, t in tiers.items() if t in LISTED_NOT_READ}
    startup = {p for p, s in listed.items() if s == "startup"}
    if missing := startup - set(tiers):
        problems.append(f"list leaves out {rel(missing)}, which the matrix says at start-up")
    if odd := {p for p in set(tiers) - not_read if p not in listed}:
        problems.append(f"list has {rel(odd)}, which the matrix says "
                        f"{[state.get(p, 'no row') for p in sorted(odd)]}")
    if odd := {p for p in not_read if state.get(p, "not-read") != "not-read"}:
        problems.append(f"list says not read for {rel(odd)}, the matrix {state}")
    # jit, reading each file of the tree in a session of its own (a read of a memory file
    # itself would put it in context): what loads on read is the matrix's on-read rows that a
    # file of the tree triggers; an on-read row that nothing triggers says so.
    loaded = {p for target in _files(where)
              for e in _run("jit", "--cwd", folder, *common, "--json", target)
              for p in e["files"]}
    startup = {p for p, s in state.items() if s == "startup"}
    later = {p for p, s in state.items() if s == "on-read"}
    if not_later := (loaded - startup - later):
        problems.append(f"jit loads {rel(not_later)}, which the matrix says "
                        f"{[state.get(p, 'no row') for p in sorted(not_later)]}")
    if untriggered := {p for p in later - loaded if cells[p]["why"] != NO_MATCH}:
        problems.append(f"matrix says on read for {rel(untriggered)}, which no read loads")
    if false_none := {p for p in later & loaded if cells[p]["why"] == NO_MATCH}:
        problems.append(f"matrix says no file matches {rel(false_none)}, which a read loads")
    # check --agent A: each file it says the agent ignores is "not read" in the matrix, and
    # the matrix gives the same reason.
    checked = _run("check", folder, *common, "--format", "json")
    for d in checked:
        if d["code"] == IGNORES:
            cell = cells.get(d["path"])
            if cell is None or cell["state"] != "not-read" or cell["why"] != d["message"]:
                problems.append(f"check: {rel({d['path']})} {d['message']!r}; matrix: {cell}")
    # No check message says a file is never read (sent, attached) where the matrix says it is
    # read on read: "matches no file today" is said in the same words by both.
    for d in checked:
        cell = cells.get(d["path"])
        if cell is not None and cell["state"] == "on-read" and NEVER.search(d["message"]):
            problems.append(f"check: {rel({d['path']})} {d['message']!r}; matrix: on read")
    # The report's diagnostics are check's, for the same agent.
    def keys(found: list[dict[str, Any]]) -> set[tuple[str, int, str]]:
        return {(os.path.relpath(d["path"], root), d["line"], d["code"]) for d in found}

    reported = keys([*report["diagnostics"], *report["hidden"]])
    if reported != keys(checked):
        problems.append(f"report diagnostics {sorted(reported - keys(checked))} "
                        f"check {sorted(keys(checked) - reported)}")
    return problems


# What a user's machine adds that the check must not see: agents' own homes and settings from
# the environment, agents found on PATH (which agents are shown), caches under XDG folders.
_AGENT_ENV = ("MEMLENS_", "GEMINI_", "CLAUDE_", "CODEX_", "COPILOT_", "CURSOR_", "ANTIGRAVITY_",
              "XDG_")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith(_AGENT_ENV):
            monkeypatch.delenv(name)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.parametrize(("tree", "agent"), [(t, a) for t in sorted(TREES) for a in AGENT_IDS])
def test_every_view_says_the_same(tree: str, agent: str, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = Path(os.path.realpath(tmp_path)) / "repo"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    build_tree(root, TREES[tree])
    assert disagreements(root, home, agent) == []


def _with_subfolder() -> list[str]:
    return [t for t in sorted(TREES) if any("/" in p and not p.startswith(".")
                                            for p in TREES[t])]


@pytest.mark.parametrize(("tree", "agent"), [(t, a) for t in _with_subfolder()
                                             for a in AGENT_IDS])
def test_a_subfolder_too(tree: str, agent: str, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Working in a subfolder (`memlens list src`, `show api`...): the files of the folders
    above it as well as its own, the same in every view (each top-level folder)."""
    root = Path(os.path.realpath(tmp_path)) / "repo"
    home = Path(os.path.realpath(tmp_path)) / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    build_tree(root, TREES[tree])
    assert [f"{where.name}/: {problem}" for where in subfolders(root)
            for problem in disagreements(root, home, agent, where)] == []
