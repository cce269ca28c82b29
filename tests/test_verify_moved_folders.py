"""`memlens verify` and the variables that move an agent's global folder (verify/agent_setup.py
`moved_global_folders`, verify/run.py `predicted_payloads`): the run gets a copy of an absolute
folder, a relative or empty value as it is, and the prediction reads what the run reads
(tests/conformance/test_verify.py runs the real agents on the same)."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest

from memlens.verify.agent_setup import moved_global_folders
from memlens.verify.capture import Capture
from memlens.verify.run import predicted_payloads

from .conftest import build_tree

VARIABLES = ("XDG_CONFIG_HOME", "OPENCODE_CONFIG_DIR", "COPILOT_HOME",
             "OPENCODE_DISABLE_PROJECT_CONFIG", "OPENCODE_DISABLE_CLAUDE_CODE", "CODEX_HOME",
             "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR", "OPENCODE_CONFIG")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_an_absolute_folder_is_copied_an_empty_value_read_as_unset_passed_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dots, scratch = tmp_path / "dots", tmp_path / "scratch"
    build_tree(dots, {"opencode/AGENTS.md": "global\n", "opencode/opencode.json": "{}",
                      "opencode/plugin/x.js": "code: not copied\n",
                      "opencode/notes.md": "not copied\n"})
    assert moved_global_folders("opencode", scratch).env == {}
    monkeypatch.setenv("XDG_CONFIG_HOME", f"{dots}/")
    moved = moved_global_folders("opencode", scratch)
    copy = scratch / "xdg_config_home"
    assert moved.env == {"XDG_CONFIG_HOME": str(copy)} and moved.refused == []
    assert moved.copies == [(copy, str(dots))]
    assert sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*") if p.is_file()) == [
        "opencode/AGENTS.md", "opencode/opencode.json"]
    monkeypatch.setenv("COPILOT_HOME", "")
    monkeypatch.setenv("XDG_CONFIG_HOME", "")
    moved = moved_global_folders("copilot", scratch)
    assert moved.env == {"COPILOT_HOME": "", "XDG_CONFIG_HOME": ""} and moved.refused == []
    assert moved_global_folders("gemini", scratch).env == {}


@pytest.mark.parametrize(("agent", "name", "value"), [
    ("opencode", "XDG_CONFIG_HOME", "cfg"), ("opencode", "OPENCODE_CONFIG_DIR", "own"),
    ("opencode", "OPENCODE_CONFIG_DIR", ""), ("copilot", "COPILOT_HOME", "rel"),
    ("copilot", "XDG_CONFIG_HOME", "~/cfg"), ("codex", "CODEX_HOME", "cx"),
    ("claude", "CLAUDE_CONFIG_DIR", "cfg"), ("claude", "CLAUDE_CONFIG_DIR", ""),
    ("pi", "PI_CODING_AGENT_DIR", "rel"), ("pi", "PI_CODING_AGENT_DIR", "~other/pi"),
    ("opencode", "OPENCODE_CONFIG", "cfg.json")])
def test_a_folder_of_the_workspace_is_refused_not_run(
        agent: str, name: str, value: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative value (or OpenCode's and Claude Code's empty one, the working folder; pi's
    `~other/…`, which it does not expand) would have the agent take its configuration,
    plugins, MCP servers and hooks included, from the repository's copy: the agent is not
    run, and the message says which variable and what to do."""
    monkeypatch.setenv(name, value)
    moved = moved_global_folders(agent, tmp_path / "scratch")
    assert name not in moved.env and len(moved.refused) == 1
    assert name in moved.refused[0] and "absolute path or unset it" in moved.refused[0]


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_codex_claude_and_pi_folders_are_copied_with_their_memory_files_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CODEX_HOME, CLAUDE_CONFIG_DIR and PI_CODING_AGENT_DIR (pi's `~/…` from the user's HOME):
    the files that decide memory are copied, in a folder named as the agent's own so that
    scrub.py scrubs its settings (Codex's MCP servers, Claude Code's hooks); state,
    credentials and code are not."""
    from memlens.verify.scrub import scrub_tree

    user, scratch = tmp_path / "user", tmp_path / "scratch"
    build_tree(user, {
        "cx/AGENTS.md": "codex global\n", "cx/AGENTS.override.md": "override\n",
        "cx/config.toml": 'project_doc_fallback_filenames = ["NOTES.md"]\n'
                          '[mcp_servers.x]\ncommand = "touch"\n',
        "cx/skills/s/SKILL.md": "---\ndescription: d\n---\n", "cx/skills/s/run.sh": "code\n",
        "cx/auth.json": "{}", "cx/sessions/a.jsonl": "{}\n",
        "cl/CLAUDE.md": "claude global\n", "cl/rules/a/b.md": "rule\n", "cl/rules/c.txt": "no\n",
        "cl/settings.json": '{"autoMemoryEnabled": true, "hooks": {"Stop": []}}',
        "cl/skills/s/SKILL.md": "skill\n", "cl/.credentials.json": "{}",
        "cl/projects/p/memory/MEMORY.md": "(copied by run.py, where the run keeps it)\n",
        "home/pi/AGENTS.md": "pi global\n", "home/pi/APPEND_SYSTEM.md": "append\n",
        "home/pi/models.json": "{}", "home/pi/auth.json": "{}", "home/pi/settings.json": "{}"})
    monkeypatch.setenv("CODEX_HOME", str(user / "cx"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{user}/cl/")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/pi")

    codex = moved_global_folders("codex", scratch)
    copy = scratch / "codex_home" / ".codex"
    assert codex.env == {"CODEX_HOME": str(copy)} and codex.copies == [(copy, str(user / "cx"))]
    assert _files(copy) == ["AGENTS.md", "AGENTS.override.md", "config.toml",
                            "skills/s/SKILL.md"]
    scrub_tree(copy)
    assert tomllib.loads((copy / "config.toml").read_text()) == {
        "project_doc_fallback_filenames": ["NOTES.md"]}  # no MCP server left

    claude = moved_global_folders("claude", scratch)
    copy = scratch / "claude_config_dir" / ".claude"
    assert claude.env == {"CLAUDE_CONFIG_DIR": str(copy)}
    assert claude.copies == [(copy, str(user / "cl"))]
    assert _files(copy) == ["CLAUDE.md", "rules/a/b.md", "settings.json", "skills/s/SKILL.md"]
    scrub_tree(copy)
    assert json.loads((copy / "settings.json").read_text()) == {"autoMemoryEnabled": True}

    pi = moved_global_folders("pi", scratch, str(user / "home"))
    copy = scratch / "pi_coding_agent_dir"
    assert pi.env == {"PI_CODING_AGENT_DIR": str(copy)}
    assert pi.copies == [(copy, str(user / "home" / "pi"))]
    assert _files(copy) == ["AGENTS.md", "APPEND_SYSTEM.md"]


def test_opencode_config_is_copied_as_an_opencode_json_and_scrubbed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OPENCODE_CONFIG names one file (any name): the run gets a copy named opencode.json, so
    scrub.py keeps only its `instructions` that stay in the project; the prediction maps the
    copy back to the user's file; an empty value is unset, passed on."""
    from memlens.verify.scrub import scrub_tree

    build_tree(tmp_path, {"user/my.json": '{"instructions": ["a.md", "/etc/hostname"], '
                                          '"mcp": {"x": {"command": ["touch"]}}}'})
    monkeypatch.setenv("OPENCODE_CONFIG", str(tmp_path / "user" / "my.json"))
    moved = moved_global_folders("opencode", tmp_path / "scratch")
    copy = tmp_path / "scratch" / "opencode_config" / "opencode.json"
    assert moved.env == {"OPENCODE_CONFIG": str(copy)} and moved.refused == []
    assert moved.copies == [(copy, str(tmp_path / "user" / "my.json"))]
    scrub_tree(copy.parent)
    assert json.loads(copy.read_text()) == {"instructions": ["a.md"]}
    monkeypatch.setenv("OPENCODE_CONFIG", "")
    assert moved_global_folders("opencode", tmp_path / "s2").env == {"OPENCODE_CONFIG": ""}


