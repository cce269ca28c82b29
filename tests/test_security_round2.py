"""Issue 23, hostile input round two, against the real command line (a subprocess each).

Each test reproduces one finding as an attacker would stage it — a cloned repository, a HOME,
a program on PATH — and failed before its fix: a frontmatter or settings file nested deeper
than Python's recursion limit (findings 1, 2, 7, 8), a settings file that is a FIFO (7), a
trusted settings file that quotes the API key back through variable expansion (3), a
`gemini --version` that prints without end (4). The server's side of findings 1 and 2 and the
TCP transport (5) are in tests/lsp/test_security_round2.py; `memlens diff` (6) in
tests/test_diff_cli.py.
"""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .conftest import build_tree

MEMLENS = Path(sys.executable).parent / "memlens"
KEY = "AIzaROUND2TESTKEY-0123456789abcdefghijklm"
CLOUD_TOKEN = "ya29.round2-cloud-token-0123456789"
_SCRUBBED = ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
             "GEMINI_API_KEY", "GOOGLE_API_KEY", "MEMLENS_GEMINI_BASE_URL", "MEMLENS_AGENTS")
DEEP = 600  # past Python's recursion limit (1000 frames: PyYAML spends more than one a level)


def run(*args: str, cwd: Path, home: Path, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    environ.update({"HOME": str(home), "GEMINI_CLI_HOME": str(home),
                    "XDG_CACHE_HOME": str(home / ".cache"),
                    "MEMLENS_AGENTS": "gemini@0.44.0,claude@2.1.332,codex@0.169.0"})
    environ.update(env or {})
    return subprocess.run([str(MEMLENS), *args], cwd=cwd, env=environ, capture_output=True,
                          stdin=subprocess.DEVNULL, text=True, timeout=timeout)


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "RecursionError" not in proc.stderr + proc.stdout
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])


@pytest.fixture
def repo(root: Path) -> Path:
    build_tree(root, {"home/.gemini/GEMINI.md": "Global: be brief.\n",
                      "repo/.git": None, "repo/GEMINI.md": "Project rules.\n",
                      "repo/CLAUDE.md": "Claude rules.\n"})
    return root / "repo"


def home_of(repo: Path) -> Path:
    return repo.parent / "home"


# ------------------------------------------------- finding 1: a rule's frontmatter, 600 deep

DEEP_RULE = "---\npaths: " + "[" * DEEP + "]" * DEEP + "\n---\nAlways run the linter.\n"


@pytest.mark.parametrize("command", [["show", "--agent", "claude"], ["list", "--agent", "claude"],
                                     ["check", "--agent", "claude"]])
def test_a_rule_whose_frontmatter_nests_600_deep_is_a_diagnostic_not_a_crash(
        repo: Path, command: list[str]) -> None:
    build_tree(repo, {".claude/rules/deep.md": DEEP_RULE})
    assert len(DEEP_RULE) < 1300  # the 1.2 KB file
    proc = run(*command, "--untrusted", cwd=repo, home=home_of(repo))
    no_traceback(proc)
    if command[0] == "show":
        # read as if it had no `paths:`: the rule applies everywhere, so it loads at start
        assert "Always run the linter." in proc.stdout
    if command[0] == "check":
        assert "frontmatter-unreadable" in proc.stdout
        assert "nested too deeply" in proc.stdout


# ------------------------------------------------- finding 2: a skill's description, 600 deep

DEEP_SKILL = ("---\nname: deep\ndescription: " + "[" * DEEP + "]" * DEEP +
              "\n---\nDo the thing.\n")


@pytest.mark.parametrize("command", [["skills", "list"], ["check"], ["check", "--format", "json"]])
def test_a_skill_whose_description_nests_600_deep_is_a_diagnostic_not_a_crash(
        repo: Path, command: list[str]) -> None:
    build_tree(repo, {".gemini/skills/deep/SKILL.md": DEEP_SKILL})
    proc = run(*command, "--trusted", cwd=repo, home=home_of(repo))
    no_traceback(proc)
    if command[0] == "check":
        assert "skill-invalid-yaml" in proc.stdout
        assert "levels deep" in proc.stdout


