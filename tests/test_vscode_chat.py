"""`vscode-chat`: what VS Code 1.139's chat agent (GitHub Copilot Chat 0.67) attaches from
instruction files, under each of its settings. The expected texts are what the real chat sent
for the same trees (tests/e2e/vscode-chat-oracle/trees.py, run by hand: about 30 s a tree)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memlens.agents.vscode_chat.discovery import load_chat, render_attachment
from memlens.agents.vscode_chat.globs import applies

from .conftest import build_tree
from .test_cli import memlens


def settings(root: Path, values: dict[str, object]) -> None:
    build_tree(root, {"ws/.vscode/settings.json": json.dumps(values)})


def sent_paths(root: Path, **kwargs: object) -> list[str]:
    load = load_chat(str(root / "ws"), str(root / "home"), **kwargs)  # type: ignore[arg-type]
    return [str(Path(a.path).relative_to(root)) for a in load.attached]


@pytest.fixture
def tree(root: Path) -> Path:
    build_tree(root, {
        "home/.copilot/copilot-instructions.md": "Home copilot.\n",
        "home/.claude/CLAUDE.md": "Home claude.\n",
        "ws/.git": None,
        "ws/AGENTS.md": "# Project\nUse tabs.\n\n",
        "ws/.github/copilot-instructions.md": "Copilot rule.\n",
        "ws/CLAUDE.md": "Claude root.\n",
        "ws/CLAUDE.local.md": "Claude local.\n",
        "ws/.claude/CLAUDE.md": "Claude dot folder.\n",
        "ws/.github/instructions/python.instructions.md":
            '---\napplyTo: "**/*.py"\ndescription: Python rules\n---\nUse type hints.\n',
        "ws/.github/instructions/always.instructions.md": '---\napplyTo: "**"\n---\nAlways on.\n',
        "ws/.claude/rules/src.md": '---\npaths:\n  - "src/**"\n---\nClaude rule for src.\n',
        "ws/sub/AGENTS.md": "Nested agents.\n",
        "ws/src/app.py": "print(1)\n",
    })
    return root


def test_the_default_order_and_frame(tree: Path) -> None:
    """Applying files first, then copilot-instructions.md files, then the rest sorted as
    `localeCompare` sorts their URIs; each whole and trimmed."""
    load = load_chat(str(tree / "ws"), str(tree / "home"), attached=[str(tree / "ws/src/app.py")])
    assert [str(Path(a.path).relative_to(tree)) for a in load.attached] == [
        "ws/.github/instructions/always.instructions.md",
        "ws/.github/instructions/python.instructions.md",
        "ws/.claude/rules/src.md",
        "home/.copilot/copilot-instructions.md",
        "ws/.github/copilot-instructions.md",
        "home/.claude/CLAUDE.md",
        "ws/.claude/CLAUDE.md",
        "ws/AGENTS.md",
        "ws/CLAUDE.local.md",
        "ws/CLAUDE.md",
    ]
    agents = tree / "ws/AGENTS.md"
    assert load.attachments()[7] == (f'<attachment filePath="{agents}">\n# Project\nUse tabs.\n'
                                     "</attachment>\n")
    python = tree / "ws/.github/instructions/python.instructions.md"
    assert load.attachments()[1] == render_attachment(str(python), python.read_text().strip())
    # Without the attached file only the always-pattern applies.
    assert sent_paths(tree)[:2] == ["ws/.github/instructions/always.instructions.md",
                                    "home/.copilot/copilot-instructions.md"]


def test_the_index_lists_every_instruction_file(tree: Path) -> None:
    load = load_chat(str(tree / "ws"), str(tree / "home"))
    index = load.render_index()
    assert index.startswith("<instructions>\nHere is a list of instruction files")
    python = tree / "ws/.github/instructions/python.instructions.md"
    assert (f"<instruction>\n<file>{python}</file>\n<description>Python rules</description>\n"
            "<applyTo>**/*.py</applyTo>\n</instruction>\n") in index
    assert f"<file>{tree / 'ws/.claude/rules/src.md'}</file>\n<applyTo>src/**</applyTo>" in index
    assert index.endswith("</instruction>\n</instructions>\n")
    assert "sub/AGENTS.md" not in index  # chat.useNestedAgentsMdFiles is off by default


def test_use_instruction_files_off(tree: Path) -> None:
    settings(tree, {"github.copilot.chat.codeGeneration.useInstructionFiles": False})
    paths = sent_paths(tree)
    assert not [p for p in paths if p.endswith("copilot-instructions.md")]
    load = load_chat(str(tree / "ws"), str(tree / "home"))
    assert (str(tree / "ws/.github/copilot-instructions.md"),
            "github.copilot.chat.codeGeneration.useInstructionFiles") in load.disabled


def test_use_agents_md_off(tree: Path) -> None:
    settings(tree, {"chat.useAgentsMdFile": False, "chat.useNestedAgentsMdFiles": True})
    assert "ws/AGENTS.md" not in sent_paths(tree)
    # The nested list needs both settings.
    assert load_chat(str(tree / "ws"), str(tree / "home")).nested_agents == []


def test_use_nested_agents_md_on(tree: Path) -> None:
    settings(tree, {"chat.useNestedAgentsMdFiles": True})
    load = load_chat(str(tree / "ws"), str(tree / "home"))
    assert load.nested_agents == [str(tree / "ws/AGENTS.md"), str(tree / "ws/sub/AGENTS.md")]
    parts = load.index_parts()
    assert parts[-3:] == [
        f"<instruction>\n<file>{tree / 'ws/AGENTS.md'}</file>\n"
        "<description>Instructions for the workspace</description>\n</instruction>\n",
        f"<instruction>\n<file>{tree / 'ws/sub/AGENTS.md'}</file>\n"
        "<description>Instructions for folder 'sub'</description>\n</instruction>\n",
        "</instructions>\n"]
    assert "ws/sub/AGENTS.md" not in sent_paths(tree)  # listed, never attached


def test_use_claude_md_off(tree: Path) -> None:
    settings(tree, {"chat.useClaudeMdFile": False})
    assert not [p for p in sent_paths(tree) if "CLAUDE" in p]


def test_include_applying_instructions_off(tree: Path) -> None:
    settings(tree, {"chat.includeApplyingInstructions": False})
    paths = sent_paths(tree, attached=[str(tree / "ws/src/app.py")])
    assert not [p for p in paths if "instructions/" in p or "rules/" in p]
    # Still listed for the model to read.
    assert len(load_chat(str(tree / "ws"), str(tree / "home")).instructions) == 3


def test_instructions_files_locations(tree: Path) -> None:
    build_tree(tree, {"ws/docs/rules/a.instructions.md": '---\napplyTo: "**"\n---\nDocs.\n'})
    before = sent_paths(tree)
    assert "ws/docs/rules/a.instructions.md" not in before
    settings(tree, {"chat.instructionsFilesLocations": {"docs/rules": True,
                                                        ".github/instructions": False}})
    after = sent_paths(tree)
    assert "ws/docs/rules/a.instructions.md" in after
    assert "ws/.github/instructions/always.instructions.md" not in after


def test_customizations_in_parent_repositories(tree: Path) -> None:
    build_tree(tree, {"ws/sub/pkg/keep.txt": ""})
    sub = tree / "ws/sub/pkg"
    alone = load_chat(str(sub), str(tree / "home"))
    assert str(tree / "ws/AGENTS.md") not in [a.path for a in alone.attached]
    build_tree(tree, {"ws/sub/pkg/.vscode/settings.json":
                      '{"chat.useCustomizationsInParentRepositories": true}'})
    up = load_chat(str(sub), str(tree / "home"))
    assert str(tree / "ws/AGENTS.md") in [a.path for a in up.attached]


def test_user_settings_under_workspace_settings_and_trust(tree: Path) -> None:
    build_tree(tree, {"home/.config/Code/User/settings.json": '{"chat.useClaudeMdFile": false}'})
    assert not [p for p in sent_paths(tree) if "CLAUDE" in p]
    # The workspace's settings win (JSON with comments and a trailing comma, as VS Code reads).
    build_tree(tree, {"ws/.vscode/settings.json":
                      '{\n // on again\n "chat.useClaudeMdFile": true,\n}'})
    assert [p for p in sent_paths(tree) if "CLAUDE" in p]
    # ... except in a window that is not trusted: VS Code ignores them there.
    assert not [p for p in sent_paths(tree, trusted=False) if "CLAUDE" in p]


def test_unreadable_settings_are_reported(tree: Path) -> None:
    build_tree(tree, {"ws/.vscode/settings.json": '{"chat.useClaudeMdFile": '})
    home = tree / "home"
    run = memlens("check", "ws", "--agent", "vscode-chat", cwd=tree, home=home)
    assert "warning[agent-config-invalid]" in run.out
    assert "ws/CLAUDE.md" in "".join(sent_paths(tree))  # the defaults stand


def test_what_is_left_out(root: Path) -> None:
    build_tree(root, {
        "home": None, "ws/.git": None,
        "ws/agents.md": "Same text.\n",  # a name in any case
        "ws/CLAUDE.md": "Same text.\n",  # the same trimmed text: sent once
        "ws/.github/copilot-instructions.md": "  \n\n",  # blank
    })
    os.symlink("agents.md", root / "ws/CLAUDE.local.md")  # a link to a file already sent
    load = load_chat(str(root / "ws"), str(root / "home"))
    assert [a.path for a in load.attached] == [str(root / "ws/agents.md")]
    why = dict(load.left_out)
    assert why[str(root / "ws/CLAUDE.md")].startswith("the same text as")
    assert why[str(root / "ws/.github/copilot-instructions.md")] == "blank"
    assert why[str(root / "ws/CLAUDE.local.md")].startswith("a link to")


def test_a_bom_hides_the_frontmatter(root: Path) -> None:
    """VS Code reads no frontmatter after a byte-order mark (CRLF lines are fine)."""
    build_tree(root, {"home": None, "ws/README.md": "# r\n"})
    folder = root / "ws/.github/instructions"
    folder.mkdir(parents=True)
    (folder / "bom.instructions.md").write_bytes(
        b'\xef\xbb\xbf---\r\napplyTo: "**"\r\n---\r\nBOM.\r\n')
    (folder / "crlf.instructions.md").write_bytes(b'---\r\napplyTo: "**"\r\n---\r\nCRLF.\r\n')
    load = load_chat(str(root / "ws"), str(root / "home"))
    assert [Path(a.path).name for a in load.attached] == ["crlf.instructions.md"]
    assert load.attached[0].text == '---\r\napplyTo: "**"\r\n---\r\nCRLF.'
    run = memlens("check", "ws", "--agent", "vscode-chat", cwd=root, home=root / "home")
    assert "bom.instructions.md:1:1: warning[agent-ignores-file]" in run.out


@pytest.mark.parametrize(("apply_to", "files", "matched"), [
    ("**/*.py", ["/w/src/app.py"], "**/*.py"),
    ("src/**", ["/w/src/app.py"], "**/src/**"),  # relative: `**/` in front
    ("*.ts, *.md", ["/w/README.md"], "**/*.md"),  # a comma list
    ("{lib,src}/**", ["/w/src/a.py"], "**/{lib,src}/**"),  # a comma inside braces
    ("*.PY", ["/w/a.py"], "**/*.PY"),  # case ignored
    ("**", [], "**"),  # an always-pattern needs no file
    ("**/*.ts", ["/w/README.md"], None),
    (" , ", ["/w/a"], None),
])
def test_apply_to_patterns(apply_to: str, files: list[str], matched: str | None) -> None:
    hit = applies(apply_to, files)
    assert (hit[0] if hit else None) == matched


def test_the_cli_covers_vscode_chat(tree: Path) -> None:
    home = tree / "home"
    shown = json.loads(memlens("show", "ws", "--agent", "vscode-chat", "--json", cwd=tree,
                               home=home).out)
    assert shown["agent"] == "vscode-chat" and shown["verified"] is False
    assert shown["payloads"][0].startswith("<instructions>\nHere is a list")
    assert f'<attachment filePath="{tree / "ws/AGENTS.md"}">' in shown["content"]
    listed = memlens("list", "ws", "--agent", "vscode-chat", cwd=tree, home=home).out
    assert "listed" in listed and "python.instructions.md" in listed
    jit = memlens("jit", "--agent", "vscode-chat", "--cwd", "ws", "ws/src/app.py", cwd=tree,
                  home=home).out
    assert "python.instructions.md" in jit and "always.instructions.md" not in jit
    # Side by side: a `.github/instructions` folder brings VS Code's chat in.
    sections = [line for line in memlens("show", "ws", cwd=tree, home=home).out.splitlines()
                if line.startswith("==> ")]
    assert "==> VS Code chat (vscode-chat@1.139) <==" in sections


def test_diff_covers_vscode_chat(tree: Path) -> None:
    from .test_diff_cli import git

    repo = tree / "ws"
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / ".github/copilot-instructions.md").write_text("Copilot rule.\nAnd a new one.\n")
    run = memlens("diff", "--agent", "vscode-chat", cwd=repo, home=tree / "home")
    assert run.code == 1, run.err
    assert "+And a new one." in run.out
    assert "\n  VS Code chat (vscode-chat@" in run.out  # the agent it reaches, under the change


def test_home_changes_that_matter(root: Path) -> None:
    from memlens.agents.vscode_chat.agent import VsCodeChatAgent

    agent, home = VsCodeChatAgent(), str(root)
    assert agent.home_folder(home) == f"{root}/.copilot"
    assert agent.home_change_matters(f"{root}/.copilot/copilot-instructions.md", home)
    assert agent.home_change_matters(f"{root}/.copilot/instructions/a.instructions.md", home)
    assert not agent.home_change_matters(f"{root}/.copilot/session-state/x.json", home)
    assert agent.home_change_matters(f"{root}/.claude/CLAUDE.md", home)  # not its folder
