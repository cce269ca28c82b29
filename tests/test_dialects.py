"""Claude Code and AGENTS.md dialects: load order, includes and their safety, rules scoped by
`paths:`, the auto-memory index cut (line 200 vs byte 25,000), topic files, and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from memlens.agents.agentsmd.agent import load_agents
from memlens.agents.claude.memory_folder import auto_memory_folder, project_slug
from memlens.agents.claude.memory_index import cut_index
from memlens.agents.claude.messages import REMINDER_HEAD, payload
from memlens.agents.claude.startup import ClaudeLoader

from .conftest import build_tree


def test_load_order_and_rendering(root: Path) -> None:
    build_tree(root, {
        "home/.claude/CLAUDE.md": "User rules @~/notes/me.md\n",
        "home/notes/me.md": "I like tabs.\n",
        "repo/.git": None,
        "repo/CLAUDE.md": "Root rules @./docs/style.md\n`@./not-included.md`\n",
        "repo/docs/style.md": "Style: short.\n",
        "repo/.claude/CLAUDE.md": "Dot-claude rules\n",
        "repo/.claude/rules/always.md": "Always rule\n",
        "repo/.claude/rules/api.md": "---\npaths:\n  - \"src/api/**\"\n---\nAPI rule\n",
        "repo/src/CLAUDE.md": "Src rules\n",
        "repo/src/CLAUDE.local.md": "Private src notes\n",
        "repo/src/api/handler.py": "pass\n",
    })
    loader = ClaudeLoader(str(root / "home"))
    load = loader.load(str(root / "repo" / "src"))
    kinds = [(Path(f.path).relative_to(root).as_posix(), f.kind) for f in load.files]
    # repo/docs/style.md is not loaded: Claude Code 2.1.330 expands no include of a CLAUDE.md
    # above the working folder that points out of it (class C7, checked against the agent).
    assert kinds == [("home/.claude/CLAUDE.md", "user"), ("home/notes/me.md", "include"),
                     ("repo/CLAUDE.md", "project"),
                     ("repo/.claude/CLAUDE.md", "project"),
                     ("repo/.claude/rules/always.md", "rule"),
                     ("repo/src/CLAUDE.md", "project"), ("repo/src/CLAUDE.local.md", "local")]
    rendered = payload(load.files)
    assert f"Contents of {root}/home/.claude/CLAUDE.md (user's private " \
           "global instructions for all projects):\n\nUser rules" in rendered
    assert f"Contents of {root}/repo/src/CLAUDE.local.md (user's private project " \
           "instructions, not checked in):\n\nPrivate src notes" in rendered
    assert "not-included" not in "".join(f.path for f in load.files)
    # A rule scoped with paths: applies only to matching files.
    assert [r.path for r in load.conditional_rules] == [f"{root}/repo/.claude/rules/api.md"]
    assert [r.path for r in loader.rules_for(load, f"{root}/repo/src/api/handler.py")] == [
        f"{root}/repo/.claude/rules/api.md"]
    assert loader.rules_for(load, f"{root}/repo/README.md") == []


def test_include_safety(root: Path) -> None:
    build_tree(root, {
        "home": None, "repo/.git": None,
        "repo/CLAUDE.md": "@./a.md @./missing.md @./logo.png @/etc/hostname\n",
        "repo/a.md": "A @./b.md\n", "repo/b.md": "B @./a.md\n",
        "repo/logo.png": "\x89PNG",
    })
    loader = ClaudeLoader(str(root / "home"))
    load = loader.load(str(root / "repo"))
    included = [Path(f.path).name for f in load.files if f.kind == "include"]
    assert included[:2] == ["a.md", "b.md"]
    codes = sorted((Path(d.path).name, d.line, d.col, d.code) for d in load.diagnostics)
    assert ("CLAUDE.md", 1, 9, "import-not-found") in codes
    assert ("CLAUDE.md", 1, 23, "import-unreadable") in codes  # not a text file
    assert ("b.md", 1, 3, "import-cycle") in codes
    # `@/abs` reaches anywhere: Claude Code reads it, we say it is outside the repository.
    assert ("CLAUDE.md", 1, 35, "import-outside-root") in codes
    # `@~/` resolves in HOME, never relative to the file; from a project file Claude Code
    # 2.1.330 does not load it unasked (outside the working folder: class C5).
    build_tree(root, {"home/me.md": "home note\n", "repo/sub/CLAUDE.md": "@~/me.md\n"})
    sub_loader = ClaudeLoader(str(root / "home"))
    sub = sub_loader.load(str(root / "repo" / "sub"))
    assert f"{root}/home/me.md" in sub_loader.include_targets
    assert f"{root}/home/me.md" not in [f.path for f in sub.files]


def test_include_depth_is_four(root: Path) -> None:
    # Claude Code 2.1.330 reads includes four levels below a memory file (class C4).
    tree = {"home": None, "repo/.git": None, "repo/CLAUDE.md": "@./f1.md\n"}
    for n in range(1, 9):
        tree[f"repo/f{n}.md"] = f"level {n} @./f{n + 1}.md\n"
    build_tree(root, tree)
    load = ClaudeLoader(str(root / "home")).load(str(root / "repo"))
    assert [Path(f.path).name for f in load.files if f.kind == "include"] == [
        "f1.md", "f2.md", "f3.md", "f4.md"]
    (deep,) = [d for d in load.diagnostics if d.code == "import-too-deep"]
    assert Path(deep.path).name == "f4.md"


def _index(root: Path, text: str) -> Path:
    index = auto_memory_folder(str(root / "home"), str(root / "repo"), env={}).index
    assert index is not None
    path = Path(index)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_auto_memory_index_cut_at_line_200(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None})
    assert project_slug(str(root / "repo")) == str(root / "repo").replace("/", "-").replace(
        "_", "-")
    text = "".join(f"- [Topic {n}](t{n}.md) — short\n" for n in range(250))
    path = _index(root, text)
    cut = cut_index(text)
    assert cut.first_cut_line == 201 and cut.warning is not None
    assert cut.kept.count("\n") == 199
    assert cut.warning.startswith("MEMORY.md is 250 lines (limit: 200). Only part of it was "
                                  "loaded: 50 of 250 lines were cut off, starting at line 201")
    load = ClaudeLoader(str(root / "home")).load(str(root / "repo"))
    (cut_diag,) = [d for d in load.diagnostics if d.code == "memory-index-truncated"]
    assert (cut_diag.path, cut_diag.line, cut_diag.col) == (str(path), 201, 1)


def test_auto_memory_index_cut_at_the_line_end_before_25000_characters(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None})
    line = "- " + "x" * 297 + "\n"  # 300 characters a line: 83 whole lines fit in 25,000
    text = line * 150
    cut = cut_index(text)
    assert cut.first_cut_line == 84
    assert len(cut.kept) == 83 * 300 - 1
    assert cut.warning is not None and cut.warning.startswith(
        "MEMORY.md is 43.9KB (limit: 24.4KB) — index entries are too long. Only part of it "
        "was loaded: 67 of 150 lines were cut off, starting at line 84 (\"- xxx")
    _index(root, text)
    load = ClaudeLoader(str(root / "home")).load(str(root / "repo"))
    assert [(d.line, d.code) for d in load.diagnostics
            if d.code != "memory-index-line-long"] == [(84, "memory-index-truncated")]


def test_topic_files_and_links(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None})
    index = _index(root, "- [Role](user_role.md) — data scientist\n- [Gone](gone.md) — x\n")
    folder = index.parent
    (folder / "user_role.md").write_text(
        "---\nname: role\ndescription: d\nmetadata:\n  type: user\n---\nx\n")
    (folder / "old.md").write_text("---\nname: old\ndescription: d\ntype: user\n---\nx\n")
    (folder / "odd.md").write_text(
        "---\nname: Odd Name\ndescription: d\nmetadata:\n  type: gossip\n---\nx\n")
    load = ClaudeLoader(str(root / "home")).load(str(root / "repo"))
    found = sorted((Path(d.path).name, d.line, d.code) for d in load.diagnostics)
    assert found == [("MEMORY.md", 2, "memory-link-not-found"),
                     ("odd.md", 1, "memory-not-indexed"),
                     ("odd.md", 2, "memory-invalid-type"),
                     ("odd.md", 5, "memory-invalid-type"),
                     ("old.md", 1, "memory-not-indexed"),
                     ("old.md", 4, "memory-invalid-type")]
    assert sorted((t.relative, t.type) for t in load.topics) == [
        ("odd.md", "gossip"), ("old.md", "user"), ("user_role.md", "user")]


def test_large_claude_md_warns(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/CLAUDE.md": "x" * 40_001})
    load = ClaudeLoader(str(root / "home")).load(str(root / "repo"))
    assert [d.code for d in load.diagnostics] == ["file-too-large"]


def test_agents_nearest_ancestor_wins(root: Path) -> None:
    build_tree(root, {"repo/.git": None, "repo/AGENTS.md": "Root agents\n",
                      "repo/pkg/AGENTS.md": "Pkg agents\n", "repo/pkg/src": None,
                      "AGENTS.md": "Above the repository\n"})
    load = load_agents(str(root / "repo" / "pkg" / "src"))
    assert load.active == f"{root}/repo/pkg/AGENTS.md"
    assert load.shadowed == [f"{root}/repo/AGENTS.md"]  # the repository root is the ceiling
    assert load.render() == f"--- {root}/repo/pkg/AGENTS.md ---\nPkg agents"


def test_cli_dialects(root: Path) -> None:
    build_tree(root, {"home/.claude/CLAUDE.md": "Mine\n", "repo/.git": None,
                      "repo/CLAUDE.md": "Claude root\n", "repo/AGENTS.md": "Agents root\n",
                      "repo/GEMINI.md": "Gemini root\n",
                      # The user trusts the repository (for Gemini CLI's folder trust).
                      "home/.gemini/trustedFolders.json": json.dumps(
                          {str(root / "repo"): "TRUST_FOLDER"})})
    env = {**os.environ, "GEMINI_CLI_HOME": str(root / "home")}

    def memlens(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memlens", *args], cwd=root / "repo",
                              env=env, capture_output=True, text=True, timeout=60)

    claude = memlens("show", ".", "--agent", "claude")
    # What Claude Code 2.1.330 sends at start: one reminder, each file trimmed.
    assert claude.stdout == (
        f"<system-reminder>\n{REMINDER_HEAD}\n\n"
        f"Contents of {root}/home/.claude/CLAUDE.md (user's private global instructions for all "
        f"projects):\n\nMine\n\nContents of {root}/repo/CLAUDE.md (project instructions, "
        "checked into the codebase):\n\nClaude root\n</system-reminder>\n")
    agents = json.loads(memlens("show", ".", "--agent", "agents", "--json").stdout)
    assert agents["active"] == f"{root}/repo/AGENTS.md"
    gemini = memlens("show", ".", "--agent", "gemini")
    assert "Gemini root" in gemini.stdout and "Claude root" not in gemini.stdout
    # Without --agent: every agent whose files are here, each in a labelled section.
    every = memlens("show", ".").stdout
    assert [line for line in every.splitlines() if line.startswith("==> ")] == [
        "==> Gemini CLI (gemini@0.43) <==", "==> Claude Code (claude@2.1) <==",
        "==> AGENTS.md (agents) <=="]
    assert every.split("==> Claude Code (claude@2.1) <==\n")[1].startswith(claude.stdout)


def test_cli_check_covers_subfolder_claude_md(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/CLAUDE.md": "Root @./AGENTS.md\n",
                      "repo/AGENTS.md": "Agents\n", "repo/sub/CLAUDE.md": "Sub @./missing.md\n",
                      "repo/sub/.claude/CLAUDE.md": "Hidden @~/nope.md\n"})
    run = subprocess.run([sys.executable, "-m", "memlens", "check", str(root / "repo"),
                          "--agent", "claude", "--home", str(root / "home"), "--format",
                          "json"], capture_output=True, text=True, timeout=60)
    found = [(d["path"], d["line"], d["col"], d["code"]) for d in json.loads(run.stdout)]
    assert found == [(f"{root}/repo/sub/.claude/CLAUDE.md", 1, 8, "import-not-found"),
                     (f"{root}/repo/sub/CLAUDE.md", 1, 5, "import-not-found")]


def test_claude_jit_session_adds_subfolder_memory_and_matching_rules(root: Path) -> None:
    from memlens.agents.claude.on_read import ClaudeJitSession

    build_tree(root, {"home": None, "repo/.git": None, "repo/CLAUDE.md": "Root\n",
                      "repo/a/b/CLAUDE.md": "B @./inc.md\n", "repo/a/b/inc.md": "Inc\n",
                      "repo/.claude/rules/go.md": "---\npaths: [\"**/*.go\"]\n---\nGo.\n",
                      "repo/a/b/main.go": "", "repo/a/b/x.py": ""})
    session = ClaudeJitSession(str(root / "home"), str(root / "repo"))
    first = [(e.file.path, e.reason) for e in session.touch(str(root / "repo/a/b/x.py"))]
    assert first == [(f"{root}/repo/a/b/CLAUDE.md", "a/b/ is read"),
                     (f"{root}/repo/a/b/inc.md", "included")]
    second = [(e.file.path, e.reason) for e in session.touch(str(root / "repo/a/b/main.go"))]
    assert second == [(f"{root}/repo/.claude/rules/go.md", "paths: **/*.go")]
    assert session.touch(str(root / "repo/a/b/main.go")) == []
    assert session.touch(str(root / "elsewhere.go")) == []


def test_user_rules_and_rule_subfolders(root: Path) -> None:
    build_tree(root, {
        "home/.claude/rules/tone.md": "Be brief.\n",
        "home/.claude/rules/py.md": "---\npaths: \"**/*.py\"\n---\nType hints.\n",
        "repo/.git": None,
        "repo/.claude/rules/frontend/react.md": "---\npaths: [\"web/**/*.tsx\"]\n---\nHooks.\n",
        "repo/.claude/rules/general.md": "Small commits.\n",
    })
    loader = ClaudeLoader(str(root / "home"))
    load = loader.load(str(root / "repo"))
    kinds = [(Path(f.path).relative_to(root).as_posix(), f.kind) for f in load.files]
    # User rules first (project rules take precedence by coming later).
    assert kinds == [("home/.claude/rules/tone.md", "userRule"),
                     ("repo/.claude/rules/general.md", "rule")]
    assert (f"Contents of {root}/home/.claude/rules/tone.md (user's private global "
            "instructions for all projects):\n\nBe brief.") in payload(load.files)
    # Scoped rules match relative to the project, wherever the rule file lives.
    matched = [Path(r.path).name for r in loader.rules_for(load, f"{root}/repo/app/main.py")]
    assert matched == ["py.md"]
    matched = [Path(r.path).name for r in loader.rules_for(load, f"{root}/repo/web/a/b.tsx")]
    assert matched == ["react.md"]


def test_hostile_claude_tree(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/sub/x.md": "x\n",
                      "repo/CLAUDE.md": "@./big.md @/dev/zero\n"})
    os.mkfifo(root / "repo" / "sub" / "CLAUDE.md")  # never opened
    (root / "repo" / "big.md").write_bytes(b"y" * 20_000_000)
    run = subprocess.run([sys.executable, "-m", "memlens", "check", str(root / "repo"),
                          "--agent", "claude", "--home", str(root / "home"), "--format",
                          "json"], capture_output=True, text=True, timeout=60)
    found = {(d["path"].removeprefix(f"{root}/"), d["code"]): d["message"]
             for d in json.loads(run.stdout)}
    assert found[("repo/sub/CLAUDE.md", "file-unreadable")].startswith(
        "Not a regular file (a FIFO, socket or device)")
    assert found[("repo/big.md", "file-too-large")].startswith("20,000,000 bytes:")
    assert "ENXIO" in found[("repo/CLAUDE.md", "import-unreadable")]
    show = subprocess.run([sys.executable, "-m", "memlens", "show", str(root / "repo"),
                           "--agent", "claude", "--home", str(root / "home"),
                           "--max-context-chars", "1000"],
                          capture_output=True, text=True, timeout=60)
    assert show.returncode == 0
    assert show.stdout.endswith(
        "\n[Memory Lens: preview truncated at 1,000 characters (memlens.maxContextChars); "
        "Claude Code would receive more]\n")


def test_codex_message_override_budget_and_cut(root: Path, monkeypatch: Any) -> None:
    from memlens.agents import agent_by_id
    from memlens.model import MemorySettings

    monkeypatch.delenv("CODEX_HOME", raising=False)
    build_tree(root, {
        "home/.codex/AGENTS.override.md": " \n", "home/.codex/AGENTS.md": "\u00a0global\n",
        "home/.codex/config.toml": "project_doc_max_bytes = 8\n",
        "repo/.git": None, "repo/AGENTS.override.md": "", "repo/AGENTS.md": "hidden\n",
        "repo/a/AGENTS.md": "  \n", "repo/a/b/AGENTS.md": "1234567é8\n",
        "repo/a/b/c/AGENTS.md": "below\n",
    })
    memory = agent_by_id("codex").load(str(root / "repo/a/b"),
                                       MemorySettings(home=str(root / "home")))
    # the blank override hides nothing in CODEX_HOME; in a folder an empty one hides AGENTS.md;
    # a blank doc costs no budget; the cut splits "é" into U+FFFD
    assert memory.text == (f"# AGENTS.md instructions for {root}/repo/a/b\n\n<INSTRUCTIONS>\n"
                           "global\n\n--- project-doc ---\n\n1234567\ufffd\n</INSTRUCTIONS>")
    assert [(Path(f.path).relative_to(root).as_posix(), f.label) for f in memory.files] == [
        ("home/.codex/AGENTS.md", "global"), ("repo/a/b/AGENTS.md", "project")]
    assert memory.details["shadowed"] == [f"{root}/repo/AGENTS.md"]
    assert memory.details["skipped"] == [f"{root}/repo/AGENTS.override.md",
                                         f"{root}/repo/a/AGENTS.md"]
    assert [(d.code, d.line, d.col) for d in memory.diagnostics] == [
        ("payload-budget-exceeded", 1, 8)]
    alone = agent_by_id("codex").load(str(root / "repo"), MemorySettings(home=str(root / "home")))
    assert alone.text == "# AGENTS.md instructions\n\n<INSTRUCTIONS>\nglobal\n</INSTRUCTIONS>"


def test_cli_codex_agent(root: Path) -> None:
    build_tree(root, {"home/.codex/AGENTS.md": "Global\n", "repo/.git": None,
                      "repo/AGENTS.md": "Root\n", "repo/sub/AGENTS.md": "Sub\n"})
    env = {k: v for k, v in os.environ.items() if k != "CODEX_HOME"}

    def memlens(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memlens", *args, "--agent", "codex",
                               "--home", str(root / "home")], cwd=root / "repo" / "sub",
                              env=env, capture_output=True, text=True, timeout=60)

    expected = (f"# AGENTS.md instructions for {root}/repo/sub\n\n<INSTRUCTIONS>\nGlobal\n\n"
                "--- project-doc ---\n\nRoot\n\n\nSub\n\n</INSTRUCTIONS>")
    assert memlens("show", ".").stdout == expected + "\n"
    shown = json.loads(memlens("show", ".", "--json").stdout)
    assert shown["content"] == expected and shown["agent"] == "codex"
    listed = json.loads(memlens("list", ".", "--json").stdout)["files"]
    assert [(f["path"], f["tier"], f["chars"]) for f in listed] == [
        (f"{root}/home/.codex/AGENTS.md", "global", 6), (f"{root}/repo/AGENTS.md", "project", 5),
        (f"{root}/repo/sub/AGENTS.md", "project", 4)]