# ------------------------------------------------- finding 3: values from the environment

LEAKY_SETTINGS = {"context": {
    "includeDirectories": ["/nonexistent/$GEMINI_API_KEY", "/also/missing/${CLOUD_TOKEN}"],
    "fileName": ["x/${GEMINI_API_KEY}", "GEMINI.md", "../${CLOUD_TOKEN}",
                 "y/${NOT_SET:-$CLOUD_TOKEN}"]}}


@pytest.mark.parametrize("command", [
    ["check"], ["check", "--format", "github"], ["check", "--format", "json"],
    ["check", "--format", "sarif"], ["list", "--json"], ["list"], ["show"], ["show", "--json"],
])
def test_a_trusted_settings_file_never_prints_a_value_from_the_environment(
        repo: Path, command: list[str]) -> None:
    build_tree(repo, {".gemini/settings.json": json.dumps(LEAKY_SETTINGS)})
    proc = run(*command, "--trusted", cwd=repo, home=home_of(repo),
               env={"GEMINI_API_KEY": KEY, "CLOUD_TOKEN": CLOUD_TOKEN})
    no_traceback(proc)
    output = proc.stdout + proc.stderr
    leaked = [line for line in output.splitlines() if KEY in line or CLOUD_TOKEN in line]
    assert not leaked
    if command[0] == "check":
        # the problems are still reported, naming the reference as the file wrote it
        assert "settings-include-not-found" in proc.stdout
        assert "GEMINI_API_KEY" in proc.stdout and "CLOUD_TOKEN" in proc.stdout


def test_expansion_still_applies_and_a_harmless_reference_reads_as_written(repo: Path) -> None:
    """What Gemini CLI reads is unchanged: the variables are expanded (an include directory
    named through $NOTES is used), only what is printed shows the reference."""
    notes = repo.parent / "notes"
    build_tree(notes, {"GEMINI.md": "Notes memory.\n"})
    build_tree(repo, {".gemini/settings.json": json.dumps({"context": {
        "includeDirectories": ["$NOTES"], "loadMemoryFromIncludeDirectories": True}})})
    proc = run("show", "--trusted", cwd=repo, home=home_of(repo), env={"NOTES": str(notes)})
    no_traceback(proc)
    assert "Notes memory." in proc.stdout


# ------------------------------------------------- finding 7: settings 100,000 deep, a FIFO


def test_a_settings_file_nested_100000_deep_is_reported_and_ignored(repo: Path) -> None:
    (repo / ".gemini").mkdir()
    (repo / ".gemini" / "settings.json").write_text("[" * 100_000 + "]" * 100_000)
    proc = run("check", "--trusted", cwd=repo, home=home_of(repo))
    no_traceback(proc)
    assert "settings-unreadable" in proc.stdout
    assert "nested too deeply" in proc.stdout


def test_a_user_settings_file_nested_deep_in_an_object_is_reported_too(repo: Path) -> None:
    user = home_of(repo) / ".gemini" / "settings.json"
    user.write_text('{"context": ' + '{"a": ' * 50_000 + "1" + "}" * 50_001)
    proc = run("show", cwd=repo, home=home_of(repo))
    no_traceback(proc)
    assert "settings-unreadable" not in proc.stdout  # show prints the agent's text only
    assert "nested too deeply" in proc.stderr


def test_a_settings_file_that_is_a_fifo_never_hangs_check(repo: Path) -> None:
    (repo / ".gemini").mkdir()
    fifo = repo / ".gemini" / "settings.json"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    proc = run("check", "--trusted", cwd=repo, home=home_of(repo), timeout=60)
    no_traceback(proc)
    assert "settings-unreadable" in proc.stdout
    assert "not a regular file" in proc.stdout