def test_an_empty_codex_home_or_pi_folder_is_unset_and_passed_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex and pi read an empty value as unset (HOME's folder): the run gets it as it is."""
    monkeypatch.setenv("CODEX_HOME", "")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "")
    assert moved_global_folders("codex", tmp_path).env == {"CODEX_HOME": ""}
    assert moved_global_folders("pi", tmp_path).env == {"PI_CODING_AGENT_DIR": ""}
    assert not any(tmp_path.iterdir())


def test_copilots_xdg_file_is_copied_unless_a_link_it_would_not_move(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dots, scratch = tmp_path / "dots", tmp_path / "scratch"
    build_tree(tmp_path, {"elsewhere.md": "linked\n",
                          "cph/instructions/a/b.instructions.md": "b\n"})
    (dots / ".copilot").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere.md", dots / ".copilot" / "copilot-instructions.md")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(dots))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cph"))
    moved = moved_global_folders("copilot", scratch)
    assert not (scratch / "xdg_config_home" / ".copilot" / "copilot-instructions.md").exists()
    assert (scratch / "copilot_home" / "instructions" / "a" / "b.instructions.md").is_file()
    assert set(moved.env) == {"XDG_CONFIG_HOME", "COPILOT_HOME"}


def test_the_prediction_reads_the_folders_the_run_was_given(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    ws, home, copy = tmp_path / "ws", tmp_path / "home", tmp_path / "copy"
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "A root\n"})
    build_tree(copy, {"opencode/AGENTS.md": "the copy's global\n"})
    build_tree(tmp_path, {"user/opencode/AGENTS.md": "the user's own: the run did not read it\n"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user"))
    capture = Capture(agent="opencode", version="1.18.33", workspace=str(ws), home=str(home),
                      cwd=str(ws), read_path=None, startup=[], on_read=[], blocks=[],
                      exit_code=0, requests=1, isolated=True, seconds=0.0, notes=[])
    start, _ = predicted_payloads("opencode", "1.18.33", capture,
                                  {"XDG_CONFIG_HOME": str(copy)})
    assert start == [f"Instructions from: {copy}/opencode/AGENTS.md\nthe copy's global\n\n"
                     f"Instructions from: {ws}/AGENTS.md\nA root\n"]
    assert os.environ["XDG_CONFIG_HOME"] == str(tmp_path / "user")  # this process's: unchanged


def test_verify_does_not_run_an_agent_told_to_read_its_configuration_from_the_workspace(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative XDG_CONFIG_HOME would make OpenCode load `cfg/opencode/plugin/*` of the
    repository's copy (code): a stand-in OpenCode that marks any run is never started, and
    verify says why and what to do."""
    from memlens.agent_versions import InstalledAgent
    from memlens.verify.run import verify

    ws, bins, home = tmp_path / "ws", tmp_path / "bins", tmp_path / "home"
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "A\n",
                    "cfg/opencode/plugin/evil.js": "export default () => {}\n"})
    home.mkdir()
    ran = tmp_path / "ran"
    build_tree(bins, {"opencode": f"#!/bin/sh\n: > {ran}\n"})
    (bins / "opencode").chmod(0o755)
    monkeypatch.setenv("XDG_CONFIG_HOME", "cfg")
    result = verify(str(ws), {"opencode": InstalledAgent("opencode", "1.18.33",
                                                         str(bins / "opencode"))},
                    home=str(home), remember=False, trusted=True, timeout=60)
    (opencode,) = result.agents
    assert opencode.status == "failed" and not ran.exists()
    assert opencode.message.startswith("OpenCode 1.18.33 was not run: XDG_CONFIG_HOME=cfg names")


MOVED = {  # agent → (release, variable, its global file, where the payload names it)
    "codex": ("0.169.0", "CODEX_HOME", "AGENTS.md"),
    "claude": ("2.1.330", "CLAUDE_CONFIG_DIR", "CLAUDE.md"),
    "pi": ("0.73.1", "PI_CODING_AGENT_DIR", "AGENTS.md"),
}


@pytest.mark.parametrize("agent", sorted(MOVED))
def test_codex_claude_and_pi_predictions_read_the_folder_the_run_was_given(
        agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's CODEX_HOME, CLAUDE_CONFIG_DIR or PI_CODING_AGENT_DIR (the scrubbed copy) is
    what the prediction reads, not this process's value (the user's folder)."""
    version, name, file = MOVED[agent]
    ws, home, copy = tmp_path / "ws", tmp_path / "home", tmp_path / "copy"
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "A root\n"})
    build_tree(copy, {file: "the copy's global\n"})
    build_tree(tmp_path, {f"user/{file}": "the user's own: the run did not read it\n"})
    home.mkdir()
    monkeypatch.setenv(name, str(tmp_path / "user"))
    capture = Capture(agent=agent, version=version, workspace=str(ws), home=str(home),
                      cwd=str(ws), read_path=None, startup=[], on_read=[], blocks=[],
                      exit_code=0, requests=1, isolated=True, seconds=0.0, notes=[])
    start, _ = predicted_payloads(agent, version, capture, {name: str(copy)})
    expected = {
        "codex": f"# AGENTS.md instructions for {ws}\n\n<INSTRUCTIONS>\nthe copy's global\n\n"
                 "--- project-doc ---\n\nA root\n\n</INSTRUCTIONS>",
        "claude": f"Contents of {copy}/CLAUDE.md (user's private global instructions for all "
                  "projects):\n\nthe copy's global\n",
        "pi": f"## {copy}/AGENTS.md\n\nthe copy's global\n\n",
    }[agent]
    assert len(start) == 1 and expected in start[0]
    assert "the user's own" not in start[0]


@pytest.mark.parametrize("agent", sorted(MOVED))
def test_the_run_gets_the_copy_with_what_verify_adds_to_it(
        agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's environment names the copy, not the scratch HOME's folder agent_env names
    (Codex's CODEX_HOME): pi's fake provider is written into the copy (models.json, its port
    filled in there), and Claude Code's auto memory for the workspace is copied to where it
    keeps the copy's, under the copied config folder. The stand-in agent is never started:
    the sandbox's entry point records the job."""
    from memlens.agent_versions import InstalledAgent
    from memlens.agents.claude.memory_folder import auto_memory_folder
    from memlens.verify import run as verify_run
    from memlens.verify.sandbox import Job

    version, name, file = MOVED[agent]
    ws, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    build_tree(ws, {".git/HEAD": "ref: refs/heads/main\n", "AGENTS.md": "A\n"})
    build_tree(user, {file: "global\n"})
    home.mkdir()
    monkeypatch.setenv(name, str(user))
    if agent == "claude":  # the user's auto memory, under the user's CLAUDE_CONFIG_DIR
        memory = auto_memory_folder(str(home), str(ws), env={}).folder or ""
        assert memory.startswith(f"{user}/projects/")
        build_tree(Path(memory), {"MEMORY.md": "- [Role](role.md)\n"})
    memory = ""
    seen: dict[str, Any] = {}

    def record(job: Job) -> None:
        folder = Path(job.env[name])
        seen.update(env=job.env, files=_files(folder), folder=folder,
                    ports=list(job.port_files),
                    models=[Path(p).read_text(encoding="utf-8") for p in job.port_files])
        raise RuntimeError("recorded")

    monkeypatch.setattr(verify_run, "run_job", record)
    result = verify_run.verify(str(ws), {agent: InstalledAgent(agent, version, "/nonexistent")},
                               home=str(home), remember=False, trusted=True, timeout=60,
                               unsandboxed=True)
    (ran,) = result.agents
    assert ran.message.endswith("could not be started: recorded"), ran.message
    folder = seen["folder"]
    assert isinstance(folder, Path) and folder.name == {
        "codex": ".codex", "claude": ".claude", "pi": "pi_coding_agent_dir"}[agent]
    assert not folder.is_relative_to(home) and not folder.is_relative_to(user)
    assert file in seen["files"]
    if agent == "pi":
        assert seen["ports"] == [str(folder / "models.json")]
        assert '"baseUrl": "http://127.0.0.1:{PORT}/v1"' in seen["models"][0]
    if agent == "claude":  # the copy's slug (its workspace copy's path), not the user's
        (kept,) = [f for f in seen["files"] if f.startswith("projects/")]
        slug = kept.split("/")[1]
        assert kept == f"projects/{slug}/memory/MEMORY.md" and slug != Path(memory).parent.name
