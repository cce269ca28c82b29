"""Which agent versions are installed (fake installs in tmp_path, and the real cached ones when
present), which profile serves a version, the pins, and the `agent-version-unverified` note."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memlens.agent_versions import (
    COMMANDS,
    AgentProfile,
    InstalledAgent,
    VersionCache,
    ask_version,
    chosen_agents,
    detect_installed,
    package_version,
    parse_agent_spec,
    profile_for,
    version_diagnostic,
)
from memlens.agents import AGENT_IDS

PACKAGES = {"gemini": "@google/gemini-cli", "claude": "@anthropic-ai/claude-code",
            "codex": "@openai/codex"}


def npm_install(prefix: Path, agent: str, version: str, *, entry: str = "bin/cli.js") -> Path:
    """A fake npm install: node_modules/<package>/package.json, its entry point, and the
    `.bin` link to it. Returns the `.bin` folder (a PATH entry)."""
    package = prefix / "node_modules" / PACKAGES[agent]
    (package / entry).parent.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": PACKAGES[agent],
                                                      "version": version}))
    # An unrelated package.json nearer the entry point is passed over.
    (package / entry).parent.joinpath("package.json").write_text('{"type": "module"}')
    script = package / entry
    script.write_text("#!/bin/sh\nexit 3\n")  # never run: package.json says the version
    script.chmod(0o755)
    bin_dir = prefix / "node_modules" / ".bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / agent).symlink_to(os.path.relpath(script, bin_dir))
    return bin_dir


def script(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def cache_in(tmp_path: Path) -> VersionCache:
    return VersionCache(str(tmp_path / "cache" / "memlens" / "agent-versions.json"))


# --- detection -----------------------------------------------------------------------------
def test_npm_installs_are_read_from_their_package_json(tmp_path: Path) -> None:
    gemini = npm_install(tmp_path / "g", "gemini", "0.61.0", entry="bundle/gemini.js")
    claude = npm_install(tmp_path / "c", "claude", "2.1.330", entry="bin/claude.exe")
    found = detect_installed(f"{gemini}:{claude}", cache=cache_in(tmp_path))
    assert found == {
        "gemini": InstalledAgent("gemini", "0.61.0", str(gemini / "gemini")),
        "claude": InstalledAgent("claude", "2.1.330", str(claude / "claude")),
    }
    assert not (tmp_path / "cache").exists()  # nothing was asked, nothing cached


def test_the_first_on_path_wins(tmp_path: Path) -> None:
    old = npm_install(tmp_path / "old", "gemini", "0.43.0")
    new = npm_install(tmp_path / "new", "gemini", "0.61.0")
    assert detect_installed(f"{new}:{old}", cache=cache_in(tmp_path))["gemini"].version == (
        "0.61.0")
    assert detect_installed(f"{old}:{new}", cache=cache_in(tmp_path))["gemini"].version == (
        "0.43.0")


def test_a_plain_executable_is_asked_its_version_once(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    bin_dir = tmp_path / "bin"
    script(bin_dir, "codex", f'echo run >> "{calls}"\necho "codex-cli 0.170.2 (build 7.8.9)"\n')
    found = detect_installed(str(bin_dir), cache=cache_in(tmp_path))
    assert found == {"codex": InstalledAgent("codex", "0.170.2", str(bin_dir / "codex"),
                                             "--version")}
    # A new process (a fresh cache object over the same file) asks nothing.
    again = detect_installed(str(bin_dir), cache=cache_in(tmp_path))
    assert again == found
    assert calls.read_text() == "run\n"
    # The same cache object answers from memory even when the file is gone.
    cache = cache_in(tmp_path)
    detect_installed(str(bin_dir), cache=cache)
    Path(cache.path or "").unlink()
    assert detect_installed(str(bin_dir), cache=cache) == found
    assert calls.read_text() == "run\n"


def test_an_upgrade_is_asked_again(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    exe = script(bin_dir, "gemini", "echo 0.61.0\n")
    assert detect_installed(str(bin_dir), cache=cache_in(tmp_path))["gemini"].version == (
        "0.61.0")
    exe.write_text("#!/bin/sh\necho 0.62.1\n")
    later = time.time() + 5
    os.utime(exe, (later, later))
    assert detect_installed(str(bin_dir), cache=cache_in(tmp_path))["gemini"].version == (
        "0.62.1")


def test_the_cache_file_is_json_keyed_by_real_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    exe = script(bin_dir, "claude", "echo '2.1.330 (Claude Code)'\n")
    cache = cache_in(tmp_path)
    detect_installed(str(bin_dir), cache=cache)
    data = json.loads(Path(cache.path or "").read_text())
    info = exe.stat()
    assert data == {"format": 1, "agents": {"claude": {
        os.path.realpath(exe): [info.st_mtime_ns, info.st_size, "2.1.330"]}}}
    assert [p.name for p in Path(cache.path or "").parent.iterdir()] == [
        "agent-versions.json"]  # no temp file left behind


def test_a_corrupt_or_unwritable_cache_is_ignored(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    script(bin_dir, "gemini", "echo 0.61.0\n")
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text("{not json")
    assert detect_installed(str(bin_dir), cache=VersionCache(str(corrupt)))[
        "gemini"].version == "0.61.0"
    assert json.loads(corrupt.read_text())["format"] == 1  # rewritten whole
    wrong_shape = tmp_path / "shape.json"
    wrong_shape.write_text('{"format": 1, "agents": {"gemini": {"x": "y"}}}')
    assert detect_installed(str(bin_dir), cache=VersionCache(str(wrong_shape)))
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    unwritable = VersionCache(str(blocked / "memlens" / "agent-versions.json"))
    assert detect_installed(str(bin_dir), cache=unwritable)["gemini"].version == "0.61.0"


def test_broken_hanging_and_garbage_executables_are_absent(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    script(bin_dir, "gemini", "echo 0.61.0\nexit 1\n")  # fails
    script(bin_dir, "claude", "sleep 30\necho 2.1.330\n")  # hangs (a grandchild sleeps)
    script(bin_dir, "codex", "echo 'version unknown'\n")  # no version in its output
    started = time.monotonic()
    assert detect_installed(str(bin_dir), cache=cache_in(tmp_path), timeout=0.5) == {}
    assert time.monotonic() - started < 10
    not_executable = tmp_path / "other"
    not_executable.mkdir()
    (not_executable / "gemini").write_text("echo 0.61.0\n")
    dangling = tmp_path / "dangling"
    dangling.mkdir()
    (dangling / "codex").symlink_to(tmp_path / "nowhere")
    assert detect_installed(f"{not_executable}:{dangling}", cache=cache_in(tmp_path)) == {}


def test_a_timeout_is_not_kept_on_disk(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    script(bin_dir, "claude", "sleep 30\n")
    cache = cache_in(tmp_path)
    assert detect_installed(str(bin_dir), cache=cache, timeout=0.3) == {}
    started = time.monotonic()
    assert detect_installed(str(bin_dir), cache=cache, timeout=0.3) == {}  # from memory
    assert time.monotonic() - started < 0.25
    assert not Path(cache.path or "").exists()


def test_relative_and_empty_path_entries_are_skipped(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    script(tmp_path / "planted", "gemini", "echo 0.61.0\n")
    monkeypatch.chdir(tmp_path)
    assert detect_installed("planted::.", cache=cache_in(tmp_path)) == {}
    assert detect_installed("", cache=cache_in(tmp_path)) == {}


def test_package_version_needs_the_agents_package(tmp_path: Path) -> None:
    bin_dir = npm_install(tmp_path, "codex", "0.169.0")
    assert package_version(str(bin_dir / "codex"), "@openai/codex") == "0.169.0"
    assert package_version(str(bin_dir / "codex"), "@google/gemini-cli") is None


REAL = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memlens" / "agents"
REAL_INSTALLS = {"gemini-0.61.0": ("gemini", "0.61.0"), "gemini-0.43.0": ("gemini", "0.43.0"),
                 "claude-2.1.330": ("claude", "2.1.330"), "codex-0.169.0": ("codex", "0.169.0")}


@pytest.mark.skipif(not all((REAL / d / "node_modules" / ".bin").is_dir() for d in REAL_INSTALLS),
                    reason="the real agents are not installed: run bash scripts/agents/install.sh "
                           "(scripts/test.sh does, before pytest, unless "
                           "MEMLENS_SKIP_CONFORMANCE=1)")
def test_the_real_installs(tmp_path: Path) -> None:
    for folder, (agent, version) in REAL_INSTALLS.items():
        path = str(REAL / folder / "node_modules" / ".bin")
        found = detect_installed(path, cache=cache_in(tmp_path))
        assert found[agent].version == version, folder
        assert found[agent].source == "package.json"
        assert list(found) == [agent]
    everything = ":".join(str(REAL / d / "node_modules" / ".bin") for d in REAL_INSTALLS)
    found = detect_installed(everything, cache=cache_in(tmp_path))
    assert {a: i.version for a, i in found.items()} == {
        "gemini": "0.61.0", "claude": "2.1.330", "codex": "0.169.0"}
    # Their own `--version` agrees (the fallback when no package.json owns the program).
    for folder, agent in (("claude-2.1.330", "claude"), ("codex-0.169.0", "codex")):
        exe = str(REAL / folder / "node_modules" / ".bin" / agent)
        assert ask_version(exe) == (REAL_INSTALLS[folder][1], False)
    profiles = chosen_agents([], found)
    assert [(p.name, p.verified) for p in profiles] == [
        ("gemini@0.44+", True), ("claude@2.1", True), ("codex@0.169", True)]


# --- profiles ------------------------------------------------------------------------------
def test_a_newer_version_uses_the_newest_profile_and_says_so() -> None:
    assert profile_for("gemini", "0.62.1") == AgentProfile(
        agent="gemini", profile="0.44+", verified_on="0.61.0", installed="0.62.1",
        verified=False,
        note="Gemini CLI 0.62.1 is newer than the newest verified version (0.61.0): shown "
             "with the gemini@0.44+ profile")
    # Codex 0.171.0 was verified since (scripts/agents/keep-up.py, against the real agent):
    # the newest verified release, named in the note.
    assert profile_for("codex", "0.172.0").note == (
        "Codex 0.172.0 is newer than the newest verified version (0.171.0): shown with the "
        "codex@0.169 profile")
    assert profile_for("codex", "0.170.0").note == (
        "Codex 0.170.0 was not verified (verified: 0.169.0, 0.171.0): shown with the "
        "codex@0.169 profile")
    assert profile_for("claude", "2.2.0").profile == "2.1"


@pytest.mark.parametrize(("agent", "version", "profile", "verified"), [
    ("gemini", None, "0.44+", True),
    ("gemini", "0.43", "0.43", True),
    ("gemini", "0.43.0", "0.43", True),
    ("gemini", "0.43.2", "0.43", True),
    ("gemini", "0.44", "0.44+", True),
    ("gemini", "0.44+", "0.44+", True),
    ("gemini", "0.44.0", "0.44+", True),
    ("gemini", "0.56.1", "0.44+", True),
    ("gemini", "0.61", "0.44+", True),
    ("gemini", "0.61.0", "0.44+", True),
    ("gemini", "0.61.1", "0.44+", False),
    ("gemini", "0.62", "0.44+", False),
    ("gemini", "0.50+", "0.44+", True),
    ("gemini", "1.0.0", "0.44+", False),
    ("gemini", "0.42.9", "0.43", False),
    ("gemini", "0.35", "0.43", False),
    ("claude", None, "2.1", True),
    ("claude", "2.1", "2.1", True),
    ("claude", "2.1.330", "2.1", True),
    ("claude", "2.1.331", "2.1", False),
    ("claude", "2.1.200", "2.1", False),
    ("claude", "2.0", "2.1", False),
    ("codex", "0.169", "0.169", True),
    ("codex", "0.169.0", "0.169", True),
    ("codex", "0.168.0", "0.169", False),
])
def test_which_profile_serves_a_version(agent: str, version: str | None, profile: str,
                                        verified: bool) -> None:
    got = profile_for(agent, version)
    assert (got.profile, got.verified) == (profile, verified)
    assert (got.note is None) == verified


def test_an_older_version_gets_the_oldest_profile_unverified() -> None:
    got = profile_for("gemini", "0.40.0")
    assert (got.profile, got.installed, got.verified) == ("0.43", "0.40.0", False)
    assert got.note == ("Gemini CLI 0.40.0 is older than the oldest verified version (0.43.0): "
                        "shown with the gemini@0.43 profile")
    assert profile_for("claude", "2.1.200").note == (
        "Claude Code 2.1.200 is older than the oldest verified version (2.1.330): shown with "
        "the claude@2.1 profile")


def test_the_convention_has_no_version() -> None:
    got = profile_for("agents", None)
    assert (got.name, got.verified, got.verified_on) == ("agents", False, None)
    assert version_diagnostic(got, "/w/AGENTS.md") is None
    with pytest.raises(ValueError, match="no versions"):
        profile_for("agents", "1.0")


@pytest.mark.parametrize(("agent", "version", "message"), [
    ("gemini", "latest", "not a Gemini CLI version: 'latest'"),
    ("gemini", "0", "not a Gemini CLI version"),
    ("gemini", "0.44.1.2", "not a Gemini CLI version"),
    ("claude", "v2.1", "not a Claude Code version"),
    ("codex", "", "not a Codex version"),
    ("windsurf", None, "unknown agent 'windsurf' (one of gemini, claude, codex, copilot, "),
])
def test_bad_versions_are_one_line_errors(agent: str, version: str | None,
                                          message: str) -> None:
    with pytest.raises(ValueError) as caught:
        profile_for(agent, version)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_agent_specs() -> None:
    assert parse_agent_spec("gemini") == ("gemini", None)
    assert parse_agent_spec("gemini@0.43") == ("gemini", "0.43")
    assert parse_agent_spec(" claude@2.1 ") == ("claude", "2.1")
    assert parse_agent_spec("agents") == ("agents", None)
    for bad in ("gemini@", "gemini@x", "nobody", "@0.43", "agents@1"):
        with pytest.raises(ValueError):
            parse_agent_spec(bad)


# --- the chosen agents ---------------------------------------------------------------------
def installed(**versions: str) -> dict[str, InstalledAgent]:
    return {a: InstalledAgent(a, v, f"/bin/{a}") for a, v in versions.items()}


def test_without_pins_every_detected_agent_in_the_registrys_order() -> None:
    got = chosen_agents([], installed(codex="0.169.0", claude="2.1.330", gemini="0.43.0"))
    assert [(p.name, p.installed) for p in got] == [
        ("gemini@0.43", "0.43.0"), ("claude@2.1", "2.1.330"), ("codex@0.169", "0.169.0")]
    detected = [a for a in AGENT_IDS if a in COMMANDS]
    assert list(COMMANDS) == detected  # the order of the agents in use is the registry's


def test_without_pins_no_agent_is_in_use_but_the_detected_ones() -> None:
    """Gemini CLI is no default: nothing detected, nothing in use (the agents whose files
    apply are shown instead, workspace/agents_here.py)."""
    assert chosen_agents([], {}) == []
    got = chosen_agents([], installed(claude="2.1.330"))
    assert [(p.name, p.installed, p.verified) for p in got] == [
        ("claude@2.1", "2.1.330", True)]


def test_pins_win_in_order() -> None:
    found = installed(gemini="0.62.1", claude="2.1.330")
    got = chosen_agents(["claude", "gemini@0.43", "codex"], found)
    assert [(p.name, p.installed, p.verified) for p in got] == [
        ("claude@2.1", "2.1.330", True), ("gemini@0.43", None, True),
        ("codex@0.169", None, True)]
    pinned_detected = chosen_agents(["gemini"], found)
    assert [(p.name, p.installed, p.verified) for p in pinned_detected] == [
        ("gemini@0.44+", "0.62.1", False)]
    assert [p.name for p in chosen_agents(["gemini@0.44+", "gemini@0.44+"], found)] == [
        "gemini@0.44+"]
    with pytest.raises(ValueError, match="unknown agent"):
        chosen_agents(["aider"], found)


def test_copilot_cli_is_another_name_for_copilot() -> None:
    """`--agent copilot-cli` is GitHub Copilot CLI, profile copilot@1.0, verified on
    1.0.102 and only there."""
    found = installed()
    for pin in ("copilot", "copilot-cli", "copilot@1.0", "copilot-cli@1.0.102"):
        [got] = chosen_agents([pin], found)
        assert (got.agent, got.name, got.verified) == ("copilot", "copilot@1.0", True), pin
    [newer] = chosen_agents(["copilot@1.0.200"], found)
    assert (newer.name, newer.verified) == ("copilot@1.0", False)


def test_the_unverified_diagnostic() -> None:
    newer = profile_for("gemini", "0.62.1")
    diagnostic = version_diagnostic(newer, "/w/GEMINI.md")
    assert diagnostic is not None
    assert (diagnostic.path, diagnostic.line, diagnostic.col, diagnostic.severity,
            diagnostic.code) == ("/w/GEMINI.md", 1, 1, "info", "agent-version-unverified")
    assert diagnostic.message == newer.note
    assert version_diagnostic(profile_for("gemini", "0.61.0"), "/w/GEMINI.md") is None
    assert version_diagnostic(profile_for("claude", None), "/w/CLAUDE.md") is None


def test_labels() -> None:
    assert profile_for("gemini", "0.62.1").label == "Gemini CLI 0.62.1 (gemini@0.44+, unverified)"
    assert profile_for("claude", "2.1.330").label == "Claude Code 2.1.330 (claude@2.1)"
    assert profile_for("agents", None).label == "AGENTS.md (convention)"


def test_agents_without_a_program_are_never_verified(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every entry of the table: no version, never verified, never an unverified-version
    # diagnostic, labelled by its basis; an entry added later behaves the same.
    from memlens import agent_versions
    monkeypatch.setitem(agent_versions.UNVERIFIED, "tryout", agent_versions.Unverified(
        "Try Out", "sources", "read from Try Out's sources, not verified"))
    for agent, entry in agent_versions.UNVERIFIED.items():
        profile = profile_for(agent, None)
        name = f"{agent}@{entry.profile}" if entry.profile else agent
        assert (profile.verified, profile.name, profile.note) == (False, name, entry.note)
        assert version_diagnostic(profile, "/w/X.md") is None
        with pytest.raises(ValueError, match=r"has no versions|has one profile"):
            profile_for(agent, "0.0")
    assert profile_for("tryout", None).label == "Try Out (from sources)"
    # One read from a version's sources takes that version, pinned or detected, and no other.
    monkeypatch.setitem(agent_versions.UNVERIFIED, "tryout", agent_versions.Unverified(
        "Try Out", "sources", "read from Try Out 1.139's sources", profile="1.139"))
    assert profile_for("tryout", None).name == "tryout@1.139"
    assert profile_for("tryout", "1.139").installed is None
    detected = profile_for("tryout", "1.139.2")
    assert (detected.name, detected.installed, detected.verified) == ("tryout@1.139", "1.139.2",
                                                                      False)
    with pytest.raises(ValueError, match=r"one profile, tryout@1\.139"):
        profile_for("tryout", "1.140")
    assert (agent_versions.basis_of("tryout"), agent_versions.basis_of("agents"),
            agent_versions.basis_of("gemini")) == ("sources", "convention", "agent")
