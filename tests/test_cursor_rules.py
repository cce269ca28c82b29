"""Cursor's project rules, a convention (issue 22): each rule type read from its frontmatter,
every check, what loads at start and on read, and the CLI through a subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memlens.agents.base import WorkspaceCheck
from memlens.agents.cursor.agent import CursorAgent, check_folder
from memlens.agents.cursor.rules import (
    ALWAYS,
    ALWAYS_APPLY_STRING,
    AUTO,
    FRONTMATTER_INVALID,
    GLOB_NO_MATCH,
    MANUAL,
    MANUAL_ONLY,
    OUTSIDE_RULES,
    REQUESTED,
    TOO_LONG,
    UNKNOWN_KEY,
    parse_rule,
    split_globs,
)
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings
from memlens.reports.sarif import RULES

from .conftest import build_tree
from .test_cli import memlens


def codes(content: str) -> list[tuple[int, str]]:
    return [(d.line, d.code) for d in parse_rule("/w/.cursor/rules/r.mdc", content,
                                                 "/w").diagnostics]


@pytest.mark.parametrize(("content", "kind"), [
    ("---\nalwaysApply: true\n---\nA\n", ALWAYS),
    ("---\ndescription: x\nglobs: src/**/*.ts\nalwaysApply: true\n---\nA\n", ALWAYS),
    ("---\nglobs: **/*.py, src/**/*.ts\nalwaysApply: false\n---\nA\n", AUTO),
    ("---\nglobs:\n  - \"*.py\"\n---\nA\n", AUTO),
    ("---\ndescription: Database migrations\nglobs:\nalwaysApply: false\n---\nA\n", REQUESTED),
    ("---\ndescription:\nglobs:\nalwaysApply: false\n---\nA\n", MANUAL),
    ("Just Markdown\n", MANUAL),
])
def test_the_four_rule_types(content: str, kind: str) -> None:
    assert parse_rule("/w/.cursor/rules/r.mdc", content, "/w").kind == kind


def test_cursors_unquoted_globs_are_read_though_they_are_not_yaml() -> None:
    rule = parse_rule("/w/.cursor/rules/r.mdc",
                      "---\ndescription: d\nglobs: **/*.py, src/**/*.{ts,tsx}\n---\nBody\n", "/w")
    assert rule.globs == ["**/*.py", "src/**/*.ts", "src/**/*.tsx"]
    assert rule.body == "Body\n" and rule.description == "d" and rule.diagnostics == []
    assert rule.applies_to("/w/pkg/a.py") and rule.applies_to("/w/src/ui/b.tsx")
    assert not rule.applies_to("/w/lib/c.ts") and not rule.applies_to("/elsewhere/a.py")
    assert split_globs(["a/*.md", "b/**, c"]) == ["a/*.md", "b/**", "c"]


def test_malformed_frontmatter() -> None:
    assert codes("---\ndescription: ok\nthis is not a key\n---\nA\n") == [
        (3, FRONTMATTER_INVALID)]
    assert codes("---\nalwaysApply: true\nNever closed\n") == [(1, FRONTMATTER_INVALID)]
    assert codes("---\ndescription: ok\n---\nA\n") == []


def test_always_apply_written_as_a_string() -> None:
    found = parse_rule("/w/.cursor/rules/r.mdc",
                       "---\ndescription: d\nalwaysApply: \"true\"\n---\nA\n", "/w")
    assert [(d.line, d.code) for d in found.diagnostics] == [(3, ALWAYS_APPLY_STRING)]
    assert 'alwaysApply is "true"' in found.diagnostics[0].message
    assert found.kind == REQUESTED  # not always applied: left to its description
    assert codes("---\nglobs: '*.py'\nalwaysApply: 'false'\n---\nA\n") == [
        (3, ALWAYS_APPLY_STRING)]
    assert codes("---\nglobs: '*.py'\nalwaysApply: false\n---\nA\n") == []


def test_unknown_keys() -> None:
    assert codes("---\ndescription: d\nowner: me\napplyTo: '*.py'\n---\nA\n") == [
        (3, UNKNOWN_KEY), (4, UNKNOWN_KEY)]


def test_a_rule_with_neither_globs_description_nor_always_apply_is_manual_info() -> None:
    found = parse_rule("/w/.cursor/rules/r.mdc", "---\nglobs:\n---\nA\n", "/w").diagnostics
    assert [(d.code, d.severity) for d in found] == [(MANUAL_ONLY, "info")]
    assert codes("No frontmatter at all\n") == [(1, MANUAL_ONLY)]


@pytest.fixture
def repo(root: Path) -> Path:
    build_tree(root, {
        "home": None, "repo/.git": None,
        "repo/.cursor/rules/core.mdc": "---\nalwaysApply: true\n---\nAlways use pnpm.\n",
        "repo/.cursor/rules/lang/py.mdc": "---\nglobs: **/*.py, src/**/*.ts\n---\nHints.\n",
        "repo/.cursor/rules/db.mdc": "---\ndescription: Database migrations\n---\nAlembic.\n",
        "repo/.cursor/rules/manual.mdc": "Only when asked.\n",
        "repo/.cursorrules": "Legacy rules.\n",
        "repo/AGENTS.md": "Root agents.\n",
        "repo/src/a.py": "x = 1\n",
        "repo/web/.cursor/rules/web.mdc": "---\nalwaysApply: true\n---\nWeb always.\n",
        "repo/web/app.js": "",
        "repo/docs/stray.mdc": "---\nalwaysApply: true\n---\nNot read.\n",
    })
    return root / "repo"


def test_what_loads_at_start_on_read_and_only_offered(repo: Path) -> None:
    settings = MemorySettings(home=str(repo.parent / "home"))
    agent = CursorAgent()
    memory = agent.load(str(repo), settings)
    assert [(f.label, f.path) for f in memory.files] == [
        ("always", f"{repo}/.cursor/rules/core.mdc"), ("legacy", f"{repo}/.cursorrules"),
        ("AGENTS.md", f"{repo}/AGENTS.md")]
    assert memory.text == (f"--- {repo}/.cursor/rules/core.mdc ---\nAlways use pnpm.\n\n"
                           f"--- {repo}/.cursorrules ---\nLegacy rules.\n\n"
                           f"--- {repo}/AGENTS.md ---\nRoot agents.")
    assert "convention" in memory.headline
    later = agent.on_read_files(memory, settings, FileReader(), WorkspaceCheck())
    kinds = {posixpath_name(f.path): (f.when, f.note) for f in later}
    assert kinds["py.mdc"][0] == "on-read"
    assert kinds["db.mdc"][0] == "on-demand" and "only offered" in str(kinds["db.mdc"][1])
    assert kinds["manual.mdc"][0] == "on-demand" and "@-mentioned" in str(kinds["manual.mdc"][1])
    assert kinds["web.mdc"][0] == "on-read" and "web/" in str(kinds["web.mdc"][1])
    session = agent.jit_session(settings, str(repo), FileReader(), WorkspaceCheck())
    assert session is not None
    first = session.load_for(str(repo / "src" / "a.py"))
    assert [f.path for f in first.files] == [f"{repo}/.cursor/rules/lang/py.mdc"]
    assert session.load_for(str(repo / "src" / "a.py")).files == []  # once a session
    web = session.load_for(str(repo / "web" / "app.js"))
    assert [f.path for f in web.files] == [f"{repo}/web/.cursor/rules/web.mdc"]


def posixpath_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def test_the_workspace_check_finds_globs_matching_nothing_and_stray_rules(repo: Path) -> None:
    found = check_folder(str(repo), FileReader())
    assert sorted((d.path.removeprefix(str(repo) + "/"), d.code) for d in found.diagnostics) == [
        (".cursor/rules/lang/py.mdc", GLOB_NO_MATCH),
        (".cursor/rules/manual.mdc", MANUAL_ONLY),
        (".cursorrules", "cursor-legacy-rules"),  # beside .cursor/rules (issue 33)
        ("docs/stray.mdc", OUTSIDE_RULES)]
    (glob,) = [d for d in found.diagnostics if d.code == GLOB_NO_MATCH]
    assert "'src/**/*.ts'" in glob.message and glob.line == 2
    # A file the glob matches clears it.
    build_tree(repo, {"src/b.ts": ""})
    assert GLOB_NO_MATCH not in {d.code for d in check_folder(str(repo),
                                                              FileReader()).diagnostics}


def test_a_rule_over_500_lines_is_info() -> None:
    assert codes("---\nalwaysApply: true\n---\n" + "line\n" * 498) == [(1, TOO_LONG)]
    assert codes("---\nalwaysApply: true\n---\n" + "line\n" * 497) == []


def test_every_code_is_a_sarif_rule() -> None:
    for code in (FRONTMATTER_INVALID, ALWAYS_APPLY_STRING, UNKNOWN_KEY, GLOB_NO_MATCH,
                 MANUAL_ONLY, OUTSIDE_RULES, TOO_LONG):
        assert code in RULES
        assert f"`{code}`" in Path(__file__).parents[1].joinpath(
            "docs", "reference.md").read_text(encoding="utf-8")


def test_cli_show_list_check_jit_with_agent_cursor(repo: Path) -> None:
    home, cwd = repo.parent / "home", repo.parent
    shown = memlens("show", "repo", "--agent", "cursor", cwd=cwd, home=home)
    assert shown.code == 0 and "Always use pnpm." in shown.out and "Alembic." not in shown.out
    listed = memlens("list", "repo", "--agent", "cursor", "--json", cwd=cwd, home=home)
    assert listed.code == 0
    tiers = {posixpath_name(f["path"]): f["tier"] for f in json.loads(listed.out)["files"]}
    assert tiers["db.mdc"] == "requested" and tiers["manual.mdc"] == "manual"
    checked = memlens("check", "repo", "--agent", "cursor", cwd=cwd, home=home)
    assert "warning[cursor-glob-no-match]" in checked.out
    assert "warning[cursor-rule-outside-rules]" in checked.out
    assert checked.err.endswith("(Cursor)\n")
    jit = memlens("jit", "--agent", "cursor", "--cwd", str(repo), str(repo / "src" / "a.py"),
                  cwd=cwd, home=home)
    assert jit.code == 0
    assert jit.out.rstrip("\n") == f"--- {repo}/.cursor/rules/lang/py.mdc ---\nHints."
    # Without --agent, Cursor is among the agents with files here, labelled a convention.
    every = memlens("show", "repo", cwd=cwd, home=home)
    assert "==> Cursor (cursor) <==" in every.out


def test_cli_diff_sees_a_rule_change(repo: Path) -> None:


    home = repo.parent / "home"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    (repo / ".git").rmdir()
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "rules"], check=True)
    (repo / ".cursor" / "rules" / "core.mdc").write_text(
        "---\nalwaysApply: true\n---\nAlways use npm.\n", encoding="utf-8")
    diffed = memlens("diff", "--agent", "cursor", cwd=repo, home=home)
    assert diffed.code == 1, diffed.err
    assert "-Always use pnpm." in diffed.out and "+Always use npm." in diffed.out


def test_the_matrix_labels_cursor_a_convention(repo: Path) -> None:
    home, cwd = repo.parent / "home", repo.parent
    done = memlens("report", "repo", "--trusted", cwd=cwd, home=home)
    assert done.code == 0, done.err
    result = json.loads(done.out)
    labels = {a["id"]: a["label"] for a in result["agents"]}
    assert labels["cursor"] == "Cursor (convention)"
    cells = {r["relative"]: r["cells"]["cursor"]["state"] for r in result["rows"]}
    assert cells[".cursor/rules/core.mdc"] == "startup"
    assert cells[".cursor/rules/lang/py.mdc"] == "on-read"
    assert cells[".cursor/rules/db.mdc"] == "on-demand"
    # A folder with an AGENTS.md alone has no Cursor column (its own files are not there).
    build_tree(cwd, {"plain/.git": None, "plain/AGENTS.md": "Run make.\n"})
    plain = json.loads(memlens("report", "plain", "--trusted", cwd=cwd, home=home).out)
    assert "cursor" not in [a["id"] for a in plain["agents"]]


def test_an_agents_md_alone_is_no_cursor_memory(root: Path) -> None:
    """Without Cursor's own files, the AGENTS.md it would read is the AGENTS.md convention's:
    no on-read session, no Memory view rows, no sources."""
    build_tree(root, {"repo/.git": None, "repo/AGENTS.md": "Run make.\n",
                      "repo/sub/AGENTS.md": "Sub.\n"})
    settings = MemorySettings(home=str(root))
    check = CursorAgent().check_workspace(settings, [str(root / "repo")], [], FileReader())
    assert not check.has_memory
    assert CursorAgent().view_files(str(root / "repo"), settings, FileReader(), check,
                                    lambda p: str(root / "repo")) == []
    build_tree(root, {"repo/.cursorrules": "Legacy.\n"})
    check = CursorAgent().check_workspace(settings, [str(root / "repo")], [], FileReader())
    assert check.sources == [str(root / "repo" / p) for p in (".cursorrules", "AGENTS.md",
                                                              "sub/AGENTS.md")]
