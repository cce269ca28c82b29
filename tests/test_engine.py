"""The engine beyond the upstream goldens: settings, trust, private project memory, ignore
files, ordering in both modes, the JIT session, the prompt forms and the import graph."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memlens.agents.gemini.discovery import MemoryEngine
from memlens.agents.gemini.jit import JitSession
from memlens.agents.gemini.render import render_prompt_memory
from memlens.agents.gemini.settings import load_settings
from memlens.agents.gemini.trust import check_path_trust
from memlens.model import MemorySettings, gemini_profile_for
from memlens.workspace.graph import ImportGraph
from memlens.workspace.queries import show

from .conftest import TreeSpec, build_tree


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
                 "GEMINI_CLI_HOME"):
        monkeypatch.delenv(name, raising=False)


def make(root: Path, tree: TreeSpec) -> Path:
    """The tree under root, and a HOME whose user trusts root (as a Gemini CLI user would:
    a folder no rule matches is untrusted); the trust tests write their own rules."""
    build_tree(root, tree)
    (root / "home" / ".gemini").mkdir(parents=True, exist_ok=True)
    rules = root / "home" / ".gemini" / "trustedFolders.json"
    if not rules.exists():
        rules.write_text(json.dumps({str(root): "TRUST_FOLDER"}))
    return root


def engine(root: Path, **extra: Any) -> MemoryEngine:
    extra.setdefault("discover_gemini_extensions", False)
    return MemoryEngine(MemorySettings(home=str(root / "home"), **extra))


def rel(root: Path, paths: list[str]) -> list[str]:
    return [p.removeprefix(str(root) + "/") for p in paths]


def block(path: Path | str, content: str) -> str:
    return f"--- Context from: {path} ---\n{content}\n--- End of Context from: {path} ---"


def write_trust(root: Path, rules: dict[str, str]) -> None:
    path = root / "home" / ".gemini" / "trustedFolders.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rules))


# --- settings ------------------------------------------------------------------------------

USER_SETTINGS = """{
  // user settings, with comments and a trailing comma
  "context": {
    "fileName": ["GEMINI.md", "AGENTS.md"],
    "includeDirectories": ["%s"],
    "discoveryMaxDirs": 50,
  },
  /* block comment */
  "experimental": {"jitContext": true}
}
"""

WORKSPACE_SETTINGS = """{
  // workspace settings
  "context": {
    "fileName": "CONTEXT.md",
    "includeDirectories": ["%s"],
    "importFormat": "flat",
    "memoryBoundaryMarkers": [".repo-root"]
  },
  "experimental": {"jitContext": false}
}
"""


@pytest.fixture
def configured(root: Path) -> Path:
    make(root, {"ws/.git": None, "inc1": None, "inc2": None})
    (root / "home" / ".gemini" / "settings.json").write_text(USER_SETTINGS % (root / "inc1"))
    (root / "ws" / ".gemini").mkdir()
    (root / "ws" / ".gemini" / "settings.json").write_text(WORKSPACE_SETTINGS % (root / "inc2"))
    return root


def test_settings_defaults_without_files(root: Path) -> None:
    make(root, {"ws": None})
    s = load_settings(str(root / "ws"), home=str(root / "home"))
    assert s.home == str(root / "home")
    assert s.context_file_names == ["GEMINI.md"]
    assert s.jit_context is True
    assert s.discovery_max_dirs == 200
    assert s.memory_boundary_markers == [".git"]
    assert s.import_format == "tree"
    assert s.include_directories == []
    # Gemini CLI's settings defaults
    assert (s.respect_git_ignore, s.respect_gemini_ignore) == (True, True)


def test_settings_user_then_workspace(configured: Path) -> None:
    s = load_settings(str(configured / "ws"), home=str(configured / "home"))
    assert s.context_file_names == ["CONTEXT.md"]  # other arrays (and strings) replace
    assert s.include_directories == [str(configured / "inc1"), str(configured / "inc2")]
    assert s.discovery_max_dirs == 50  # from the user file, untouched by the workspace
    assert s.import_format == "flat"
    assert s.memory_boundary_markers == [".repo-root"]
    assert s.jit_context is False


def test_settings_command_line_wins(configured: Path) -> None:
    s = load_settings(str(configured / "ws"), home=str(configured / "home"),
                      cli={"jit_context": True, "discovery_max_dirs": 7,
                           "context_file_names": None})
    assert s.jit_context is True
    assert s.discovery_max_dirs == 7
    assert s.context_file_names == ["CONTEXT.md"]  # None means "not given"


def test_settings_home_from_gemini_cli_home(configured: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_CLI_HOME", str(configured / "home"))
    s = load_settings(str(configured / "ws"))
    assert s.home == str(configured / "home")
    assert s.discovery_max_dirs == 50


def test_settings_untrusted_workspace_file_is_ignored(configured: Path) -> None:
    write_trust(configured, {str(configured / "ws"): "DO_NOT_TRUST"})
    s = load_settings(str(configured / "ws"), home=str(configured / "home"))
    assert s.context_file_names == ["GEMINI.md", "AGENTS.md"]
    assert s.include_directories == [str(configured / "inc1")]
    assert s.jit_context is True
    assert s.import_format == "tree"


def test_settings_explicit_untrusted_ignores_workspace_file(configured: Path) -> None:
    s = load_settings(str(configured / "ws"), home=str(configured / "home"),
                      cli={"trusted": False})
    assert s.context_file_names == ["GEMINI.md", "AGENTS.md"]
    assert s.jit_context is True


def test_settings_invalid_json_is_ignored(root: Path) -> None:
    make(root, {"ws": None})
    (root / "home" / ".gemini" / "settings.json").write_text("{ not json")
    s = load_settings(str(root / "ws"), home=str(root / "home"))
    assert s.context_file_names == ["GEMINI.md"]


def test_include_directories_by_mode(root: Path) -> None:
    make(root, {"ws/.git": None, "ws/GEMINI.md": "ws", "inc/GEMINI.md": "inc"})
    (root / "home" / ".gemini" / "settings.json").write_text(
        json.dumps({"context": {"includeDirectories": [str(root / "inc")]}}))
    ws = str(root / "ws")
    jit = load_settings(ws, home=str(root / "home"))
    # jit mode: every include dir is a workspace folder, whatever loadMemoryFrom... says
    assert rel(root, MemoryEngine(jit).load(ws).paths) == ["inc/GEMINI.md", "ws/GEMINI.md"]
    classic = load_settings(ws, home=str(root / "home"), cli={"jit_context": False})
    assert rel(root, MemoryEngine(classic).load(ws).paths) == ["ws/GEMINI.md"]
    loading = load_settings(ws, home=str(root / "home"),
                            cli={"jit_context": False,
                                 "load_memory_from_include_directories": True})
    assert rel(root, MemoryEngine(loading).load(ws).paths) == ["inc/GEMINI.md", "ws/GEMINI.md"]


# --- trust ---------------------------------------------------------------------------------

def test_trust_longest_match(root: Path) -> None:
    make(root, {})
    a = root / "a"
    write_trust(root, {str(a): "TRUST_FOLDER", str(a / "b"): "DO_NOT_TRUST",
                       str(a / "b" / "c"): "TRUST_FOLDER"})
    home = str(root / "home")
    assert check_path_trust(str(a / "file.txt"), home).trusted is True
    assert check_path_trust(str(a / "b" / "file.txt"), home).trusted is False
    assert check_path_trust(str(a / "b" / "c" / "file.txt"), home).trusted is True
    assert check_path_trust(str(a), home).trusted is True
    other = check_path_trust(str(root / "other"), home)
    assert (other.trusted, other.source) == (None, None)


def test_trust_parent_applies_to_the_folder_above(root: Path) -> None:
    make(root, {})
    project = root / "project"
    write_trust(root, {str(project / ".gemini"): "TRUST_PARENT"})
    home = str(root / "home")
    assert check_path_trust(str(project / "file.txt"), home).trusted is True
    assert check_path_trust(str(project / ".gemini" / "config.yaml"), home).trusted is True
    assert check_path_trust(str(root / "elsewhere"), home).trusted is None


def test_trust_parent_loses_to_a_longer_rule(root: Path) -> None:
    make(root, {})
    # Gemini CLI's isPathTrusted: the longest *key* wins (TRUST_PARENT's key is its child's
    # path, so it ties with a sibling), the first of equal length.
    write_trust(root, {str(root / "p" / "q"): "TRUST_PARENT",
                       str(root / "p" / "x"): "DO_NOT_TRUST",
                       str(root / "p" / "yy"): "DO_NOT_TRUST"})
    home = str(root / "home")
    assert check_path_trust(str(root / "p" / "y"), home).trusted is True
    assert check_path_trust(str(root / "p" / "x" / "deep"), home).trusted is True
    assert check_path_trust(str(root / "p" / "yy" / "deep"), home).trusted is False


def test_trust_file_with_comments(root: Path) -> None:
    make(root, {})
    (root / "home" / ".gemini" / "trustedFolders.json").write_text(
        f'{{\n  // mine\n  "{root / "w"}": "DO_NOT_TRUST",\n}}\n')
    assert check_path_trust(str(root / "w"), str(root / "home")).trusted is False


def test_trust_env_overrides_rules(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(root, {})
    write_trust(root, {str(root / "w"): "DO_NOT_TRUST"})
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    decision = check_path_trust(str(root / "w"), str(root / "home"))
    assert (decision.trusted, decision.source) == (True, "env")


def test_trusted_folders_path_override(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(root, {})
    elsewhere = root / "rules.json"
    elsewhere.write_text(json.dumps({str(root / "w"): "DO_NOT_TRUST"}))
    monkeypatch.setenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH", str(elsewhere))
    assert check_path_trust(str(root / "w"), str(root / "home")).trusted is False


def test_folder_trust_disabled_in_user_settings(root: Path) -> None:
    make(root, {"w": None})
    write_trust(root, {str(root / "w"): "DO_NOT_TRUST"})
    (root / "home" / ".gemini" / "settings.json").write_text(
        json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    s = load_settings(str(root / "w"), home=str(root / "home"))
    assert MemoryEngine(s).trust_for(str(root / "w"))[0] is True


def test_no_rule_is_untrusted(root: Path) -> None:
    # As Gemini CLI: no matching rule means untrusted until the user trusts the folder.
    make(root, {"w": None})
    write_trust(root, {str(root / "elsewhere"): "TRUST_FOLDER"})
    assert engine(root).trust_for(str(root / "w")) == (False, "no-rule")
    (root / "home" / ".gemini" / "trustedFolders.json").unlink()
    assert engine(root).trust_for(str(root / "w")) == (False, "no-rule")


@pytest.fixture
def tiers(root: Path) -> Path:
    """Global, extension, private project memory and project files for root/ws."""
    make(root, {
        "home/.gemini/GEMINI.md": "global\n",
        "ext/CTX.md": "extension\n",
        "ws/.git": None,
        "ws/GEMINI.md": "project\n",
        "ws/sub/GEMINI.md": "sub\n",
        "home/.gemini/tmp/ws-slug/.project_root": str(root / "ws"),
        "home/.gemini/tmp/ws-slug/memory/MEMORY.md": "- private fact\n",
    })
    (root / "home" / ".gemini" / "projects.json").write_text(
        json.dumps({"projects": {str(root / "ws"): "ws-slug"}}))
    return root


@pytest.mark.parametrize("how", ["setting", "rule"])
def test_untrusted_loads_only_global_extension_and_private(tiers: Path, how: str) -> None:
    extra: dict[str, Any] = {"extension_context_files": [str(tiers / "ext" / "CTX.md")]}
    if how == "setting":
        extra["trusted"] = False
    else:
        write_trust(tiers, {str(tiers / "ws"): "DO_NOT_TRUST"})
    for jit in (True, False):
        load = engine(tiers, jit_context=jit, **extra).load(str(tiers / "ws"))
        assert load.trusted is False
        expected = ["home/.gemini/GEMINI.md", "ext/CTX.md"]
        if jit:
            expected.append("home/.gemini/tmp/ws-slug/memory/MEMORY.md")
        assert sorted(rel(tiers, load.paths)) == sorted(expected)
        assert load.memory.project == ""
    e = engine(tiers, **extra)
    session = JitSession.after_startup(e, e.load(str(tiers / "ws")))
    assert session.discover(str(tiers / "ws" / "sub" / "x.py")).files == []


def test_trusted_by_rule_loads_the_project(tiers: Path) -> None:
    write_trust(tiers, {str(tiers): "TRUST_FOLDER"})
    load = engine(tiers).load(str(tiers / "ws"))
    assert load.trusted is True
    assert "ws/GEMINI.md" in rel(tiers, load.paths)


# --- private project memory ----------------------------------------------------------------

def test_private_memory_in_flatten_and_prompt(tiers: Path) -> None:
    result = show(str(tiers / "ws"), MemorySettings(home=str(tiers / "home"),
                                                    discover_gemini_extensions=False))
    g = block(tiers / "home" / ".gemini" / "GEMINI.md", "global")
    private = block(tiers / "home" / ".gemini" / "tmp" / "ws-slug" / "memory" / "MEMORY.md",
                    "- private fact")
    project = block(tiers / "ws" / "GEMINI.md", "project")
    assert result.content == (f"--- Global ---\n{g}\n\n--- Private Project Memory ---\n"
                              f"{private}\n\n--- Project ---\n{project}")
    assert result.hierarchical.user_project_memory == private
    assert result.prompt == (
        "\n---\n\n<loaded_context>\n"
        f"<global_context>\n{g}\n</global_context>\n"
        "<user_project_memory>\n"
        "--- Private Project Memory Index (private, not committed to repo) ---\n"
        f"{private}\n--- End Private Project Memory Index ---\n"
        "</user_project_memory>\n</loaded_context>")
    assert result.session_memory == (
        f"\n<loaded_context>\n<project_context>\n{project}\n</project_context>\n"
        "</loaded_context>")


def test_private_memory_falls_back_to_gemini_md(tiers: Path) -> None:
    memory = tiers / "home" / ".gemini" / "tmp" / "ws-slug" / "memory"
    (memory / "MEMORY.md").unlink()
    (memory / "GEMINI.md").write_text("fallback\n")
    load = engine(tiers).load(str(tiers / "ws"))
    assert load.tiers["userProjectMemory"] == [str(memory / "GEMINI.md")]


def test_private_memory_found_by_marker_alone(tiers: Path) -> None:
    (tiers / "home" / ".gemini" / "projects.json").unlink()
    load = engine(tiers).load(str(tiers / "ws"))
    assert rel(tiers, load.tiers["userProjectMemory"]) == [
        "home/.gemini/tmp/ws-slug/memory/MEMORY.md"]


def test_private_memory_needs_a_matching_marker(tiers: Path) -> None:
    marker = tiers / "home" / ".gemini" / "tmp" / "ws-slug" / ".project_root"
    marker.write_text(str(tiers / "another-project"))
    load = engine(tiers).load(str(tiers / "ws"))
    assert "userProjectMemory" not in load.tiers
    assert load.memory.user_project_memory == ""


def test_no_private_memory_in_classic_mode(tiers: Path) -> None:
    load = engine(tiers, jit_context=False).load(str(tiers / "ws"))
    assert load.memory.user_project_memory == ""
    assert not any("/tmp/ws-slug/" in p for p in load.paths)


def test_private_memory_is_never_written(tiers: Path) -> None:
    before = {p: p.read_bytes() for p in (tiers / "home").rglob("*") if p.is_file()}
    engine(tiers).load(str(tiers / "ws"))
    after = {p: p.read_bytes() for p in (tiers / "home").rglob("*") if p.is_file()}
    assert before == after


# --- ignore files --------------------------------------------------------------------------

def ignore_tree(root: Path, pattern: str) -> Path:
    return make(root, {"w/.git": None, "w/.geminiignore": pattern + "\n", "w/GEMINI.md": "w",
                       "w/secret/GEMINI.md": "s", "w/secret/deep/GEMINI.md": "d",
                       "w/z/GEMINI.md": "z"})


def test_geminiignore_trailing_slash_filters_files_but_enters_the_folder(root: Path) -> None:
    ignore_tree(root, "secret/")
    load = engine(root, jit_context=False).load(str(root / "w"))
    assert rel(root, load.paths) == ["w/GEMINI.md", "w/z/GEMINI.md"]
    # behaviour.md §3: shouldIgnoreFile(dir) is asked as for a file, so `secret/` does not
    # match the folder itself: w, w/secret and w/z are read (w/.git is git-ignored, Gemini
    # CLI's default; w/secret/deep matches through its parent).
    assert load.searches[0].scanned == 3
    # ... and entering it costs budget: with 2 folders w/z is never reached.
    tight = engine(root, jit_context=False, discovery_max_dirs=2).load(str(root / "w"))
    assert rel(root, tight.paths) == ["w/GEMINI.md"]


def test_geminiignore_without_slash_prunes_the_folder(root: Path) -> None:
    ignore_tree(root, "secret")
    load = engine(root, jit_context=False).load(str(root / "w"))
    assert rel(root, load.paths) == ["w/GEMINI.md", "w/z/GEMINI.md"]
    assert load.searches[0].scanned == 2  # w and w/z (w/.git is git-ignored by default)
    tight = engine(root, jit_context=False, discovery_max_dirs=2).load(str(root / "w"))
    assert rel(root, tight.paths) == ["w/GEMINI.md", "w/z/GEMINI.md"]


def test_geminiignore_can_be_turned_off(root: Path) -> None:
    ignore_tree(root, "secret")
    load = engine(root, jit_context=False, respect_gemini_ignore=False).load(str(root / "w"))
    # downward results are JS-sorted: 'GEMINI.md' < 'deep' ('G' < 'd')
    assert rel(root, load.paths) == ["w/GEMINI.md", "w/secret/GEMINI.md",
                                     "w/secret/deep/GEMINI.md", "w/z/GEMINI.md"]


def test_gitignore_by_default_unless_turned_off(root: Path) -> None:
    # Gemini CLI's settings default respectGitIgnore to true (class G3, fixed).
    make(root, {"w/.git": None, "w/.gitignore": "build\n", "w/GEMINI.md": "w",
                "w/build/GEMINI.md": "b"})
    plain = engine(root, jit_context=False).load(str(root / "w"))
    assert rel(root, plain.paths) == ["w/GEMINI.md"]
    off = engine(root, jit_context=False, respect_git_ignore=False).load(str(root / "w"))
    assert rel(root, off.paths) == ["w/GEMINI.md", "w/build/GEMINI.md"]


@pytest.mark.parametrize(("git_ignore", "found"), [(None, True), (True, True), (False, False)])
def test_classic_git_folder_uses_no_budget(root: Path, git_ignore: bool | None,
                                           found: bool) -> None:
    # Gemini CLI 0.43 (class G2): its file service ignores `.git` in a git repository while
    # respectGitIgnore is on (its default), so with 2 folders it reads w and w/found.
    filtering = {} if git_ignore is None else {"fileFiltering": {"respectGitIgnore": git_ignore}}
    make(root, {"w/.git/HEAD": "ref: refs/heads/main\n", "w/found/GEMINI.md": "found\n",
                "home/.gemini/settings.json": json.dumps(
                    {"experimental": {"jitContext": False},
                     "context": {"discoveryMaxDirs": 2, **filtering}})})
    settings = load_settings(str(root / "w"), home=str(root / "home"))
    load = MemoryEngine(settings).load(str(root / "w"))
    assert rel(root, load.paths) == (["w/found/GEMINI.md"] if found else [])


# --- ordering ------------------------------------------------------------------------------

@pytest.fixture
def two_names(root: Path) -> Path:
    return make(root, {"w/.git": None, "w/GEMINI.md": "g", "w/AGENTS.md": "a",
                       "w/sub/GEMINI.md": "sg", "w/sub/AGENTS.md": "sa",
                       "w/sub/B/GEMINI.md": "B", "w/sub/a/GEMINI.md": "a2"})


def test_classic_order_filename_outer_loop_upward_then_sorted_downward(two_names: Path) -> None:
    load = engine(two_names, jit_context=False,
                  context_file_names=["GEMINI.md", "AGENTS.md"]).load(str(two_names / "w/sub"))
    assert rel(two_names, load.paths) == [
        "w/GEMINI.md", "w/sub/GEMINI.md",  # upward, root→leaf
        "w/sub/B/GEMINI.md", "w/sub/a/GEMINI.md",  # downward, JS sort: 'B' < 'a'
        "w/AGENTS.md", "w/sub/AGENTS.md",  # then the second name
    ]


def test_jit_order_is_one_plain_sort(two_names: Path) -> None:
    load = engine(two_names, context_file_names=["GEMINI.md", "AGENTS.md"]).load(
        str(two_names / "w/sub"))
    assert rel(two_names, load.paths) == ["w/AGENTS.md", "w/GEMINI.md", "w/sub/AGENTS.md",
                                          "w/sub/GEMINI.md"]


def test_jit_subfolder_order_root_to_leaf_names_in_order(two_names: Path) -> None:
    e = engine(two_names, context_file_names=["GEMINI.md", "AGENTS.md"])
    session = JitSession.after_startup(e, e.load(str(two_names / "w")))
    found = session.discover(str(two_names / "w" / "sub" / "a" / "x.py"))
    assert rel(two_names, [f.path for f in found.files]) == [
        "w/sub/GEMINI.md", "w/sub/AGENTS.md", "w/sub/a/GEMINI.md"]


def test_classic_dedupes_by_inode(root: Path) -> None:
    make(root, {"w/.git": None, "w/GEMINI.md": "same"})
    os.link(root / "w" / "GEMINI.md", root / "w" / "AGENTS.md")
    load = engine(root, jit_context=False,
                  context_file_names=["GEMINI.md", "AGENTS.md"]).load(str(root / "w"))
    assert rel(root, load.paths) == ["w/GEMINI.md"]


# --- the JIT session -----------------------------------------------------------------------

@pytest.fixture
def jit_tree(root: Path) -> Path:
    return make(root, {"w/.git": None, "w/GEMINI.md": "root", "w/a/GEMINI.md": "a",
                       "w/a/b/GEMINI.md": "b", "w/a/b/file.py": "", "w/c/GEMINI.md": "c",
                       "outside/GEMINI.md": "o"})


def session_for(root: Path, **extra: Any) -> JitSession:
    e = engine(root, **extra)
    return JitSession.after_startup(e, e.load(str(root / "w")))


def test_jit_loads_each_file_at_most_once(jit_tree: Path) -> None:
    session = session_for(jit_tree)
    first = session.discover(str(jit_tree / "w" / "a" / "b" / "file.py"))
    assert rel(jit_tree, [f.path for f in first.files]) == ["w/a/GEMINI.md", "w/a/b/GEMINI.md"]
    assert first.context == "\n\n".join([block(jit_tree / "w/a/GEMINI.md", "a"),
                                         block(jit_tree / "w/a/b/GEMINI.md", "b")])
    assert first.appendix == ("\n\n--- Newly Discovered Project Context ---\n"
                              f"{first.context}\n--- End Project Context ---")
    for again in ("w/a/b/file.py", "w/a/b", "w/a", "w/a/b/new-file.md"):
        result = session.discover(str(jit_tree / again))
        assert (result.files, result.context, result.appendix) == ([], "", ""), again
    other = session.discover(str(jit_tree / "w" / "c"))
    assert rel(jit_tree, [f.path for f in other.files]) == ["w/c/GEMINI.md"]


def test_jit_startup_files_count_as_loaded(jit_tree: Path) -> None:
    session = session_for(jit_tree)
    assert session.discover(str(jit_tree / "w" / "x.py")).files == []


def test_jit_same_inode_under_another_name_is_not_reloaded(jit_tree: Path) -> None:
    (jit_tree / "w" / "d").mkdir()
    os.link(jit_tree / "w" / "a" / "GEMINI.md", jit_tree / "w" / "d" / "GEMINI.md")
    session = session_for(jit_tree)
    assert len(session.discover(str(jit_tree / "w" / "a")).files) == 1
    assert session.discover(str(jit_tree / "w" / "d" / "f.py")).files == []


def test_jit_outside_the_workspace_loads_nothing(jit_tree: Path) -> None:
    session = session_for(jit_tree)
    assert session.discover(str(jit_tree / "outside" / "f.py")).files == []


@pytest.mark.parametrize("segment", ["node_modules", ".git", ".env", "Node_Modules", "node_m~1",
                                     ".env. ", "gha-creds-1.json"])
def test_jit_under_a_blocked_segment_loads_nothing_from_0_44(jit_tree: Path, segment: str) -> None:
    """Gemini CLI 0.44+ (hasBlockedPathSegment): every file tool refuses a path with a
    node_modules, .git or .env segment, so a read there appends nothing; 0.43 loads it."""
    folder = jit_tree / "w" / segment / "lib"
    folder.mkdir(parents=True)
    (folder / "GEMINI.md").write_text("deep", encoding="utf-8")
    (folder / "x.txt").write_text("", encoding="utf-8")
    newer = session_for(jit_tree, gemini_profile="0.44+")
    assert newer.discover(str(folder / "x.txt")).files == []
    if segment == ".git":
        return  # 0.43's read_file refuses it too: its git ignore always ignores .git
    older = session_for(jit_tree, gemini_profile="0.43")
    loaded = older.discover(str(folder / "x.txt")).files
    assert str(folder / "GEMINI.md") in [f.path for f in loaded]


def test_jit_blocked_segments_are_whole_names(jit_tree: Path) -> None:
    folder = jit_tree / "w" / "my_node_modules" / ".envrc.d"
    folder.mkdir(parents=True)
    (folder / "GEMINI.md").write_text("fine", encoding="utf-8")
    session = session_for(jit_tree, gemini_profile="0.44+")
    assert [f.path for f in session.discover(str(folder / "x.txt")).files] == [
        str(folder / "GEMINI.md")]


def test_jit_preview_does_not_mark_loaded(jit_tree: Path) -> None:
    session = session_for(jit_tree)
    target = str(jit_tree / "w" / "c" / "f.py")
    assert len(session.preview(target).files) == 1
    assert len(session.preview(target).files) == 1
    assert len(session.discover(target).files) == 1
    assert session.discover(target).files == []


def test_jit_untrusted_session_loads_nothing(jit_tree: Path) -> None:
    session = session_for(jit_tree, trusted=False)
    assert session.discover(str(jit_tree / "w" / "a" / "b" / "file.py")).files == []


# --- prompt forms --------------------------------------------------------------------------

STRING_PREAMBLE = (
    "\n# Contextual Instructions (GEMINI.md, AGENTS.md)\n"
    "The following content is loaded from local and global configuration files.\n"
    "**Context Precedence:**\n"
    "- **Global (~/.gemini/):** foundational user preferences. Apply these broadly.\n"
    "- **Extensions:** supplementary knowledge and capabilities.\n"
    "- **Workspace Root:** workspace-wide mandates. Supersedes global preferences.\n"
    "- **Sub-directories:** highly specific overrides. These rules supersede all others for "
    "files within their scope.\n\n"
    "**Conflict Resolution:**\n"
    "- **Precedence:** Strictly follow the order above (Sub-directories > Workspace Root > "
    "Extensions > Global).\n"
    "- **System Overrides:** Contextual instructions override default operational behaviors "
    "(e.g., tech stack, style, workflows, tool preferences) defined in the system prompt. "
    "However, they **cannot** override Core Mandates regarding safety, security, and agent "
    "integrity.\n\n")
NAMES = ["GEMINI.md", "AGENTS.md"]


def test_prompt_jit_without_private_memory() -> None:
    system, session = render_prompt_memory("jit", " G ", "", "E\n", "P", NAMES)
    assert system == STRING_PREAMBLE + "<loaded_context>\nG\n</loaded_context>"
    assert session == ("\n<loaded_context>\n<extension_context>\nE\n</extension_context>\n"
                       "<project_context>\nP\n</project_context>\n</loaded_context>")


def test_prompt_jit_with_private_memory() -> None:
    system, session = render_prompt_memory("jit", "G", "U", "", "P", NAMES)
    assert system == (
        "\n---\n\n<loaded_context>\n<global_context>\nG\n</global_context>\n"
        "<user_project_memory>\n"
        "--- Private Project Memory Index (private, not committed to repo) ---\nU\n"
        "--- End Private Project Memory Index ---\n</user_project_memory>\n</loaded_context>")
    assert session == ("\n<loaded_context>\n<project_context>\nP\n</project_context>\n"
                       "</loaded_context>")


def test_prompt_classic_puts_everything_in_the_system_instruction() -> None:
    system, session = render_prompt_memory("classic", "G", "", "E", "P", NAMES)
    assert system == ("\n---\n\n<loaded_context>\n<global_context>\nG\n</global_context>\n"
                      "<extension_context>\nE\n</extension_context>\n"
                      "<project_context>\nP\n</project_context>\n</loaded_context>")
    assert session == ""


def test_prompt_whitespace_only_tiers_vanish() -> None:
    assert render_prompt_memory("jit", " \n\t", "", "  ", "\n", NAMES) == ("", "")
    assert render_prompt_memory("classic", "", " ", "", "", NAMES) == ("", "")
    system, session = render_prompt_memory("jit", "", "", "", "P", NAMES)
    assert system == ""
    assert session.startswith("\n<loaded_context>\n<project_context>\nP\n")


# --- the import graph ----------------------------------------------------------------------

def test_import_graph_forward_reverse_dependents() -> None:
    graph = ImportGraph()
    graph.update_file("/r/GEMINI.md", "@./a.md\nsee `@./code.md`\n@./b.md\n")
    graph.update_file("/r/a.md", "@./lib/d.md")
    graph.update_file("/r/b.md", "@./lib/d.md @../up.md")
    graph.update_file("/r/lib/d.md", "leaf")
    assert [(e.target, e.token.path) for e in graph.imports_of("/r/GEMINI.md")] == [
        ("/r/a.md", "./a.md"), ("/r/b.md", "./b.md")]  # the one in code is not an edge
    edge = graph.imports_of("/r/GEMINI.md")[1]
    assert (edge.source, edge.token.start, edge.token.end) == ("/r/GEMINI.md", 25, 32)
    assert [e.source for e in graph.importers_of("/r/lib/d.md")] == ["/r/a.md", "/r/b.md"]
    assert [e.source for e in graph.importers_of("/up.md")] == ["/r/b.md"]
    assert graph.dependents("/r/lib/d.md") == {"/r/a.md", "/r/b.md", "/r/GEMINI.md"}
    assert graph.dependents("/r/GEMINI.md") == set()
    assert graph.imports_of("/r/lib/d.md") == []
    assert graph.files() == ["/r/GEMINI.md", "/r/a.md", "/r/b.md", "/r/lib/d.md"]


def test_import_graph_updates_and_removals() -> None:
    graph = ImportGraph()
    graph.update_file("/r/a.md", "@./d.md")
    graph.update_file("/r/b.md", "@./d.md")
    graph.update_file("/r/a.md", "@./e.md")  # a no longer imports d
    assert [e.source for e in graph.importers_of("/r/d.md")] == ["/r/b.md"]
    assert [e.source for e in graph.importers_of("/r/e.md")] == ["/r/a.md"]
    graph.update_file("/r/b.md", None)  # b deleted
    assert graph.importers_of("/r/d.md") == []
    assert graph.dependents("/r/d.md") == set()
    assert "/r/d.md" not in graph.reverse
    assert graph.files() == ["/r/a.md"]


def test_import_graph_cycles_terminate() -> None:
    graph = ImportGraph()
    graph.update_file("/r/a.md", "@./b.md")
    graph.update_file("/r/b.md", "@./a.md")
    assert graph.dependents("/r/a.md") == {"/r/a.md", "/r/b.md"}


def test_downward_search_visits_folders_in_strcmp_order_of_their_bytes(root: Path) -> None:
    # libuv lists entries in strcmp order of the name's bytes: "Z" < "a" < "b" < the
    # undecodable byte 0x80 < "é" (0xC3 0xA9), which is not code-point order for 0x80.
    names = [b"b", b"a", b"\xc3\xa9", b"Z", b"\x80", b"a-b", b"a.b"]
    for name in names:
        folder = os.path.join(os.fsencode(str(root)), name)
        os.mkdir(folder)
        with open(os.path.join(folder, b"GEMINI.md"), "w") as handle:
            handle.write("x\n")
    (root / "GEMINI.md").write_text("top\n")
    engine = MemoryEngine(MemorySettings(home=str(root / "home")))
    found, _ = engine.downward_search(str(root), ("GEMINI.md", "AGENTS.md"), None, None)
    expected = [str(root / "GEMINI.md")] + [
        os.fsdecode(os.path.join(os.fsencode(str(root)), n, b"GEMINI.md")) for n in sorted(names)]
    assert found == expected


def test_a_jit_session_sees_a_file_that_became_a_symlink_out(root: Path) -> None:
    make(root, {"w/.git": None, "w/shared.md": "Inside.\n", "outside.md": "SECRET\n",
                "w/a/GEMINI.md": "A @../shared.md\n", "w/b/GEMINI.md": "B @../shared.md\n"})
    e = engine(root)
    session = JitSession.after_startup(e, e.load(str(root / "w")))
    (first,) = session.discover(str(root / "w" / "a" / "x.py")).files
    assert "Inside." in (first.content or "")
    # Meanwhile shared.md is replaced by a link that leaves the workspace.
    (root / "w" / "shared.md").unlink()
    os.symlink(root / "outside.md", root / "w" / "shared.md")
    (second,) = session.discover(str(root / "w" / "b" / "x.py")).files
    assert "SECRET" not in (second.content or "")
    assert "Import failed: ../shared.md - Path traversal attempt" in (second.content or "")


# --- the gemini@0.44+ profile (Gemini CLI 0.44 and later, verified on 0.61.0) ----------------

def test_profile_044_file_name_adds_to_gemini_md(root: Path) -> None:
    make(root, {"w/.git": None, "w/GEMINI.md": "g", "w/AGENTS.md": "a",
                "home/.gemini/settings.json": json.dumps(
                    {"context": {"fileName": [" AGENTS.md ", "AGENTS.md"]}})})
    old = load_settings(str(root / "w"), home=str(root / "home"))
    assert old.context_file_names == ["AGENTS.md", "AGENTS.md"]  # trimmed, as 0.43 does
    new = load_settings(str(root / "w"), home=str(root / "home"),
                        cli={"gemini_profile": "0.44+"})
    # configured names first, trimmed, each once, then GEMINI.md (setGeminiMdFilename)
    assert new.context_file_names == ["AGENTS.md", "GEMINI.md"]
    load = MemoryEngine(new).load(str(root / "w"))
    assert rel(root, load.paths) == ["w/AGENTS.md", "w/GEMINI.md"]


def test_profile_044_is_jit_only(root: Path) -> None:
    make(root, {"w/.git": None, "w/GEMINI.md": "g", "w/sub/GEMINI.md": "s",
                "home/.gemini/settings.json": json.dumps(
                    {"experimental": {"jitContext": False}, "context": {"discoveryMaxDirs": 1}})})
    old = load_settings(str(root / "w"), home=str(root / "home"))
    assert old.mode == "classic"
    new = load_settings(str(root / "w"), home=str(root / "home"),
                        cli={"gemini_profile": "0.44+", "jit_context": False})
    assert (new.mode, new.jit_context) == ("jit", True)
    load = MemoryEngine(new).load(str(root / "w"))
    assert (load.mode, rel(root, load.paths)) == ("jit", ["w/GEMINI.md"])


def test_profile_044_skips_a_folder_named_like_a_context_file(root: Path) -> None:
    make(root, {"w/.git": None, "w/GEMINI.md/inner.txt": "not memory", "w/sub/GEMINI.md": "s"})
    old = engine(root).load(str(root / "w" / "sub"))
    # 0.43 fails to read it (EISDIR); its JIT refresh lists only the files it read.
    assert old.files[0].content is None
    assert rel(root, old.paths) == ["w/sub/GEMINI.md"]
    classic = engine(root, jit_context=False).load(str(root / "w" / "sub"))
    assert rel(root, classic.paths) == ["w/GEMINI.md", "w/sub/GEMINI.md"]  # listed there
    new = engine(root, gemini_profile="0.44+").load(str(root / "w" / "sub"))
    assert rel(root, new.paths) == ["w/sub/GEMINI.md"]


@pytest.mark.parametrize(("version", "profile"), [
    (None, "0.43"), ("0.43", "0.43"), ("0.43.0", "0.43"), ("0.40.1", "0.43"),
    ("0.44", "0.44+"), ("0.44+", "0.44+"), ("0.61.0", "0.44+"), ("1.2", "0.44+")])
def test_gemini_profile_for(version: str | None, profile: str) -> None:
    assert gemini_profile_for(version) == profile


def test_gemini_profile_for_refuses_what_is_no_version() -> None:
    for bad in ("", "latest", "0", "0.x", "1.2.3.4"):
        with pytest.raises(ValueError):
            gemini_profile_for(bad)


# --- settings and paths as Gemini CLI 0.43 reads them (found by the loader fuzzer) -----------


def _user_settings(root: Path, data: Any) -> MemorySettings:
    settings_file = root / "home" / ".gemini" / "settings.json"
    settings_file.parent.mkdir(parents=True, exist_ok=True)
    settings_file.write_text(json.dumps(data))
    return load_settings(str(root / "w"), home=str(root / "home"))


@pytest.mark.parametrize(("value", "mode"), [
    (False, "classic"), ("false", "classic"), ("FALSE", "classic"), (0, "classic"),
    ("", "classic"), (None, "jit"), ("yes", "jit"), ([], "jit"), (1, "jit"),
])
def test_jit_context_as_gemini_cli_reads_it(root: Path, value: Any, mode: str) -> None:
    make(root, {"w": None})
    assert _user_settings(root, {"experimental": {"jitContext": value}}).mode == mode


def test_a_file_the_schema_rejects_is_used_as_written(root: Path) -> None:
    # "false" is coerced only when the whole file validates; a bad discoveryMaxDirs makes it
    # a warning, and the string is then truthy.
    make(root, {"w": None})
    bad = _user_settings(root, {"experimental": {"jitContext": "false"},
                                "context": {"discoveryMaxDirs": "many"}})
    assert bad.mode == "jit"
    assert bad.discovery_max_dirs == 0


@pytest.mark.parametrize(("value", "budget"), [
    (3, 3), (2.5, 3), ("4", 4), (-1, 0), (0, 0), (True, 1), (1e309, -1),
])
def test_discovery_max_dirs_as_gemini_cli_counts_it(root: Path, value: Any, budget: int) -> None:
    make(root, {"w": None})
    assert _user_settings(root, {"context": {"discoveryMaxDirs": value}}).discovery_max_dirs \
        == budget


def test_settings_values_expand_environment_variables(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make(root, {"w": None, "home/inc": None})
    monkeypatch.setenv("MEMLENS_TEST_NAME", "AGENTS.md")
    monkeypatch.delenv("MEMLENS_UNSET", raising=False)
    s = _user_settings(root, {"context": {
        "fileName": ["$MEMLENS_TEST_NAME", "${MEMLENS_UNSET:-CONTEXT.md}", " $MEMLENS_UNSET "],
        "includeDirectories": ["~/inc"]}})
    assert s.context_file_names == ["AGENTS.md", "CONTEXT.md", "$MEMLENS_UNSET"]
    assert s.include_directories == [str(root / "home" / "inc")]


def test_a_missing_include_directory_is_an_error(root: Path) -> None:
    make(root, {"w": None})
    s = _user_settings(root, {"context": {"includeDirectories": ["gone"]}})
    assert s.include_directories == []
    [problem] = s.problems
    assert problem.severity == "error"
    assert f"Directory does not exist: {root / 'w' / 'gone'}" in problem.message


def test_an_empty_file_name_in_the_workspace_means_gemini_md(root: Path) -> None:
    make(root, {"w/.gemini/settings.json": json.dumps({"context": {"fileName": []}})})
    s = _user_settings(root, {"context": {"fileName": "AGENTS.md"}})
    assert s.context_file_names == ["GEMINI.md"]


def test_a_backslash_in_a_folder_name_is_a_separator(root: Path) -> None:
    make(root, {"w/.git": None, "w/a\\b/GEMINI.md": "x\n", "w/GEMINI.md": "w\n"})
    load = engine(root, jit_context=False).load(str(root / "w"))
    assert rel(root, load.paths) == ["w/GEMINI.md", "w/a/b/GEMINI.md"]
    assert load.file_count == 1


def test_the_global_file_in_the_search_renders_twice(root: Path) -> None:
    make(root, {"home/.gemini/GEMINI.md": "global\n", "w/GEMINI.md": "w\n"})
    load = engine(root, jit_context=False, trusted=True).load(str(root))
    glob = block(root / "home" / ".gemini" / "GEMINI.md", "global")
    assert load.memory.global_ == glob
    assert load.memory.project.startswith(glob)
    assert load.paths.count(str(root / "home" / ".gemini" / "GEMINI.md")) == 1
