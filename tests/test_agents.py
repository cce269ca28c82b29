"""The agent interface: the registry, one reference scanner for both `@path` forms, one
frontmatter reader, one repository-root finder, and each agent's load, JIT session and context
markers in the common shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlens.agents import (
    AGENT_IDS,
    REGISTRY,
    agent_by_id,
    all_agents,
    checked_agents,
    owner_of,
    reading_agent,
    workspace_file_names,
)
from memlens.agents.claude.includes import find_includes
from memlens.agents.claude.markdown import includes as markdown_includes
from memlens.agents.claude.markdown import split_frontmatter
from memlens.agents.gemini.imports import find_imports
from memlens.files.roots import repository_root
from memlens.lsp.custom import context_sections
from memlens.model import MemorySettings
from memlens.text.frontmatter import line_closed_frontmatter

from .conftest import build_tree

_TRICKY = "@ab~./1`\t\n\r \x0b\x0c\x1c\x85\xa0\u2003\u3000é٣-_#\\<!->"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_TRICKY, max_size=40))
def test_claude_include_tokens_are_what_its_lexer_follows(text: str) -> None:
    """The editor's links and renames (find_includes) mark as followed exactly the includes
    the loader follows (markdown.includes, Claude Code's own lexer), each token at an `@`."""
    tokens = find_includes(text)
    followed = sorted(t.path for t in tokens if not t.in_code)
    assert followed == sorted(r.path for r in markdown_includes(split_frontmatter(text)[0]))
    assert all(text[t.start] == "@" and t.start < t.end for t in tokens)


@pytest.mark.parametrize(("text", "followed", "not_followed"), [
    ("See @./a.md and @docs/style.md#naming\n", ["./a.md", "docs/style.md"], []),
    ("```\n@./fenced.md\n```\n~~~\n@x.md\n~~~\n    @indented.md\n", [],
     ["./fenced.md", "x.md", "indented.md"]),
    ("@docs/my\\ notes.md here\n", ["docs/my notes.md"], []),
    ("---\nk: @fm.md\n---\n@body.md\n", ["body.md"], ["fm.md"]),
    ("<!-- @hidden.md -->\n\ntext @real.md\n", ["real.md"], ["hidden.md"]),
])
def test_claude_include_tokens(text: str, followed: list[str], not_followed: list[str]) -> None:
    tokens = find_includes(text)
    assert [t.path for t in tokens if not t.in_code] == followed
    assert [t.path for t in tokens if t.in_code] == not_followed
    fragment = next((t for t in tokens if t.path == "docs/style.md"), None)
    if fragment is not None:  # the span stops before the fragment: a rename keeps it
        assert text[fragment.start:fragment.end] == "@docs/style.md"


def test_the_two_scanners_differ_only_where_the_agents_do() -> None:
    text = "@./a @~/b @1.md @é.md @c\u3000tail @d\x0bx"
    assert [t.path for t in find_imports(text)] == ["./a", "c\u3000tail", "d\x0bx"]
    assert [t.path for t in find_includes(text)] == ["./a", "~/b", "1.md", "é.md", "c", "d"]


def test_frontmatter_closed_by_a_line_of_its_own() -> None:
    assert line_closed_frontmatter("---\npaths: a\n---\nbody") == {"paths": "a"}
    assert line_closed_frontmatter("---\r\npaths: a\r\n---") == {"paths": "a"}
    assert line_closed_frontmatter("---\npaths: a\n---trailing\n") is None
    assert line_closed_frontmatter("---\n- a list\n---\n") is None
    assert line_closed_frontmatter("---\nkey: 'unclosed\n---\n") is None


def test_frontmatter_that_is_not_yaml_gets_claude_codes_second_try() -> None:
    # Seen in Claude Code's index written from topic files (generated case gen-2-73): a value
    # with ": " inside is quoted and read again; valid YAML is read as it is.
    text = "---\nname: deploy\ndescription: with: colon\n---\nbody\n"
    assert line_closed_frontmatter(text) == {"name": "deploy", "description": "with: colon"}
    text = '---\nname: [a, b]\ndescription: say "hi": @you\\x\n---\n'
    assert line_closed_frontmatter(text) == {"name": ["a", "b"],
                                             "description": 'say "hi": @you\\x'}
    assert line_closed_frontmatter("---\nname: a # note\n---\n") == {"name": "a"}
    # An unclosed list is quoted like any value with a bracket; a line ending in \r is not.
    assert line_closed_frontmatter("---\nkey: [unclosed\n---\n") == {"key": "[unclosed"}
    assert line_closed_frontmatter("---\ndescription: a: b\r\nname: x\r\n---\n") is None


def test_repository_root(root: Path) -> None:
    build_tree(root, {"repo/.git": None, "repo/a/b": None})
    assert repository_root(str(root / "repo" / "a" / "b")) == str(root / "repo")
    assert repository_root(str(root / "repo" / ".." / "repo")) == str(root / "repo")


def test_registry() -> None:
    # Issue 22's agents come after codex, in the shared order.
    assert AGENT_IDS == ("gemini", "claude", "agents", "codex", "copilot", "vscode-chat",
                         "cursor", "antigravity", "opencode", "pi"
                         ) == tuple(a.id for a in all_agents())
    assert len(REGISTRY) == len(all_agents())
    # Gemini CLI's memory is the one the index renders itself; every other agent is checked.
    assert [a.id for a in all_agents() if a.rendered_by_index] == ["gemini"]
    assert [a.id for a in checked_agents()] == list(AGENT_IDS[1:])
    assert agent_by_id("claude").label == "Claude Code"
    settings = MemorySettings(home="/h", context_file_names=["NOTES.md", "AGENTS.md"])
    assert workspace_file_names(settings) == ["NOTES.md", "AGENTS.md", "CLAUDE.md",
                                              "CLAUDE.local.md", "AGENTS.override.md",
                                              "copilot-instructions.md", ".cursorrules",
                                              "CONTEXT.md", "AGENTS.MD", "CLAUDE.MD"]
    owners = {name: (owner.id if (owner := owner_of(f"/p/{name}", settings)) else None)
              for name in ("NOTES.md", "AGENTS.md", "CLAUDE.local.md", "README.md")}
    assert owners == {"NOTES.md": "gemini", "AGENTS.md": "gemini",
                      "CLAUDE.local.md": "claude", "README.md": None}


def test_no_agent_is_set_apart_by_its_place_in_the_registry(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry's order only lists the agents: with it reversed (Gemini CLI last), the
    user's file names are still Gemini CLI's, a file no other agent reads is still read by
    Gemini CLI's `@import` rules, the files the index renders are still Gemini CLI's (its
    hidden-comment notices name it), and the index renders Gemini CLI's part."""
    import memlens.agents as agents
    from memlens.workspace.index import WorkspaceIndex
    from memlens.workspace.index_agents import RenderedGeminiMemory
    from memlens.workspace.queries import check_file

    monkeypatch.setattr(agents, "AGENT_IDS", tuple(reversed(AGENT_IDS)))
    assert all_agents()[-1].id == "gemini"
    assert all_agents()[0].id == "pi"
    settings = MemorySettings(home=str(root / "home"),
                              context_file_names=["GEMINI.md", "CLAUDE.md"])
    owner = owner_of("/p/CLAUDE.md", settings)
    assert owner is not None and owner.id == "gemini"  # the user named it for Gemini CLI
    assert reading_agent("/p/notes.md", settings, lambda a: False).id == "gemini"
    assert reading_agent("/p/AGENTS.md", settings, lambda a: a.id == "claude").id == "claude"
    assert [a.id for a in checked_agents()] == [a for a in reversed(AGENT_IDS) if a != "gemini"]
    build_tree(root, {"home": None, "repo/.git": None,
                      "repo/GEMINI.md": "Be brief.\n<!-- a note to the model -->\n"})
    found = check_file(str(root / "repo" / "GEMINI.md"), settings)
    assert [d.message for d in found if d.code == "hidden-comment"] == [
        "Gemini CLI receives this HTML comment; rendered Markdown hides it from a reviewer"]
    index = WorkspaceIndex(settings, [str(root / "repo")])
    rendered = [p.agent.id for p in index.parts if isinstance(p, RenderedGeminiMemory)]
    assert rendered == ["gemini"]


def test_which_agent_reads_a_file_s_references() -> None:
    settings = MemorySettings(home="/h", context_file_names=["GEMINI.md", "CLAUDE.md"])

    def reader(path: str, *included_by: str) -> str:
        return reading_agent(path, settings, lambda a: a.id in included_by).id

    assert reader("/p/CLAUDE.md") == "claude"  # a fixed name beats a configured one
    assert reader("/p/GEMINI.md", "claude") == "gemini"
    assert reader("/p/AGENTS.md") == "gemini"  # AGENTS.md holds no references of its own
    assert reader("/p/AGENTS.md", "claude") == "claude"  # read as the agent including it
    assert reader("/p/notes.md") == "gemini"


def test_every_agent_loads_in_one_shape_and_finds_its_own_sections(root: Path) -> None:
    build_tree(root, {
        "home/.gemini": None, "repo/.git/objects": None, "repo/.git/refs": None,
        # A repository git itself recognises: GitHub Copilot CLI asks git for the root.
        "repo/.git/HEAD": "ref: refs/heads/main\n",
        "home/.gemini/trustedFolders.json": f'{{"{root}/repo": "TRUST_FOLDER"}}',
        "repo/GEMINI.md": "Gemini root\n", "repo/CLAUDE.md": "Claude root @./AGENTS.md\n",
        "repo/AGENTS.md": "Agents root\n", "repo/.claude/rules/py.md":
            "---\npaths: \"**/*.py\"\n---\nTyped.\n", "repo/src/app.py": "",
        # The conventions read the folder as their workspace: Cursor's rules, Antigravity's.
        "repo/src/.cursor/rules/style.mdc": "---\nalwaysApply: true\n---\nTabs.\n",
        "repo/src/.agents/rules/style.md": "Tabs.\n",
    })
    settings = MemorySettings(home=str(root / "home"))
    for agent in all_agents():
        # VS Code's chat works in the folder VS Code has open: the repository.
        folder = root / "repo" / ("" if agent.id == "vscode-chat" else "src")
        memory = agent.load(str(folder), settings,
                            target=str(root / "repo" / "src" / "app.py"))
        assert memory.agent == agent.id and memory.files, agent.id
        paths = [f.path for f in memory.files]
        sections = context_sections(memory.text, paths, agent.id)
        # every file an agent marks in its text (Codex and Copilot CLI name none of the files
        # they send at start)
        marked = [p for p in paths if agent.section_starts(p)]
        assert marked == (paths if agent.id not in ("codex", "copilot") else []), agent.id
        assert [s.path for s in sections] == marked, agent.id
    claude = agent_by_id("claude").load(str(root / "repo"), settings,
                                        target=str(root / "repo" / "src" / "app.py"))
    assert [Path(f.path).name for f in claude.files] == ["CLAUDE.md", "AGENTS.md", "py.md"]
    assert [(Path(f.path).name, f.label) for f in claude.listing] == [
        ("CLAUDE.md", "project"), ("AGENTS.md", "include"),
        ("py.md", "rule (paths: **/*.py)")]


def test_jit_sessions_have_one_shape(root: Path) -> None:
    from memlens.files.fsread import FileReader

    build_tree(root, {
        "home/.gemini": None, "repo/.git": None,
        "home/.gemini/trustedFolders.json": f'{{"{root}/repo": "TRUST_FOLDER"}}',
        "repo/GEMINI.md": "G\n", "repo/CLAUDE.md": "C\n",
        "repo/api/GEMINI.md": "API for Gemini\n", "repo/api/CLAUDE.md": "API for Claude\n",
        "repo/api/app.py": "",
    })
    settings = MemorySettings(home=str(root / "home"))
    target = str(root / "repo" / "api" / "app.py")
    added = {}
    for agent in all_agents():
        check = agent.check_workspace(settings, [str(root / "repo")],
                                      [str(root / "repo" / n) for n in
                                       agent.file_names(settings)], FileReader())
        session = agent.jit_session(settings, str(root / "repo"), FileReader(), check)
        if session is not None:
            first = session.load_for(target)
            assert session.load_for(target).files == []  # once per session
            added[agent.id] = [(f.path, f.content) for f in first.files]
    assert added == {
        "gemini": [(f"{root}/repo/api/GEMINI.md", "API for Gemini\n")],
        "claude": [(f"{root}/repo/api/CLAUDE.md", "API for Claude\n")],
        # GitHub Copilot CLI adds a folder's AGENTS.md, CLAUDE.md, GEMINI.md when a tool reads
        # a file there.
        "copilot": [(f"{root}/repo/api/CLAUDE.md", "API for Claude\n"),
                    (f"{root}/repo/api/GEMINI.md", "API for Gemini\n")],
        "vscode-chat": [],  # no instruction file here has an applyTo
        "cursor": [], "antigravity": [],  # no rules of theirs here
        # OpenCode adds a folder's first of AGENTS.md, CLAUDE.md, CONTEXT.md below where it works
        "opencode": [(f"{root}/repo/api/CLAUDE.md", "API for Claude\n")],
    }


def test_claude_path_ends_are_every_whitespace_character() -> None:
    from memlens.agents.claude.includes import _PATH_ENDS

    assert {c for c in map(chr, range(0x110000)) if c.isspace()} == _PATH_ENDS
