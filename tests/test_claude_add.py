"""`memlens add --agent claude`, the real command as a subprocess in a throw-away HOME: a topic
file in Claude Code's auto-memory folder, in the format Claude Code 2.1.330's `# Memory`
section asks for (frontmatter `name`, `description`, `metadata:` → `type:`), and its pointer
line in MEMORY.md (`- [Title](file.md) — hook`); never a byte under ~/.gemini."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from .conftest import build_tree
from .test_cli import memlens

FACT = "Run the tests with make test, never pytest directly"


@pytest.fixture
def ws(root: Path) -> Path:
    build_tree(root, {"home": None, "proj/.git": None, "proj/CLAUDE.md": "Project notes\n"})
    return root


def memory_folder(ws: Path, home: Path | None = None) -> Path:
    """Claude Code's folder for the project: HOME/.claude/projects/<its path, every character
    but letters and digits turned into `-`>/memory."""
    slug = re.sub(r"[^a-zA-Z0-9]", "-", str(ws / "proj"))
    return (home or ws / "home") / ".claude" / "projects" / slug / "memory"


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()} if folder.exists() else {}


def frontmatter(text: str) -> dict[str, object]:
    head, _, _ = text.removeprefix("---\n").partition("\n---\n")
    data = yaml.safe_load(head)
    assert isinstance(data, dict)
    return data


def add(ws: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return memlens("add", "--agent", "claude", *args, cwd=ws / "proj", home=ws / "home",
                   env=env)


def test_add_writes_a_topic_file_and_its_pointer(ws: Path) -> None:
    run = add(ws, FACT, "--type", "feedback", "--json")
    assert run.code == 0, run.err
    result = run.json()
    assert isinstance(result, dict)
    folder = memory_folder(ws)
    topic = folder / "run-the-tests-with-make-test.md"
    assert result["path"] == str(topic)
    text = topic.read_text()
    assert frontmatter(text) == {"name": "run-the-tests-with-make-test",
                                 "description": FACT, "metadata": {"type": "feedback"}}
    assert text.endswith(f"\n---\n\n{FACT}\n")
    index = (folder / "MEMORY.md").read_text()
    assert index == (f"- [run-the-tests-with-make-test]"
                     f"(run-the-tests-with-make-test.md) \u2014 {FACT}\n")
    # Nothing else, and nothing for Gemini CLI.
    assert sorted(files_under(folder)) == ["MEMORY.md", topic.name]
    assert not (ws / "home" / ".gemini").exists()
    # Claude Code's view of the folder now lists it, typed, and finds nothing to warn about.
    show = memlens("show", "--agent", "claude", "--json", cwd=ws / "proj", home=ws / "home")
    facts = show.json()
    assert isinstance(facts, dict)
    assert [(t["name"], t["type"]) for t in facts["autoMemory"]["topics"]] == [
        ("run-the-tests-with-make-test", "feedback")]
    assert not [d for d in facts["diagnostics"] if d["path"].startswith(str(folder))]


def test_a_made_up_name_in_use_is_suffixed_a_chosen_one_refused(ws: Path) -> None:
    assert add(ws, FACT).code == 0
    second = add(ws, FACT + ", ever")
    assert second.code == 0, second.err
    folder = memory_folder(ws)
    assert (folder / "run-the-tests-with-make-test-2.md").is_file()
    assert "name: run-the-tests-with-make-test-2\n" in (
        folder / "run-the-tests-with-make-test-2.md").read_text()
    before = files_under(folder)
    refused = add(ws, "Another fact", "--name", "run-the-tests-with-make-test")
    assert refused.code == 1
    assert "exists already" in refused.err
    assert files_under(folder) == before


def test_existing_index_is_kept_and_the_line_appended(ws: Path) -> None:
    folder = memory_folder(ws)
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_bytes(b"- [old](old.md) \xe2\x80\x94 kept as it is")
    (folder / "old.md").write_text("---\nname: old\ndescription: d\nmetadata:\n  type: user\n"
                                   "---\n\nOld.\n")
    run = add(ws, "Deploys go out on Tuesdays", "--name", "deploy-day", "--description",
              "When we deploy: the day, and: why", "--type", "project")
    assert run.code == 0, run.err
    assert (folder / "MEMORY.md").read_text() == (
        "- [old](old.md) \u2014 kept as it is\n"
        "- [deploy-day](deploy-day.md) \u2014 When we deploy: the day, and: why\n")
    # A description YAML would misread is quoted, and reads back as written.
    assert frontmatter((folder / "deploy-day.md").read_text())["description"] == (
        "When we deploy: the day, and: why")


@pytest.mark.parametrize(("env", "settings", "said"), [
    ({"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, None, "CLAUDE_CODE_DISABLE_AUTO_MEMORY"),
    ({}, {"autoMemoryEnabled": False}, "autoMemoryEnabled is false in"),
])
def test_refused_when_auto_memory_is_off(ws: Path, env: dict[str, str],
                                         settings: dict[str, object] | None, said: str) -> None:
    if settings is not None:
        (ws / "proj" / ".claude").mkdir()
        (ws / "proj" / ".claude" / "settings.json").write_text(json.dumps(settings))
    run = add(ws, FACT, env=env)
    assert run.code == 1
    assert "auto memory is off" in run.err and said in run.err
    assert not (ws / "home" / ".claude").exists()
    assert not (ws / "home" / ".gemini").exists()


def test_a_moved_folder_is_where_it_goes(ws: Path) -> None:
    elsewhere = ws / "notes" / "claude-memory"
    build_tree(ws, {"home/.claude/settings.json": json.dumps(
        {"autoMemoryDirectory": str(elsewhere)})})
    run = add(ws, "The staging database is read-only", "--type", "reference")
    assert run.code == 0, run.err
    assert sorted(files_under(elsewhere)) == ["MEMORY.md", "the-staging-database-is-read-only.md"]
    assert not memory_folder(ws).exists()


@pytest.mark.parametrize(("args", "said"), [
    (["--name", "Not A Slug"], "not a kebab-case slug"),
    (["--type", "opinion"], "invalid choice: 'opinion'"),
    (["--scope", "project"], "--scope and --memory-manager are Gemini CLI's"),
])
def test_bad_options_are_refused_and_nothing_is_written(ws: Path, args: list[str],
                                                        said: str) -> None:
    run = add(ws, FACT, *args)
    assert run.code in (1, 2)
    assert said in run.err
    assert not (ws / "home" / ".claude").exists()
