"""pi 0.73 (`agents/pi`): what it sends at start, framed as it frames it (each rule here was
captured from the real agent: tests/conformance/scenarios/pi.yaml), and its place in every view."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memlens.agent_versions import COMMANDS, profile_for
from memlens.agents import agent_by_id, owner_of
from memlens.agents.pi.load import CONTEXT_HEAD, agent_dir, load_pi, node_join
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings
from memlens.reports.budgets import estimate_tokens

from .conftest import build_tree
from .test_cli import memlens


def _settings(home: Path) -> MemorySettings:
    return MemorySettings(home=str(home))


@pytest.fixture(autouse=True)
def _no_agent_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)


def test_global_then_one_file_per_folder_from_the_top_down(root: Path) -> None:
    build_tree(root, {"home/.pi/agent/AGENTS.md": "global\n",
                      "CLAUDE.md": "above the repository\n",
                      "repo/.git": None, "repo/AGENTS.md": "repo\n",
                      "repo/AGENTS.MD": "passed over\n",
                      "repo/sub/CLAUDE.MD": "sub\n", "repo/sub/deep": None,
                      "repo/other/AGENTS.md": "a sibling\n"})
    load = load_pi(str(root / "repo/sub/deep"), str(root / "home"))
    assert [(f.path, f.role) for f in load.context] == [
        (f"{root}/home/.pi/agent/AGENTS.md", "global"), (f"{root}/CLAUDE.md", "project"),
        (f"{root}/repo/AGENTS.md", "project"), (f"{root}/repo/sub/CLAUDE.MD", "project")]
    assert load.shadowed == [(f"{root}/repo/AGENTS.MD", f"{root}/repo/AGENTS.md")]
    assert load.render() == CONTEXT_HEAD + "".join(
        f"## {f.path}\n\n{f.text}\n\n" for f in load.context)


def test_the_order_of_names_in_a_folder(root: Path) -> None:
    build_tree(root, {"home": None, "w/agents.md": "never\n", "w/CLAUDE.MD": "C upper\n",
                      "w/CLAUDE.md": "C lower\n"})
    load = load_pi(str(root / "w"), str(root / "home"))
    assert [f.path for f in load.context] == [f"{root}/w/CLAUDE.md"]
    assert load.shadowed == [(f"{root}/w/CLAUDE.MD", f"{root}/w/CLAUDE.md")]


def test_text_is_sent_raw(root: Path) -> None:
    build_tree(root, {"home": None, "w/sub": None})
    (root / "w/AGENTS.md").write_bytes(b"\xef\xbb\xbfBOM\r\nbad \xff\n")
    (root / "w/sub/AGENTS.md").write_bytes(b"")
    load = load_pi(str(root / "w/sub"), str(root / "home"))
    assert [f.text for f in load.context] == ["\ufeffBOM\r\nbad \ufffd\n", ""]
    assert load.render().endswith(f"## {root}/w/sub/AGENTS.md\n\n\n\n")


def test_links_folders_and_the_real_working_folder(root: Path) -> None:
    build_tree(root, {"home": None, "AGENTS.md": "root\n", "real/dir/AGENTS.md": None,
                      "real/dir/CLAUDE.md": "beside a folder\n"})
    os.symlink("../AGENTS.md", root / "real/AGENTS.md")
    os.symlink("real/dir", root / "link")
    load = load_pi(str(root / "link"), str(root / "home"))
    assert load.cwd == f"{root}/real/dir"
    assert [f.path for f in load.context] == [f"{root}/AGENTS.md", f"{root}/real/AGENTS.md",
                                              f"{root}/real/dir/CLAUDE.md"]
    # The same text twice: sent twice, and said once.
    memory = agent_by_id("pi").load(str(root / "link"), _settings(root / "home"))
    assert [(d.code, d.path) for d in memory.diagnostics] == [
        ("pi-duplicate-context", f"{root}/real/AGENTS.md")]


def test_system_and_append_system(root: Path) -> None:
    build_tree(root, {"home/.pi/agent/SYSTEM.md": "global system\n",
                      "home/.pi/agent/APPEND_SYSTEM.md": "global append\n",
                      "w/.pi/SYSTEM.md": "own prompt\n", "w/.pi/APPEND_SYSTEM.md": "",
                      "w/AGENTS.md": "ctx\n", "w/sub": None})
    load = load_pi(str(root / "w"), str(root / "home"))
    # An empty project APPEND_SYSTEM.md hides the global one and appends nothing.
    assert load.render() == f"own prompt\n{CONTEXT_HEAD}## {root}/w/AGENTS.md\n\nctx\n\n\n"
    # Only the working folder's .pi: in sub/, the global ones.
    load = load_pi(str(root / "w/sub"), str(root / "home"))
    assert load.render().startswith("global system\n\n\nglobal append\n" + CONTEXT_HEAD)
    # An empty SYSTEM.md keeps pi's own prompt (nothing of it is sent).
    build_tree(root, {"w/sub/.pi/SYSTEM.md": ""})
    assert load_pi(str(root / "w/sub"), str(root / "home")).render().startswith(
        "\n\nglobal append\n" + CONTEXT_HEAD)


def test_a_prompt_file_pi_cannot_read_is_sent_as_its_path(root: Path) -> None:
    build_tree(root, {"home": None, "w/.pi/SYSTEM.md/x": "x\n"})
    load = load_pi(str(root / "w"), str(root / "home"))
    assert load.render() == f"{root}/w/.pi/SYSTEM.md"
    assert load.system is not None and load.system.as_path


def test_no_context_files(root: Path) -> None:
    build_tree(root, {"home": None, "w/AGENTS.md": "ctx\n", "w/.pi/APPEND_SYSTEM.md": "app\n"})
    assert load_pi(str(root / "w"), str(root / "home"), context_files=False).render() == (
        "\n\napp\n")


def test_the_global_folder(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = str(root / "home")
    assert agent_dir(home) == f"{home}/.pi/agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", "~/custom")
    assert agent_dir(home) == f"{home}/custom"
    build_tree(root, {"home/custom/AGENTS.md": "custom\n", "home/.pi/agent/AGENTS.md": "no\n"})
    assert [f.text for f in load_pi(str(root / "home/custom"), home).context] == ["custom\n"]
    assert node_join("/a//b/", "../c", "AGENTS.md") == "/a/c/AGENTS.md"


def test_the_global_file_on_the_chain_is_sent_once(root: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    build_tree(root, {"home": None, "g/AGENTS.md": "global\n", "g/sub": None})
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(root / "g"))
    load = load_pi(str(root / "g/sub"), str(root / "home"))
    assert [f.path for f in load.context] == [f"{root}/g/AGENTS.md"]
    assert load.repeated == [f"{root}/g/AGENTS.md"]


def test_names_profile_and_estimate() -> None:
    settings = MemorySettings(home="/h")
    owners = {n: getattr(owner_of(f"/p/{n}", settings), "id", None)
              for n in ("AGENTS.md", "AGENTS.MD", "CLAUDE.MD", ".pi/SYSTEM.md", "SYSTEM.md")}
    assert owners == {"AGENTS.md": "agents", "AGENTS.MD": "pi", "CLAUDE.MD": "pi",
                      ".pi/SYSTEM.md": "pi", "SYSTEM.md": None}
    assert COMMANDS["pi"] == ("@mariozechner/pi-coding-agent", "pi")
    assert profile_for("pi", "0.73.1").verified and profile_for("pi", "0.73").verified
    assert not profile_for("pi", "0.74.0").verified
    assert estimate_tokens("pi", "a" * 5) == 2 and estimate_tokens("pi", "\U0001f600") == 1


def test_cli_show_list_check(root: Path) -> None:
    build_tree(root, {"home/.pi/agent/AGENTS.md": "global\n", "repo/.git": None,
                      "repo/AGENTS.md": "Run make test.\n", "repo/CLAUDE.md": "Claude only\n",
                      "repo/api/AGENTS.MD": "api\n"})
    home = root / "home"
    shown = memlens("show", "repo/api", "--agent", "pi", "--json", cwd=root, home=home)
    answer = json.loads(shown.out)
    assert answer["profile"] == "pi@0.73" and answer["payloads"] == [
        f"{CONTEXT_HEAD}## {home}/.pi/agent/AGENTS.md\n\nglobal\n\n\n"
        f"## {root}/repo/AGENTS.md\n\nRun make test.\n\n\n"
        f"## {root}/repo/api/AGENTS.MD\n\napi\n\n\n"]
    listed = memlens("list", "repo", "--agent", "pi", cwd=root, home=home)
    assert "shadowed" in listed.out and "repo/CLAUDE.md" in listed.out
    checked = memlens("check", "repo", "--agent", "pi", cwd=root, home=home)
    assert "repo/CLAUDE.md:1:1: warning[agent-ignores-file] pi does not read this file" \
        in checked.out
    # pi is shown without --agent where a file only pi reads is (AGENTS.MD).
    everyone = memlens("show", "repo/api", cwd=root, home=home)
    assert "==> pi (pi@0.73) <==" in everyone.out
    # It reads nothing later.
    jit = memlens("jit", "repo/api/x.py", "--agent", "pi", "--json", cwd=root, home=home)
    assert jit.code == 0 and json.loads(jit.out)[0]["files"] == []


def test_reader_is_used_for_unsaved_buffers(root: Path) -> None:
    build_tree(root, {"home": None, "w/AGENTS.md": "on disk\n"})
    reader = FileReader(overrides={f"{root}/w/AGENTS.md": "in the editor\n"})
    assert load_pi(str(root / "w"), str(root / "home"), reader).context[0].text == (
        "in the editor\n")


def test_verify_scrubs_what_pi_would_run(root: Path) -> None:
    """The copy `memlens verify` runs pi on keeps its memory files and loses what names code
    (extensions, the project settings' packages)."""
    from memlens.verify.agent_setup import agent_argv
    from memlens.verify.scrub import scrub_tree

    build_tree(root, {"ws/AGENTS.md": "keep\n", "ws/.pi/SYSTEM.md": "keep\n",
                      "ws/.pi/settings.json": '{"packages": ["npm:evil"]}',
                      "ws/.pi/extensions/run.ts": "export default () => {}\n"})
    notes = scrub_tree(root / "ws")
    assert sorted(p.relative_to(root / "ws").as_posix()
                  for p in (root / "ws").rglob("*") if p.is_file()) == [".pi/SYSTEM.md",
                                                                         "AGENTS.md"]
    assert len(notes) == 2
    assert "--no-extensions" in agent_argv("pi", "pi")


def test_pi_is_shown_where_its_own_files_apply(root: Path) -> None:
    """Without --agent, pi is shown where a file only it reads applies: AGENTS.MD above the
    folder, or its global folder's context file; an AGENTS.md or CLAUDE.md alone is the
    other agents'."""
    from memlens.workspace.agents_here import agents_loading_here

    build_tree(root, {"home": None, "repo/.git": None, "repo/AGENTS.md": "a\n",
                      "repo/sub": None})
    settings = _settings(root / "home")
    assert "pi" not in agents_loading_here(str(root / "repo/sub"), settings)
    build_tree(root, {"home/.pi/agent/AGENTS.md": "global\n"})
    assert "pi" in agents_loading_here(str(root / "repo/sub"), settings)
    (root / "home/.pi/agent/AGENTS.md").unlink()
    build_tree(root, {"repo/AGENTS.MD": "upper\n"})  # passed over: AGENTS.md comes first
    assert "pi" not in agents_loading_here(str(root / "repo/sub"), settings)
    (root / "repo/AGENTS.md").unlink()
    assert "pi" in agents_loading_here(str(root / "repo/sub"), settings)
