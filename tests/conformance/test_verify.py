"""`memlens verify` with the real agents (issue 20): each installed agent run offline on the
user's own workspace says "identical" on the demo and on real repositories, never writes the
user's files, and shows a unified diff when what the agent sent is not what was predicted.

The agents are the harness's (tests/conformance/agents.py: the reference releases, or
MEMLENS_AGENT_VERSIONS), put on PATH as a user has them. The real repositories are checkouts
made by scripts/agents/verify-repos.sh (skipped when absent).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memlens.agent_versions import InstalledAgent, detect_installed, remembered_verification
from memlens.verify.capture import Capture
from memlens.verify.run import predicted_payloads, verify
from tests.conformance.agents import PINNED, agent_binary, is_installed
from tests.conformance.sandbox import REPO

DEMO = REPO / "examples" / "demo"
REPOS = Path(os.environ.get("MEMLENS_VERIFY_REPOS")
             or Path.home() / ".cache" / "memlens" / "verify-repos")
# name → the agents that read its memory files (the others send none there, as predicted)
REAL_REPOSITORIES = {"openai-agents-python": {"claude", "codex", "pi"},  # AGENTS.md, CLAUDE.md → it
                     "claude-code-action": {"claude", "pi"}}  # CLAUDE.md, base-action/CLAUDE.md
AGENTS = [(a, PINNED[a][0]) for a in ("gemini", "claude", "codex", "pi") if a in PINNED]
INSTALLED = [(a, v) for a, v in AGENTS if is_installed(a, v)]


def _path_env() -> str:
    """PATH as a user with these agents installed has it (node's folder for the agents)."""
    bins = [str(agent_binary(a, v).parent) for a, v in INSTALLED]
    return os.pathsep.join([*bins, os.environ.get("PATH", "")])


def _tree_hash(*roots: Path) -> str:
    """Every entry under the roots: its path, kind, mode, link target or content."""
    digest = hashlib.sha256()
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs.sort()
            for name in sorted(dirs + files):
                path = Path(folder) / name
                info = path.lstat()
                digest.update(f"{path.relative_to(root)}\0{info.st_mode}\0".encode())
                if path.is_symlink():
                    digest.update(os.readlink(path).encode())
                elif path.is_file():
                    digest.update(path.read_bytes())
    return digest.hexdigest()


def _verify_cli(path: Path, home: Path, tmp_path: Path, *more: str,
                env_extra: dict[str, str] | None = None) -> tuple[int, str, dict[str, object]]:
    env = {**os.environ, "PATH": _path_env(),
           "MEMLENS_VERIFICATIONS": str(tmp_path / "verified-here.json"),
           "PYTHONPATH": str(REPO / "server"), **(env_extra or {})}
    done = subprocess.run([sys.executable, "-m", "memlens", "verify", str(path), "--home",
                           str(home), "--json", "--trusted", *more], env=env,
                          capture_output=True, text=True, timeout=900, check=False)
    return done.returncode, done.stderr, json.loads(done.stdout) if done.stdout else {}


needs_agents = pytest.mark.skipif(not INSTALLED, reason="no agent installed: bash "
                                                         "scripts/agents/install.sh")
pytestmark = pytest.mark.skipif(os.environ.get("MEMLENS_CONFORMANCE_REPLAY") == "1",
                                reason="memlens verify runs the agents themselves")


def _check_identical(result: dict[str, object], code: int, stderr: str) -> None:
    agents = result["agents"]
    assert isinstance(agents, list)
    assert [(a["agent"], a["version"], a["status"]) for a in agents] == [
        (agent, version, "identical") for agent, version in INSTALLED], (stderr, agents)
    for agent in agents:
        assert agent["isolation"] == "sandbox"  # bubblewrap: scripts/agents/install.sh
        assert all(p["identical"] for p in agent["payloads"])
    assert code == 0


def _sent_something(result: dict[str, object]) -> set[str]:
    """The agents that sent memory (so the comparison was not of two empty lists)."""
    return {a["agent"] for a in result["agents"]  # type: ignore[union-attr]
            if any(p["sent"] for p in a["payloads"])}


@needs_agents
def test_the_demo_is_identical_and_untouched(tmp_path: Path) -> None:
    home = DEMO / ".home"
    before = _tree_hash(DEMO)
    code, stderr, result = _verify_cli(DEMO, home, tmp_path)
    _check_identical(result, code, stderr)
    # Something was compared: the demo's memory reaches every agent.
    assert _sent_something(result) == {a for a, _ in INSTALLED}
    assert _tree_hash(DEMO) == before
    # Remembered on "this machine" (the test's own record).
    record = json.loads((tmp_path / "verified-here.json").read_text(encoding="utf-8"))
    assert {a: set(v) for a, v in record["agents"].items()} == {
        a: {v} for a, v in INSTALLED}


@needs_agents
@pytest.mark.parametrize("name", REAL_REPOSITORIES)
def test_a_real_repository_is_identical_and_untouched(name: str, tmp_path: Path) -> None:
    checkout = REPOS / name
    if not (checkout / ".git").exists():
        pytest.skip(f"no checkout of {name}: bash scripts/agents/verify-repos.sh")
    home = tmp_path / "home"  # a user with no global memory
    home.mkdir()
    before = _tree_hash(checkout)
    code, stderr, result = _verify_cli(checkout, home, tmp_path)
    _check_identical(result, code, stderr)
    assert _sent_something(result) == REAL_REPOSITORIES[name] & {a for a, _ in INSTALLED}
    assert _tree_hash(checkout) == before


@needs_agents
@pytest.mark.parametrize(("agent", "version"), INSTALLED)
def test_a_wrong_prediction_shows_a_unified_diff(agent: str, version: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """verify compares with whatever it is given to predict: a prediction with one line
    changed is caught, shown as a unified diff of that line, and not remembered."""
    monkeypatch.setenv("MEMLENS_VERIFICATIONS", str(tmp_path / "verified-here.json"))

    def wrong(agent: str, version: str, capture: Capture) -> tuple[list[str], list[str]]:
        start, after = predicted_payloads(agent, version, capture)
        return [start[0].replace("\n", "\nan extra line\n", 1), *start[1:]], after

    installed = detect_installed(_path_env())
    found = installed[agent]
    assert isinstance(found, InstalledAgent) and found.version == version
    result = verify(str(DEMO), installed, [agent], home=str(DEMO / ".home"), predict=wrong,
                    trusted=True)
    (checked,) = result.agents
    assert (checked.status, result.identical) == ("differs", False)
    first = checked.payloads[0]
    assert not first.identical
    assert "\n-an extra line\n" in first.diff
    assert first.diff.startswith("--- predicted: start-up, message 1\n+++ sent: start-up")
    assert str(DEMO) in first.sent and "/memlens-verify-" not in first.sent  # paths mapped back
    assert remembered_verification(agent, version) == "differs"


@pytest.mark.skipif(not is_installed("claude", PINNED.get("claude", ("",))[0]),
                    reason="Claude Code not installed: bash scripts/agents/install.sh")
def test_claude_auto_memory_is_verified_and_its_memory_section_shown(tmp_path: Path) -> None:
    """The user's auto-memory folder is verified too (copied where Claude Code keeps it for
    the copy), and what Claude Code was told about it comes back with the real paths."""
    from memlens.agents.claude.memory_folder import auto_memory_folder

    workspace, home = tmp_path / "repo", tmp_path / "home"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "CLAUDE.md").write_text("project rules\n")
    folder = auto_memory_folder(str(home), str(workspace), env={}).folder
    assert folder is not None
    Path(folder).mkdir(parents=True)
    (Path(folder) / "MEMORY.md").write_text("- [Role](role.md) — the user's role\n")
    (Path(folder) / "role.md").write_text(
        "---\nname: role\ndescription: the user's role\nmetadata:\n  type: user\n---\nx\n")
    before = _tree_hash(workspace, home)
    code, stderr, result = _verify_cli(workspace, home, tmp_path, "--agent", "claude")
    (claude,) = result["agents"]  # type: ignore[misc]
    assert claude["status"] == "identical", (stderr, claude)
    assert "MEMORY.md (user's auto-memory" in claude["payloads"][0]["sent"]
    assert str(folder) in claude["payloads"][0]["sent"]
    assert claude["memoryInstructions"].startswith("# Memory\n")
    assert f"`{folder}/`" in claude["memoryInstructions"]
    assert code == 0
    assert _tree_hash(workspace, home) == before


MOVED = [(a, PINNED[a][0]) for a in ("opencode", "copilot") if a in PINNED]


@pytest.mark.parametrize(("agent", "version"), MOVED)
def test_a_global_folder_the_environment_moves_is_verified_on_a_copy(
        agent: str, version: str, tmp_path: Path) -> None:
    """XDG_CONFIG_HOME, OPENCODE_CONFIG_DIR and OPENCODE_CONFIG (OpenCode), XDG_CONFIG_HOME
    (Copilot CLI, which moves its file from there into ~/.copilot) set to folders (a file)
    outside HOME: the run reads a scrubbed copy of each, the prediction the same copy, the
    paths come back as the user's, and the user's folders are left as they were (nothing
    moved)."""
    if not is_installed(agent, version):
        pytest.skip(f"{agent}@{version} not installed: bash scripts/agents/install.sh")
    workspace, home, dots, own = (tmp_path / n for n in ("repo", "home", "dots", "oc"))
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    files = {workspace / "AGENTS.md": "A root\n", workspace / "note.md": "note\n",
             home / ".config/opencode/AGENTS.md": "default global: not read\n",
             dots / "opencode/AGENTS.md": "XDG global: not read\n",
             dots / "opencode/opencode.json": '{"instructions": ["note.md", "/etc/hostname"]}',
             own / "AGENTS.md": "OPENCODE_CONFIG_DIR global\n",
             workspace / "custom.md": "custom\n",
             dots / "custom.json": '{"instructions": ["custom.md"]}',
             dots / ".copilot/copilot-instructions.md": "XDG copilot instructions\n"}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {"XDG_CONFIG_HOME": str(dots), "OPENCODE_CONFIG_DIR": str(own),
           "OPENCODE_CONFIG": str(dots / "custom.json"),
           "PATH": os.pathsep.join([str(agent_binary(agent, version).parent), _path_env()])}
    before = _tree_hash(workspace, home, dots, own)
    code, stderr, result = _verify_cli(workspace, home, tmp_path, "--agent", agent,
                                       env_extra=env)
    (checked,) = result["agents"]  # type: ignore[misc]
    assert checked["status"] == "identical", (stderr, checked)
    sent = checked["payloads"][0]["sent"]
    if agent == "opencode":  # the copy's paths mapped back; the scrubbed absolute glob: gone
        assert sent.startswith(f"Instructions from: {own}/AGENTS.md\n")
        assert f"Instructions from: {workspace}/note.md\n" in sent and "hostname" not in sent
        assert f"Instructions from: {workspace}/custom.md\n" in sent  # OPENCODE_CONFIG's
    else:
        assert sent.startswith("<custom_instruction>\nXDG copilot instructions\n")
    assert code == 0
    assert _tree_hash(workspace, home, dots, own) == before


# The variable that moves each one's global folder, the default folder under HOME, and the
# files of the moved folder (its global memory file first).
FOLDER_VARIABLES = {
    "codex": ("CODEX_HOME", ".codex", {
        "AGENTS.md": "CODEX_HOME global\n",
        "config.toml": 'project_doc_fallback_filenames = ["NOTES.md"]\n'}),
    "claude": ("CLAUDE_CONFIG_DIR", ".claude", {
        "CLAUDE.md": "CLAUDE_CONFIG_DIR global\n", "rules/r.md": "CLAUDE_CONFIG_DIR rule\n",
        "settings.json": '{"autoMemoryEnabled": true, "hooks": {"Stop": []}}'}),
    "pi": ("PI_CODING_AGENT_DIR", ".pi/agent", {
        "AGENTS.md": "PI_CODING_AGENT_DIR global\n",
        "APPEND_SYSTEM.md": "PI_CODING_AGENT_DIR append\n"}),
}
MOVED_HOMES = [(a, PINNED[a][0]) for a in FOLDER_VARIABLES if a in PINNED]


@pytest.mark.parametrize(("agent", "version"), MOVED_HOMES)
def test_codex_claude_and_pi_folders_the_environment_moves_are_verified_on_a_copy(
        agent: str, version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CODEX_HOME, CLAUDE_CONFIG_DIR and PI_CODING_AGENT_DIR set to a folder outside HOME: the
    run reads a scrubbed copy of it (Codex with the copy's config.toml, pi with its fake
    provider written into the copy, Claude Code with the user's auto memory copied under it),
    the prediction the same copy, the paths come back as the user's, and the user's folders
    are left as they were."""
    from memlens.agents.claude.memory_folder import auto_memory_folder

    if not is_installed(agent, version):
        pytest.skip(f"{agent}@{version} not installed: bash scripts/agents/install.sh")
    name, default, moved_files = FOLDER_VARIABLES[agent]
    workspace, home, moved = tmp_path / "repo", tmp_path / "home", tmp_path / "moved"
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    files = {workspace / ("NOTES.md" if agent == "codex" else "AGENTS.md"): "A root\n",
             home / default / "AGENTS.md": "default global: not read\n",
             home / default / "CLAUDE.md": "default global: not read\n",
             **{moved / rel: text for rel, text in moved_files.items()}}
    monkeypatch.setenv(name, str(moved))  # the user's environment (verify's too, below)
    if agent == "claude":
        memory = auto_memory_folder(str(home), str(workspace), env={}).folder
        assert memory is not None and memory.startswith(f"{moved}/projects/")
        files[Path(memory) / "MEMORY.md"] = "- [Role](role.md) \u2014 the user's role\n"
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env = {name: str(moved),
           "PATH": os.pathsep.join([str(agent_binary(agent, version).parent), _path_env()])}
    before = _tree_hash(workspace, home, moved)
    code, stderr, result = _verify_cli(workspace, home, tmp_path, "--agent", agent,
                                       env_extra=env)
    (checked,) = result["agents"]  # type: ignore[misc]
    assert checked["status"] == "identical", (stderr, checked)
    sent = checked["payloads"][0]["sent"]
    assert "not read" not in sent
    if agent == "codex":  # the copy's config.toml named NOTES.md
        assert sent.endswith("<INSTRUCTIONS>\nCODEX_HOME global\n\n--- project-doc ---\n\n"
                             "A root\n\n</INSTRUCTIONS>")
    elif agent == "claude":  # the copy's paths mapped back to the user's
        assert (f"Contents of {moved}/CLAUDE.md (user's private global instructions for all "
                "projects):\n\nCLAUDE_CONFIG_DIR global\n") in sent
        assert f"Contents of {moved}/rules/r.md" in sent
        assert f"Contents of {memory}/MEMORY.md (user's auto-memory" in sent
    else:
        assert sent.startswith("\n\nPI_CODING_AGENT_DIR append\n")
        assert f"## {moved}/AGENTS.md\n\nPI_CODING_AGENT_DIR global\n" in sent
    assert code == 0
    assert _tree_hash(workspace, home, moved) == before


def test_verify_repos_script_names_the_same_repositories() -> None:
    script = (REPO / "scripts" / "agents" / "verify-repos.sh").read_text(encoding="utf-8")
    for name in REAL_REPOSITORIES:
        assert f"/{name} " in script
    assert shutil.which("git")
