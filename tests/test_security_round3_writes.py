"""Issue 30 (round three), items 4 and 5: Claude Code's memory is written only where the user
chose (docs/security.md, "Claude Code's memory folder").

4. A repository's own `.claude/settings.json` (or `settings.local.json`) naming
   `autoMemoryDirectory: "~/.ssh"` made `memlens add --agent claude` create ~/.ssh and write
   there, without a word. Now: exit 2 and one line naming the folder and the settings file,
   nothing created, unless `--allow-repository-memory-folder` confirms it.
5. A MEMORY.md in the memory folder that is a symbolic link to ~/.bashrc got the pointer line
   appended to ~/.bashrc. Now every write of Claude memory follows no link (any component), and
   writes only a regular file or none; a FIFO is never opened.

The real command as a subprocess in a throw-away HOME; the memory manager with the fake model;
the language server's side is in tests/lsp/test_security_round3_writes.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlens.agent.memory_manager import manage_memory
from memlens.files.atomic import atomic_write
from memlens.protocol.chat import ApprovalRequest, ApprovalResponse, ChatEvent

from .conftest import build_tree
from .fake_gemini import FakeGemini, function_call, text
from .test_cli import MEMLENS, Run
from .test_security_tools import KEY, context

FACT = "Deploys go out on Tuesdays"
SLUG = "deploys-go-out-on-tuesdays"
BASHRC = "export PATH=$HOME/bin:$PATH\n"
FLAG = "--allow-repository-memory-folder"


@pytest.fixture
def ws(root: Path) -> Path:
    build_tree(root, {"home/.bashrc": BASHRC, "proj/.git": None, "proj/CLAUDE.md": "Notes\n",
                      "outside": None})
    return root


def add(ws: Path, *args: str, timeout: float = 60) -> Run:
    """`memlens add --agent claude …` in ws/proj with HOME = ws/home, no Claude variables."""
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith("CLAUDE_") and k not in ("GEMINI_CLI_HOME",)}
    environ["HOME"] = str(ws / "home")
    proc = subprocess.run([str(MEMLENS), "add", "--agent", "claude", *args], cwd=ws / "proj",
                          env=environ, capture_output=True, stdin=subprocess.DEVNULL,
                          text=True, timeout=timeout)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def repository_chooses(ws: Path, value: str, file: str = "settings.json") -> Path:
    settings = ws / "proj" / ".claude" / file
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"autoMemoryDirectory": value}))
    return settings


def default_folder(ws: Path) -> Path:
    slug = re.sub(r"[^a-zA-Z0-9]", "-", str(ws / "proj"))
    return ws / "home" / ".claude" / "projects" / slug / "memory"


def snapshot(folder: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under `folder` (links as links, not followed) with what it holds."""
    out: dict[str, tuple[str, bytes | str]] = {}
    for base, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(base) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                out[str(path.relative_to(folder))] = ("link", os.readlink(path))
            elif stat.S_ISREG(mode):
                out[str(path.relative_to(folder))] = ("file", path.read_bytes())
            else:
                out[str(path.relative_to(folder))] = ("other", "")
    return out


# --- 4. a folder the repository chose -------------------------------------------------------

@pytest.mark.parametrize(("file", "value"), [
    ("settings.json", "~/.ssh"),
    ("settings.local.json", "~/.ssh"),
    ("settings.json", "ABSOLUTE"),
])
def test_a_folder_the_repository_chose_is_refused_and_nothing_is_created(
        ws: Path, file: str, value: str) -> None:
    target = ws / "home" / ".ssh" if value == "~/.ssh" else ws / "outside" / "memory"
    settings = repository_chooses(ws, str(target) if value == "ABSOLUTE" else value, file)
    home_before = snapshot(ws / "home")
    run = add(ws, FACT)
    assert run.code == 2, (run.out, run.err)
    lines = run.err.splitlines()
    assert len(lines) == 1, run.err
    assert str(target) in lines[0] and str(settings) in lines[0] and FLAG in lines[0]
    assert not target.exists()
    assert snapshot(ws / "home") == home_before
    assert snapshot(ws / "outside") == {}


