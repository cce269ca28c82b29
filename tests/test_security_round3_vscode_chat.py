"""Issue 30 (hostile input, round three), items 10 and 12 for VS Code chat: a repository's
`.vscode/settings.json` naming `chat.instructionsFilesLocations` outside itself (`..`,
`~/.ssh`, another folder, `/`), links out of an instructions folder, a walk without end, and
FIFOs or sockets where VS Code chat's files are expected (docs/security.md, "VS Code chat's
instruction locations").

The command-line tests run the real CLI (a subprocess each, with a timeout as the hang
guard); the walk's bounds are counted in-process (every folder `os.scandir` opens).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memlens.agents.vscode_chat.agent import VsCodeChatAgent
from memlens.model import MemorySettings

from .conftest import build_tree

MEMLENS = Path(sys.executable).parent / "memlens"
_SCRUBBED = ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
             "GEMINI_API_KEY", "GOOGLE_API_KEY", "MEMLENS_GEMINI_BASE_URL", "MEMLENS_AGENTS")
SSH_SECRET = "SSHKEYMATERIAL-round3"
OUTSIDE_SECRET = "OUTSIDEFOLDER-round3"
ABOVE_SECRET = "ABOVETHEREPO-round3"
HOME_RULE = "HOMERULE-round3"
# Each instruction file applies to every request: whatever is walked is also sent (and shown).
ALWAYS = '---\napplyTo: "**"\ndescription: {0}\n---\n{0}\n'
COMMANDS = (("show", "--json"), ("list", "--json"), ("check", "--format", "json"))


def run(*args: str, cwd: Path, home: Path, timeout: float = 60
        ) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    environ.update({"HOME": str(home), "GEMINI_CLI_HOME": str(home),
                    "XDG_CACHE_HOME": str(home / ".cache")})
    return subprocess.run([str(MEMLENS), *args], cwd=cwd, env=environ, capture_output=True,
                          stdin=subprocess.DEVNULL, text=True, timeout=timeout)


def sane(proc: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
    return proc.stdout + proc.stderr


@pytest.fixture
def tree(root: Path) -> Path:
    """root/ws (the repository), root/home (HOME, with a .ssh holding an instruction file),
    root/outside (a folder neither), an instruction file in root itself (above the repo)."""
    build_tree(root, {
        "ws/.git": None,
        "ws/AGENTS.md": "Project agents.\n",
        "ws/.github/instructions/own.instructions.md": ALWAYS.format("OWNRULE"),
        "home/.ssh/id.instructions.md": ALWAYS.format(SSH_SECRET),
        "home/.ssh/id_rsa": SSH_SECRET + "\n",
        "outside/o.instructions.md": ALWAYS.format(OUTSIDE_SECRET),
        "above.instructions.md": ALWAYS.format(ABOVE_SECRET),
    })
    return root


def hostile(root: Path, location: str) -> str:
    name = str(root / "outside") if location == "ABSOLUTE" else location
    build_tree(root, {"ws/.vscode/settings.json": json.dumps(
        {"chat.instructionsFilesLocations": {name: True}, "chat.useNestedAgentsMdFiles": True},
        indent=1)})
    return name


def outputs(root: Path, *flags: str) -> str:
    out = []
    for command in COMMANDS:
        proc = run(command[0], "ws", "--agent", "vscode-chat", *command[1:], *flags,
                   cwd=root, home=root / "home")
        out.append(sane(proc))
    return "\n".join(out)


def assert_nothing_outside(root: Path, text: str) -> None:
    for secret in (SSH_SECRET, OUTSIDE_SECRET, ABOVE_SECRET):
        assert secret not in text
    for path in ("home/.ssh/id.instructions.md", "outside/o.instructions.md",
                 "above.instructions.md"):
        assert str(root / path) not in text


@pytest.mark.parametrize("location", ["..", "~/.ssh", "ABSOLUTE"])
def test_an_untrusted_repository_names_no_location(tree: Path, location: str) -> None:
    """--untrusted: no value of the workspace's settings at all, so nothing outside is read
    (today's code ignored --untrusted for VS Code chat and read every file of the location)."""
    hostile(tree, location)
    text = outputs(tree, "--untrusted")
    assert_nothing_outside(tree, text)
    assert "OWNRULE" in text  # the repository's own instructions still show
    shown = json.loads(run("show", "ws", "--agent", "vscode-chat", "--json", "--untrusted",
                           cwd=tree, home=tree / "home").stdout)
    assert shown["settings"] == {}  # not even chat.useNestedAgentsMdFiles
    assert shown["notWalked"] == []  # the location was never named


@pytest.mark.parametrize("location", ["..", "~/.ssh", "ABSOLUTE"])
def test_a_trusted_repository_naming_an_outside_location_gets_it_shown_not_walked(
        tree: Path, location: str) -> None:
    name = hostile(tree, location)
    text = outputs(tree, "--trusted")
    assert_nothing_outside(tree, text)
    assert "OWNRULE" in text
    shown = json.loads(run("show", "ws", "--agent", "vscode-chat", "--json", "--trusted",
                           cwd=tree, home=tree / "home").stdout)
    [skipped] = shown["notWalked"]
    assert skipped["location"] == name
    assert skipped["namedIn"] == str(tree / "ws/.vscode/settings.json")
    assert "outside the workspace" in skipped["why"]
    [diagnostic] = [d for d in shown["diagnostics"] if d["code"] == "vscode-chat-location-outside"]
    assert diagnostic["severity"] == "warning" and diagnostic["line"] == 3
    check = run("check", "ws", "--agent", "vscode-chat", cwd=tree, home=tree / "home")
    assert "warning[vscode-chat-location-outside] not walked:" in check.stdout


def test_a_location_the_user_names_in_home_is_walked_one_the_repository_names_is_not(
        tree: Path) -> None:
    build_tree(tree, {
        "home/team-rules/t.instructions.md": ALWAYS.format(HOME_RULE),
        "home/.config/Code/User/settings.json": json.dumps(
            {"chat.instructionsFilesLocations": {"~/team-rules": True,
                                                 str(tree / "outside"): True}}),
    })
    hostile(tree, "~/.ssh")
    shown = json.loads(run("show", "ws", "--agent", "vscode-chat", "--json", cwd=tree,
                           home=tree / "home").stdout)
    assert HOME_RULE in shown["content"]
    assert str(tree / "home/team-rules/t.instructions.md") in shown["listed"]
    assert SSH_SECRET not in json.dumps(shown) and OUTSIDE_SECRET not in json.dumps(shown)
    why = {n["location"]: n["why"] for n in shown["notWalked"]}
    assert why == {"~/.ssh": "outside the workspace, and the workspace's own settings name it",
                   str(tree / "outside"): "outside the workspace and home"}
    severity = {d["message"].split(" ")[2]: d["severity"] for d in shown["diagnostics"]}
    assert severity == {str(tree / "home/.ssh"): "warning", str(tree / "outside"): "info"}


def test_links_never_lead_out_of_the_repository(tree: Path) -> None:
    """A default location that is a link out of the repository is not walked; a link in an
    instructions folder that leaves the repository is not followed; one inside it is."""
    build_tree(tree, {"ws/docs/shared.md": ALWAYS.format("SHAREDINREPO")})
    rules = tree / "ws/.github/instructions"
    os.symlink(tree / "home/.ssh/id.instructions.md", rules / "key.instructions.md")
    os.symlink("../../docs/shared.md", rules / "shared.instructions.md")
    os.symlink(tree / "outside", rules / "more")
    (tree / "ws/.claude").mkdir()
    os.symlink(tree / "home/.ssh", tree / "ws/.claude/rules")
    text = outputs(tree, "--trusted")
    assert_nothing_outside(tree, text)
    assert "SHAREDINREPO" in text and "OWNRULE" in text
    shown = json.loads(run("show", "ws", "--agent", "vscode-chat", "--json", cwd=tree,
                           home=tree / "home").stdout)
    why = {n["path"]: n["why"] for n in shown["notWalked"]}
    assert why == {
        str(tree / "ws/.claude/rules"): "a link out of the workspace",
        str(rules / "key.instructions.md"): "a link out of the folders its location may be "
                                            "read from",
        str(rules / "more"): "a link out of the folders its location may be read from"}


class Scans:
    """Every folder `os.scandir` opens (os.walk's included), counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.folders: list[str] = []
        real = os.scandir

        def scandir(path: Any = ".") -> Any:
            self.folders.append(os.fsdecode(path))
            return real(path)

        monkeypatch.setattr(os, "scandir", scandir)


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> Iterator[Scans]:
    yield Scans(monkeypatch)


def chat_settings(home: Path, **values: Any) -> MemorySettings:
    return MemorySettings(home=str(home), **values)


@pytest.mark.parametrize("location", ["/", "/proc", "/proc/self/cwd", "/sys", "/dev/..",
                                      "../../../../../../../../.."])
@pytest.mark.parametrize("trust", [{"trusted": False}, {"editor_trusted": False}, {}])
def test_the_disk_is_never_walked(tree: Path, scans: Scans, location: str,
                                  trust: dict[str, bool]) -> None:
    """`/` (or what resolves to it, /proc, /sys) is never walked, trusted or not, whoever
    names it: counted by the folders opened, not by the clock (today's code opened `/` and
    went on into /proc/*/cwd: 13-25 s)."""
    hostile(tree, location)
    build_tree(tree, {"home/.config/Code/User/settings.json": json.dumps(
        {"chat.instructionsFilesLocations": {location: True}})})
    memory = VsCodeChatAgent().load(str(tree / "ws"), chat_settings(tree / "home", **trust))
    assert "/" not in scans.folders
    assert not [f for f in scans.folders if f.startswith(("/proc", "/sys", "/dev"))]
    assert all(f.startswith(str(tree)) for f in scans.folders), scans.folders
    assert len(scans.folders) < 40
    assert "OWNRULE" in memory.text
    assert [n["why"] for n in memory.details["notWalked"]] == [  # type: ignore[union-attr]
        "a system folder (/, /proc, /sys and /dev are never walked)"]


def test_a_walk_stops_at_its_budget_and_says_so(tree: Path, scans: Scans,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.agents.vscode_chat import locations

    monkeypatch.setattr(locations, "MAX_ENTRIES", 30)
    monkeypatch.setattr(locations, "MAX_FOLDERS", 5)
    monkeypatch.setattr(locations, "MAX_LOCATIONS", 6)
    for n in range(40):
        build_tree(tree, {f"ws/.github/instructions/d{n:02}/r.instructions.md": "rule\n",
                          f"ws/pkg{n:02}/AGENTS.md": "nested\n"})
    user = tree / "home/.config/Code/User/settings.json"
    build_tree(tree, {"home/.config/Code/User/settings.json": json.dumps(
        {"chat.useNestedAgentsMdFiles": True,
         "chat.instructionsFilesLocations": {f"/nowhere/{n}": True for n in range(100)}})})
    memory = VsCodeChatAgent().load(str(tree / "ws"), chat_settings(tree / "home"))
    walked = [f for f in scans.folders if "/.github/instructions/" in f]
    assert len(walked) <= 30
    truncated = [d for d in memory.diagnostics if d.code == "vscode-chat-walk-truncated"]
    assert [(d.path, d.severity) for d in truncated] == [
        (str(user), "warning"), (str(tree / "ws/.github/instructions"), "warning"),
        (str(tree / "ws/.github/instructions/d02"), "warning")]  # the sixth folder
    assert "after 6 locations" in truncated[0].message
    assert "after 30 directory entries" in truncated[1].message
    assert "after 5 folders" in truncated[2].message
    assert len(memory.details["nestedAgents"]) < 5  # type: ignore[arg-type]
    # The six: the four defaults and two of the user's (not walked: outside both).
    assert len(memory.details["notWalked"]) == 2  # type: ignore[arg-type]


def test_the_editor_and_a_folder_verdict_untrust_the_workspace_settings(tree: Path) -> None:
    """The server's untrusted mode (the window's Restricted Mode, or a `folderTrust` entry
    that says no) reads no workspace value either."""
    hostile(tree, "..")
    for trust in ({"editor_trusted": False}, {"trusted": False},
                  {"editor_trusted": False, "trusted": True}):
        memory = VsCodeChatAgent().load(str(tree / "ws"), chat_settings(tree / "home", **trust))
        assert memory.details["settings"] == {} and memory.details["notWalked"] == []
        assert ABOVE_SECRET not in memory.text and "OWNRULE" in memory.text


def _fifo_tree(root: Path) -> None:
    build_tree(root, {"ws/.git": None, "ws/.github/instructions/ok.instructions.md":
                      ALWAYS.format("STILLSHOWN"), "ws/sub/keep.txt": "", "home/.ssh": None,
                      "home/.config/Code/User": None})
    ws = root / "ws"
    for fifo in (".github/instructions/x.instructions.md", ".vscode/settings.json",
                 "AGENTS.md", ".github/copilot-instructions.md", ".claude/rules",
                 "sub/AGENTS.md"):
        (ws / fifo).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(ws / fifo)
    os.mkfifo(root / "home/.config/Code/User/settings.json")
    os.symlink(ws / "AGENTS.md", ws / ".github/instructions/link.instructions.md")
    for where in ("CLAUDE.md", ".github/instructions/sock.instructions.md"):
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(root / "s"))  # a short path (AF_UNIX's limit), then moved
        os.rename(root / "s", ws / where)


def test_fifos_and_sockets_where_files_are_expected_never_hang_or_crash(root: Path) -> None:
    """Item 12: a FIFO or socket as an instruction file, a settings file (the workspace's and
    the user's), an AGENTS.md, an instructions folder, a link to a FIFO: `show`, `list` and
    `check` answer (the subprocess timeout is the hang guard) and the rest still shows."""
    _fifo_tree(root)
    for flags in ((), ("--untrusted",)):
        text = outputs(root, *flags)
        assert "STILLSHOWN" in text
    check = run("check", "ws", "--agent", "vscode-chat", cwd=root, home=root / "home")
    assert "warning[agent-config-invalid]" in check.stdout


def test_fifos_never_hang_the_nested_agents_search_in_process(root: Path) -> None:
    _fifo_tree(root)
    (root / "ws/.vscode/settings.json").unlink()
    (root / "ws/.vscode/settings.json").write_text('{"chat.useNestedAgentsMdFiles": true}')
    memory = VsCodeChatAgent().load(str(root / "ws"), chat_settings(root / "home"))
    assert "STILLSHOWN" in memory.text
    # Listed by name for the model (VS Code's file search does), never opened.
    assert str(root / "ws/sub/AGENTS.md") in memory.details["nestedAgents"]  # type: ignore[operator]
