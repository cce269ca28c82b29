"""`memlens check --agent claude` on Claude Code's `[[name]]` links, through the real command: a
link naming no memory yet is information (`memory-link-dangling`), never a warning or an
error, so the exit status stays 0; a link naming a memory (at any depth of the folder, written
with spaces inside the brackets or not) is nothing to report."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import build_tree
from .test_claude_add import memory_folder
from .test_cli import memlens


def topic(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: d\nmetadata:\n  type: user\n---\n\n{body}\n"


def test_check_reports_a_dangling_link_as_information(root: Path) -> None:
    build_tree(root, {"home": None, "proj/.git": None, "proj/CLAUDE.md": "Notes\n"})
    folder = memory_folder(root)
    build_tree(folder, {
        "a.md": topic("first", "See [[ second ]] and [[third]], later [[not-yet]]."),
        "sub/b.md": topic("second", "Back to [[first]]."),
        "c.md": topic("third", "Nothing."),
        "MEMORY.md": "- [a](a.md) — d\n- [b](sub/b.md) — d\n- [c](c.md) — d\n",
    })
    run = memlens("check", "--agent", "claude", "--format", "json", cwd=root / "proj",
                  home=root / "home")
    assert run.code == 0, run.err
    found = [(Path(d["path"]).name, d["line"], d["col"], d["severity"], d["code"])
             for d in json.loads(run.out) if d["path"].startswith(str(folder))]
    line = "See [[ second ]] and [[third]], later [[not-yet]]."
    assert found == [("a.md", 8, line.index("not-yet") + 1, "info", "memory-link-dangling")]