def test_the_refusal_in_json_says_who_chose_the_folder(ws: Path) -> None:
    settings = repository_chooses(ws, "~/.ssh")
    run = add(ws, FACT, "--json")
    assert run.code == 2
    answer = run.json()
    assert isinstance(answer, dict)
    assert (answer["success"], answer["folder"], answer["chosenBy"], answer["chosenIn"]) == (
        False, str(ws / "home" / ".ssh"), "repository", str(settings))
    assert not (ws / "home" / ".ssh").exists()


def test_the_flag_confirms_the_folder_the_repository_chose(ws: Path) -> None:
    settings = repository_chooses(ws, "~/.ssh")
    run = add(ws, FACT, FLAG, "--json")
    assert run.code == 0, run.err
    answer = run.json()
    assert isinstance(answer, dict)
    assert (answer["chosenBy"], answer["chosenIn"]) == ("repository", str(settings))
    ssh = ws / "home" / ".ssh"
    assert sorted(p.name for p in ssh.iterdir()) == ["MEMORY.md", f"{SLUG}.md"]
    assert f"({SLUG}.md)" in (ssh / "MEMORY.md").read_text()


def test_a_folder_the_users_own_settings_name_needs_no_flag(ws: Path) -> None:
    elsewhere = ws / "outside" / "claude-memory"
    build_tree(ws, {"home/.claude/settings.json": json.dumps(
        {"autoMemoryDirectory": str(elsewhere)})})
    run = add(ws, FACT, "--json")
    assert run.code == 0, run.err
    answer = run.json()
    assert isinstance(answer, dict)
    assert (answer["chosenBy"], answer["chosenIn"]) == (
        "user", str(ws / "home" / ".claude" / "settings.json"))
    assert sorted(p.name for p in elsewhere.iterdir()) == ["MEMORY.md", f"{SLUG}.md"]


def test_the_default_folder_needs_no_flag_and_says_so(ws: Path) -> None:
    run = add(ws, FACT, "--json")
    assert run.code == 0, run.err
    answer = run.json()
    assert isinstance(answer, dict)
    assert (answer["chosenBy"], answer["chosenIn"]) == ("default", None)
    assert (default_folder(ws) / f"{SLUG}.md").is_file()


# --- 5. links and special files ---------------------------------------------------------------

@pytest.mark.parametrize("where", ["default", "repository"])
@pytest.mark.parametrize("dangling", [False, True], ids=["to-bashrc", "dangling"])
def test_a_memory_md_that_is_a_link_is_never_written_through(
        ws: Path, where: str, dangling: bool) -> None:
    folder = default_folder(ws) if where == "default" else ws / "proj" / "memory"
    folder.mkdir(parents=True)
    target = ws / "home" / ("new-file" if dangling else ".bashrc")
    (folder / "MEMORY.md").symlink_to(target)
    flags = []
    if where == "repository":
        repository_chooses(ws, str(folder))
        flags = [FLAG]
    run = add(ws, FACT, *flags)
    assert run.code == 1, (run.out, run.err)
    assert "symbolic link" in run.err
    assert (ws / "home" / ".bashrc").read_text() == BASHRC
    assert not (ws / "home" / "new-file").exists()
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md"]  # no topic file left


@pytest.mark.parametrize("link", ["repository-subfolder", "default-project-folder"])
def test_a_parent_folder_that_is_a_link_is_never_followed(ws: Path, link: str) -> None:
    out = ws / "outside"
    if link == "repository-subfolder":
        (ws / "proj" / "notes").symlink_to(out)
        repository_chooses(ws, str(ws / "proj" / "notes" / "memory"))
        flags = [FLAG]
    else:
        project = default_folder(ws).parent
        project.parent.mkdir(parents=True)
        project.symlink_to(out)
        flags = []
    run = add(ws, FACT, *flags)
    assert run.code == 1, (run.out, run.err)
    assert "symbolic link" in run.err and "follows no link" in run.err
    assert snapshot(out) == {}


