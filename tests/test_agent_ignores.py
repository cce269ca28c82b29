"""`agent-ignores-file`: memory files an agent will not read, and why
(docs/reference.md "Diagnostics"). Each case builds a tree, asks the agent, checks code, path,
position and the reason, and cross-checks with the agent's own loader that the file really is not
read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memlens.agents import agent_by_id, all_agents, workspace_file_names
from memlens.agents.claude.on_read import ClaudeJitSession
from memlens.agents.claude.startup import ClaudeLoader
from memlens.agents.codex.load import load_codex
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.workspace.queries import workspace_files_named

from .conftest import TreeSpec, build_tree


@pytest.fixture(autouse=True)
def _no_agent_homes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)


@pytest.fixture
def home(root: Path) -> Path:
    folder = root.parent / "home"
    folder.mkdir()
    return folder


def settings_for(home: Path, **changes: object) -> MemorySettings:
    return MemorySettings.model_validate({"home": str(home), "trusted": True, **changes})


def ignored(agent_id: str, settings: MemorySettings, root: Path,
            tree: TreeSpec | None = None) -> list[Diagnostic]:
    """What `agent_id` ignores in `root`, given what the workspace walk finds there."""
    if tree is not None:
        build_tree(root, tree)
    engine = MemoryEngine(settings)
    by_name = workspace_files_named(engine, [str(root)], workspace_file_names(settings))
    found = [p for paths in by_name.values() for p in paths]
    out = agent_by_id(agent_id).ignored_files(settings, [str(root)], found, FileReader())
    for d in out:
        assert (d.code, d.severity, d.line, d.col, d.end_line, d.end_col) == (
            "agent-ignores-file", "warning", 1, 1, 1, 1)
    return sorted(out, key=Diagnostic.sort_key)


def paths(diagnostics: list[Diagnostic], root: Path) -> list[str]:
    return [os.path.relpath(d.path, root) for d in diagnostics]


# --- Gemini CLI ----------------------------------------------------------------------------
CLASSIC = {"jit_context": False, "gemini_profile": "0.43"}
GIT_TREE: TreeSpec = {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".gitignore": "build\n/dist\n",
    "GEMINI.md": "root\n",
    "src/GEMINI.md": "src\n",
    "build/GEMINI.md": "generated\n",
    "build/deep/GEMINI.md": "generated too\n",
    "dist/GEMINI.md": "dist\n",
}


def test_gemini_classic_skips_git_ignored_folders(root: Path, home: Path) -> None:
    settings = settings_for(home, respect_git_ignore=True, **CLASSIC)
    got = ignored("gemini", settings, root, GIT_TREE)
    assert paths(got, root) == ["build/GEMINI.md", "build/deep/GEMINI.md", "dist/GEMINI.md"]
    assert got[0].message == (
        "Gemini CLI does not read this file: git's ignore rules (.gitignore) ignores build/, "
        "and its search (classic mode) skips ignored folders")
    assert "build/" in got[1].message and "dist/" in got[2].message
    loaded = MemoryEngine(settings).load(str(root)).paths
    assert {str(root / p) for p in ("GEMINI.md", "src/GEMINI.md")} <= set(loaded)
    assert not {d.path for d in got} & set(loaded)


def test_gemini_classic_with_git_ignore_off_reads_them(root: Path, home: Path) -> None:
    settings = settings_for(home, respect_git_ignore=False, **CLASSIC)
    assert ignored("gemini", settings, root, GIT_TREE) == []
    assert str(root / "build/deep/GEMINI.md") in MemoryEngine(settings).load(str(root)).paths


def test_gemini_classic_skips_geminiignored_folders_and_files(root: Path, home: Path) -> None:
    settings = settings_for(home, respect_git_ignore=False, respect_gemini_ignore=True,
                            **CLASSIC)
    got = ignored("gemini", settings, root, {
        ".geminiignore": "secret\nnotes/GEMINI.md\nGEMINI.md.bak\nprivate/\n",
        "GEMINI.md": "root\n",
        "secret/deep/GEMINI.md": "s\n",
        "notes/GEMINI.md": "n\n",
        "private/GEMINI.md": "p\n",  # `private/` does not prune the folder, but its files
        "ok/GEMINI.md": "ok\n",
    })
    assert paths(got, root) == ["notes/GEMINI.md", "private/GEMINI.md",
                                "secret/deep/GEMINI.md"]
    assert got[0].message == ("Gemini CLI does not read this file: .geminiignore ignores it, "
                              "and its search (classic mode) skips ignored files")
    assert got[2].message.startswith("Gemini CLI does not read this file: .geminiignore "
                                     "ignores secret/,")
    loaded = MemoryEngine(settings).load(str(root)).paths
    assert str(root / "ok/GEMINI.md") in loaded
    assert not {d.path for d in got} & set(loaded)


def test_gemini_reads_the_workspace_folders_own_file_whatever_the_ignore_files(
        root: Path, home: Path) -> None:
    settings = settings_for(home, respect_git_ignore=False, **CLASSIC)
    got = ignored("gemini", settings, root, {
        ".geminiignore": "GEMINI.md\n", "GEMINI.md": "root\n", "sub/GEMINI.md": "sub\n"})
    assert paths(got, root) == ["sub/GEMINI.md"]
    assert str(root / "GEMINI.md") in MemoryEngine(settings).load(str(root)).paths


@pytest.mark.parametrize("changes", [
    {"jit_context": True, "gemini_profile": "0.43"},
    {"gemini_profile": "0.44+"},
], ids=["0.43-jit", "0.44+"])
def test_gemini_jit_mode_ignores_nothing(root: Path, home: Path,
                                         changes: dict[str, object]) -> None:
    # JIT loading asks no ignore file: list_directory on build/ still brings its GEMINI.md.
    settings = settings_for(home, respect_git_ignore=True, **changes)
    assert ignored("gemini", settings, root, GIT_TREE) == []


def test_gemini_untrusted_folder_is_not_this_rule(root: Path, home: Path) -> None:
    settings = settings_for(home, respect_git_ignore=True, **CLASSIC).model_copy(
        update={"trusted": False})
    assert ignored("gemini", settings, root, GIT_TREE) == []


def test_gemini_nothing_ignored(root: Path, home: Path) -> None:
    settings = settings_for(home, respect_git_ignore=True, **CLASSIC)
    assert ignored("gemini", settings, root, {
        ".git/HEAD": "x\n", ".gitignore": "*.log\n", "GEMINI.md": "r\n",
        "a/GEMINI.md": "a\n", "a/b/GEMINI.md": "b\n"}) == []


# --- Claude Code ---------------------------------------------------------------------------
def claude_reads(home: Path, root: Path, target: str | None = None) -> set[str]:
    """Every file Claude Code working in `root` sends, at start and after reading `target`."""
    load = ClaudeLoader(str(home)).load(str(root))
    read = {f.path for f in load.files}
    if target is not None:
        read |= {f.path for f in ClaudeJitSession(str(home), str(root)).load_for(
            str(root / target)).files}
    return read


def test_claude_skips_agents_md_beside_a_claude_md(root: Path, home: Path) -> None:
    got = ignored("claude", settings_for(home), root, {
        "CLAUDE.md": "claude\n", "AGENTS.md": "agents\n"})
    assert paths(got, root) == ["AGENTS.md"]
    assert got[0].message == (
        "Claude Code does not read this AGENTS.md: CLAUDE.md is in the same folder, and it "
        "reads AGENTS.md only where no CLAUDE.md is in force (its default instructionFiles, "
        "claude-md-or-agents-md)")
    assert str(root / "AGENTS.md") not in claude_reads(home, root)


def test_claude_skips_agents_md_below_a_claude_project(root: Path, home: Path) -> None:
    got = ignored("claude", settings_for(home), root, {
        ".claude/CLAUDE.md": "claude\n", "pkg/AGENTS.md": "pkg\n", "pkg/x.py": "",
        "pkg/.claude/AGENTS.md": "hidden too\n"})
    assert paths(got, root) == ["pkg/.claude/AGENTS.md", "pkg/AGENTS.md"]
    assert got[1].message.startswith(
        f"Claude Code does not read this AGENTS.md: {root}/.claude/CLAUDE.md is in force "
        "where it starts, and it reads AGENTS.md only")
    assert not {d.path for d in got} & claude_reads(home, root, "pkg/x.py")


def test_claude_local_md_hides_its_folders_agents_md_only(root: Path, home: Path) -> None:
    got = ignored("claude", settings_for(home), root, {
        "AGENTS.md": "root agents\n", "app/AGENTS.md": "app\n", "app/a.py": "",
        "lib/CLAUDE.local.md": "mine\n", "lib/AGENTS.md": "lib\n", "lib/l.py": ""})
    assert paths(got, root) == ["lib/AGENTS.md"]
    assert "CLAUDE.local.md is in the same folder" in got[0].message
    # Started in the workspace folder, Claude Code reads the others (app/ on read).
    assert {str(root / "AGENTS.md"), str(root / "app/AGENTS.md")} <= claude_reads(
        home, root, "app/a.py")
    assert str(root / "lib/AGENTS.md") not in claude_reads(home, root, "lib/l.py")


def test_claude_a_claude_md_between_hides_nothing_read_from_above(root: Path,
                                                                   home: Path) -> None:
    # Started in the workspace folder (no CLAUDE.md), Claude Code reads g/f/AGENTS.md when it
    # reads a file there, although g/ has a CLAUDE.md (started in g/ it would not): not
    # "never read", so not reported.
    got = ignored("claude", settings_for(home), root, {
        "AGENTS.md": "root\n", "g/CLAUDE.md": "g\n", "g/f/AGENTS.md": "f\n", "g/f/x.py": ""})
    assert got == []
    assert str(root / "g/f/AGENTS.md") in claude_reads(home, root, "g/f/x.py")
    assert str(root / "g/f/AGENTS.md") not in claude_reads(home, root / "g", "f/x.py")


def test_claude_a_blank_claude_md_hides_nothing(root: Path, home: Path) -> None:
    got = ignored("claude", settings_for(home), root, {
        "CLAUDE.md": "---\ntitle: x\n---\n<!-- nothing yet -->\n", "AGENTS.md": "agents\n"})
    assert got == []
    assert str(root / "AGENTS.md") in claude_reads(home, root)


def test_claude_rules_it_does_not_read(root: Path, home: Path) -> None:
    build_tree(home, {".claude/rules/habits.markdown": "user rule\n",
                      ".claude/rules/ok.md": "fine\n"})
    got = ignored("claude", settings_for(home), root, {
        "CLAUDE.md": "claude\n",
        ".claude/rules/style.md": "style\n",
        ".claude/rules/legacy.txt": "legacy\n",
        ".claude/rules/cursor/api.mdc": "cursor rule\n",
        ".claude/rules/.gitkeep": "",
        ".claude/rules/SHOUT.MD": "unverified either way\n",
    })
    assert sorted(os.path.relpath(d.path, root.parent) for d in got) == [
        "home/.claude/rules/habits.markdown", "root/.claude/rules/cursor/api.mdc",
        "root/.claude/rules/legacy.txt"]
    legacy = next(d for d in got if d.path.endswith("legacy.txt"))
    assert legacy.message == ("Claude Code does not read this file: it loads only the .md "
                              f"files of {root}/.claude/rules")
    read = claude_reads(home, root)
    assert str(root / ".claude/rules/style.md") in read
    assert not {d.path for d in got} & read


def test_claude_nothing_ignored(root: Path, home: Path) -> None:
    assert ignored("claude", settings_for(home), root, {
        "AGENTS.md": "agents\n", "sub/AGENTS.md": "sub\n", "other/CLAUDE.md": "c\n",
        ".claude/rules/a.md": "a\n"}) == []


# --- Codex ---------------------------------------------------------------------------------
def codex_sends(home: Path, cwd: Path) -> set[str]:
    load = load_codex(str(cwd), str(home))
    return {d.path for d in load.docs} | ({load.global_path} if load.global_path else set())


def test_codex_an_override_hides_agents_md(root: Path, home: Path) -> None:
    got = ignored("codex", settings_for(home), root, {
        ".git/HEAD": "x\n", "AGENTS.override.md": "override\n", "AGENTS.md": "agents\n"})
    assert paths(got, root) == ["AGENTS.md"]
    assert got[0].message == ("Codex does not read this file: it reads one file per folder, "
                              "and AGENTS.override.md comes first")
    assert codex_sends(home, root) == {str(root / "AGENTS.override.md")}


def test_codex_blank_docs(root: Path, home: Path) -> None:
    got = ignored("codex", settings_for(home), root, {
        ".git/HEAD": "x\n", "AGENTS.md": "root\n", "pkg/AGENTS.md": " \n\t\n",
        "x/AGENTS.override.md": "\n", "x/AGENTS.md": "shadowed by a blank override\n"})
    assert paths(got, root) == ["pkg/AGENTS.md", "x/AGENTS.md", "x/AGENTS.override.md"]
    assert got[0].message == "Codex does not send this file: it is blank"
    assert got[1].message == ("Codex does not read this file: it reads one file per folder, "
                              "and AGENTS.override.md comes first (even blank)")
    assert got[2].message == ("Codex does not send this file: it is blank (and still hides "
                              "AGENTS.md)")
    for folder in ("pkg", "x"):
        assert codex_sends(home, root / folder) == {str(root / "AGENTS.md")}


def test_codex_fallback_names_behind_agents_md(root: Path, home: Path) -> None:
    build_tree(home, {".codex/config.toml": 'project_doc_fallback_filenames = ["TEAM.md"]\n'})
    got = ignored("codex", settings_for(home), root, {
        ".git/HEAD": "x\n", "AGENTS.md": "agents\n", "TEAM.md": "team\n",
        "only/TEAM.md": "read: no AGENTS.md here\n"})
    assert paths(got, root) == ["TEAM.md"]
    assert got[0].message == ("Codex does not read this file: it reads one file per folder, "
                              "and AGENTS.md comes first")
    assert got[0].detail == "Codex's order: AGENTS.override.md, AGENTS.md, TEAM.md"
    assert codex_sends(home, root / "only") == {str(root / "AGENTS.md"),
                                                str(root / "only/TEAM.md")}


def test_codex_without_a_budget_reads_no_project_doc(root: Path, home: Path) -> None:
    build_tree(home, {".codex/config.toml": "project_doc_max_bytes = 0\n",
                      ".codex/AGENTS.md": "global\n"})
    got = ignored("codex", settings_for(home), root, {
        ".git/HEAD": "x\n", "AGENTS.md": "agents\n", "sub/AGENTS.override.md": "o\n"})
    assert paths(got, root) == ["AGENTS.md", "sub/AGENTS.override.md"]
    assert got[0].message == ("Codex does not read project docs: project_doc_max_bytes is 0 "
                              f"in {home}/.codex/config.toml")
    assert codex_sends(home, root / "sub") == {str(home / ".codex/AGENTS.md")}


def test_codex_global_files(root: Path, home: Path) -> None:
    build_tree(home, {".codex/AGENTS.override.md": "override\n",
                      ".codex/AGENTS.md": "global\n"})
    got = ignored("codex", settings_for(home), root, {"AGENTS.md": "a\n"})
    assert [d.path for d in got] == [str(home / ".codex/AGENTS.md")]
    assert got[0].message == ("Codex does not read this file: AGENTS.override.md beside it is "
                              "read instead")
    (home / ".codex/AGENTS.override.md").write_text("  \n")
    got = ignored("codex", settings_for(home), root)
    assert [d.path for d in got] == [str(home / ".codex/AGENTS.override.md")]
    assert codex_sends(home, root) == {str(home / ".codex/AGENTS.md"), str(root / "AGENTS.md")}


def test_codex_nothing_ignored(root: Path, home: Path) -> None:
    build_tree(home, {".codex/AGENTS.md": "global\n"})
    assert ignored("codex", settings_for(home), root, {
        ".git/HEAD": "x\n", "AGENTS.md": "a\n", "sub/AGENTS.md": "b\n",
        "other/AGENTS.override.md": "c\n"}) == []


# --- the AGENTS.md convention, and every agent ---------------------------------------------
def test_the_convention_ignores_nothing(root: Path, home: Path) -> None:
    assert ignored("agents", settings_for(home), root, {
        "AGENTS.md": "a\n", "sub/AGENTS.md": " \n", "sub/deeper/AGENTS.md": "c\n"}) == []


def test_every_agent_answers(root: Path, home: Path) -> None:
    build_tree(root, {"GEMINI.md": "g\n", "CLAUDE.md": "c\n", "AGENTS.md": "a\n"})
    for agent in all_agents():
        got = ignored(agent.id, settings_for(home), root)
        # pi reads one file per folder, OpenCode one name per chain: AGENTS.md before
        # CLAUDE.md.
        assert [d.path for d in got] == ([str(root / "AGENTS.md")] if agent.id == "claude"
                                         else [str(root / "CLAUDE.md")]
                                         if agent.id in ("pi", "opencode") else [])


def test_claude_reads_an_agents_md_its_claude_md_includes(root: Path) -> None:
    """`@./AGENTS.md` in CLAUDE.md: the AGENTS.md is read (as an include), so not ignored."""
    build_tree(root, {"home": None, "repo/.git": None, "repo/CLAUDE.md": "Root @./AGENTS.md\n",
                      "repo/AGENTS.md": "Agents\n", "repo/sub/AGENTS.md": "Sub agents\n"})
    found = [str(root / "repo/AGENTS.md"), str(root / "repo/sub/AGENTS.md")]
    ignored = agent_by_id("claude").ignored_files(
        MemorySettings(home=str(root / "home")), [str(root / "repo")], found, FileReader())
    assert [d.path for d in ignored] == [str(root / "repo/sub/AGENTS.md")]