# ------------------------------------------------- finding 8: package.json beside a gemini


def fake_agent(folder: Path, version: str, command: str = "gemini") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / command
    exe.write_text(f"#!/bin/sh\necho {version}\n")
    exe.chmod(0o755)
    return exe


@pytest.mark.parametrize("command", [["list"], ["show"], ["check"], ["diff"]])
def test_a_package_json_nested_100000_deep_above_a_gemini_on_path_is_not_a_crash(
        repo: Path, command: list[str]) -> None:
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
                   cwd=repo, check=True)
    (repo / "package.json").write_text('{"name": "@google/gemini-cli", "v": '
                                       + "[" * 100_000 + "]" * 100_000 + "}")
    bin_dir = repo / "node_modules" / ".bin"
    fake_agent(bin_dir, "0.44.0")
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    # nothing pinned: the version lookup runs (npm's package.json first, then --version)
    proc = run(*command, cwd=repo, home=home_of(repo), env={"PATH": path, "MEMLENS_AGENTS": ""})
    no_traceback(proc)


# ------------------------------------------------- finding 4: a --version without end


def _cap_memory() -> None:
    limit = 1 << 30  # 1 GiB of address space: the issue saw 7.5 GB kept
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def test_a_version_probe_that_prints_without_end_is_cut_and_killed(tmp_path: Path) -> None:
    noisy = tmp_path / "gemini"
    pid_file = tmp_path / "pid"
    noisy.write_text(f"#!/bin/sh\necho $$ > {pid_file}\nexec yes 0.44.0\n")
    noisy.chmod(0o755)
    probe = textwrap.dedent(f"""
        from memlens.agent_versions import ask_version
        print(ask_version({str(noisy)!r}, timeout=60))
    """)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, preexec_fn=_cap_memory, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # no version learnt, and not a timeout: it was cut at the output cap, long before 60 s
    assert proc.stdout.strip() == "(None, False)"
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # its process group is gone (and reaped)
        os.kill(pid, 0)


def test_memlens_list_with_an_endless_gemini_on_path_stays_small(repo: Path) -> None:
    """Under a 1 GiB address-space cap (the issue saw 7.5 GB kept), `memlens list` with
    such a `gemini` first on PATH answers, without the version it cannot learn."""
    bin_dir = repo.parent / "bin"
    bin_dir.mkdir()
    noisy = bin_dir / "gemini"
    noisy.write_text("#!/bin/sh\nexec yes 0.44.0\n")
    noisy.chmod(0o755)
    environ = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    environ.update({"HOME": str(home_of(repo)), "GEMINI_CLI_HOME": str(home_of(repo)),
                    "XDG_CACHE_HOME": str(home_of(repo) / ".cache"),
                    "PATH": f"{bin_dir}{os.pathsep}{environ.get('PATH', '')}"})

    proc = subprocess.run([str(MEMLENS), "list", "--json"], cwd=repo, env=environ,
                          capture_output=True, text=True, timeout=120, preexec_fn=_cap_memory,
                          stdin=subprocess.DEVNULL)
    no_traceback(proc)
    assert "MemoryError" not in proc.stderr
    json.loads(proc.stdout)


# ------------------------------------------------- Codex's config.toml, 100,000 deep


def test_codex_config_nested_too_deep_says_codex_would_not_start(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memlens.agents.codex.load import load_codex

    home = home_of(repo)
    build_tree(home, {".codex/config.toml": "x = " + "[" * 100_000 + "]" * 100_000 + "\n"})
    monkeypatch.delenv("CODEX_HOME", raising=False)
    load = load_codex(str(repo), str(home))
    assert load.config_error is not None and "nested too deeply" in load.config_error
    proc = run("list", "--agent", "codex", cwd=repo, home=home)
    no_traceback(proc)