def test_a_topic_file_that_is_a_link_is_never_written_through(ws: Path) -> None:
    folder = default_folder(ws)
    folder.mkdir(parents=True)
    secret = ws / "outside" / "keep.md"
    secret.write_text("keep\n")
    (folder / "chosen.md").symlink_to(secret)
    (folder / f"{SLUG}.md").symlink_to(ws / "outside" / "created.md")  # dangling
    chosen = add(ws, FACT, "--name", "chosen")
    assert chosen.code == 1 and "exists already" in chosen.err
    made = add(ws, FACT)
    assert made.code == 0, made.err
    assert (folder / f"{SLUG}-2.md").is_file() and not (folder / f"{SLUG}-2.md").is_symlink()
    assert secret.read_text() == "keep\n"
    assert not (ws / "outside" / "created.md").exists()
    assert sorted(p.name for p in (ws / "outside").iterdir()) == ["keep.md"]


def test_a_fifo_as_memory_md_never_hangs(ws: Path) -> None:
    folder = default_folder(ws)
    folder.mkdir(parents=True)
    os.mkfifo(folder / "MEMORY.md")
    try:
        run = add(ws, FACT, timeout=30)  # a hang guard: the run ends at once
    except subprocess.TimeoutExpired:
        pytest.fail("memlens add --agent claude hung on a FIFO named MEMORY.md")
    assert run.code == 1
    assert "FIFO" in run.err
    assert stat.S_ISFIFO((folder / "MEMORY.md").lstat().st_mode)
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md"]


@pytest.mark.parametrize("kind", ["fifo", "link-to-fifo", "folder"])
def test_an_atomic_write_never_replaces_what_is_not_a_regular_file(root: Path,
                                                                   kind: str) -> None:
    fifo = root / "pipe"
    os.mkfifo(fifo)
    path = {"fifo": fifo, "link-to-fifo": root / "link", "folder": root / "dir"}[kind]
    if kind == "link-to-fifo":
        path.symlink_to(fifo)
    elif kind == "folder":
        path.mkdir()
    with pytest.raises(OSError) as raised:
        atomic_write(str(path), "text\n")
    assert "not a regular file" in str(raised.value)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert path.is_dir() if kind == "folder" else stat.S_ISFIFO(path.stat().st_mode)
    assert sorted(p.name for p in root.iterdir()) == sorted({"pipe", path.name})


# --- the chat's memory manager ----------------------------------------------------------------

@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(expect_key=KEY) as server:
        yield server


@pytest.fixture
def manager_ws(root: Path) -> Path:
    build_tree(root, {"ws/.git": None, "ws/GEMINI.md": "# Rules\n",
                      "home/.gemini/GEMINI.md": "Global.\n"})
    (root / "home" / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(root / "ws"): "TRUST_FOLDER"}))
    return root / "ws"


def test_the_memory_manager_never_writes_into_a_folder_the_repository_chose(
        manager_ws: Path, fake: FakeGemini) -> None:
    ws = manager_ws
    chosen = ws / "claude-memory"
    chosen.mkdir()
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps(
        {"autoMemoryDirectory": str(chosen)}))
    fake.enqueue(function_call("write_file", {"file_path": str(chosen / "CLAUDE.md"),
                                              "content": "Always push to main.\n"}),
                 function_call("write_file", {"file_path": str(ws / "GEMINI.md"),
                                              "content": "# Rules\n- deploys on Tuesdays\n"}),
                 text("Saved to GEMINI.md."))
    # A Gemini CLI user who also reads CLAUDE.md files (context.fileName), so a CLAUDE.md in
    # the folder is a file the manager may write — but not in a folder the repository chose.
    agent_context = context(ws, fake, memory_manager=True)
    agent_context.settings.context_file_names[:] = ["GEMINI.md", "CLAUDE.md"]
    asked: list[ApprovalRequest] = []

    async def emit(event: ChatEvent) -> None:
        return None

    async def approve(request: ApprovalRequest) -> ApprovalResponse:
        asked.append(request)
        return ApprovalResponse(outcome="approveAlways")

    status, _ = asyncio.run(manage_memory(agent_context, FACT, None, emit, approve))
    assert status == "done"
    assert not (chosen / "CLAUDE.md").exists()
    error = fake.requests[1].function_responses[-1]["response"].get("error", "")
    assert "the repository chose it" in error and str(chosen) in error, error
    assert FLAG in error
    # Only the write it may make was put to the user, and made.
    assert [a.args["file_path"] for a in asked] == [str(ws / "GEMINI.md")]
    assert "deploys on Tuesdays" in (ws / "GEMINI.md").read_text()
