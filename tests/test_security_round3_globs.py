"""Issue 30 (hostile input, round three), items 7 and 9: globs in linear time.

Every agent's globs — Copilot CLI's `applyTo`, VS Code chat's `applyTo`, Cursor's `globs`,
Claude Code's `paths:`, Antigravity's `globs` — go through `memlens.files.globs`, which runs
them on RE2 and bounds how many are matched (docs/security.md, "Globs in linear time").

Each attack is staged as a cloned repository would stage it and run through the real command
line (a subprocess, its timeout a hang guard, never a threshold); the work of the 20,000 ×
5,000 case is bounded by counting match operations in process. Before the fix: the Copilot
attacks never ended (Python's backtracking `re`), the 20,000 globs ran past 30 s, `{a,b}`
twenty-four times over expanded to 16 million globs (Cursor, Claude Code), a malformed
gitignore-style glob or a file name that is not UTF-8 ended `check` and `jit` in a traceback,
and the gitignore dialects were linear only while pathspec's default backend happened to be
RE2 (with it forced to Python's `re` they hung).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from memlens.agents.copilot.agent import CopilotAgent
from memlens.agents.cursor.agent import CursorAgent
from memlens.files import globs
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings

from .conftest import build_tree

HANG_GUARD = 60  # seconds: each of these ends in about one before the fix's costs
STARS = "*a" * 15 + "*b"  # 16 stars: backtracking tries C(60, 15) ways on 60 `a`s
NAME = "a" * 60  # ends without `b`: no match, found only after every way is tried
MATCHING = "a" * 59 + "b"  # the control: a name the glob matches
BOMB = "{a,b}" * 24  # 16,777,216 globs once expanded
_SCRUBBED = ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
             "GEMINI_API_KEY", "GOOGLE_API_KEY", "MEMLENS_GEMINI_BASE_URL", "MEMLENS_AGENTS")
# pathspec's "best" backend (the default) replaced by its Python `re` one, as when RE2 cannot
# be imported by pathspec or pathspec is older than its backends; then memlens runs as usual.
_SIMPLE_PATHSPEC = ("import sys, pathspec._backends.agg as agg; agg._BEST_BACKEND = 'simple'; "
                    "from memlens.cli import main; sys.exit(main())")


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def run(*args: str, cwd: Path, simple_pathspec: bool = False
        ) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    home = cwd.parent / "home"
    environ.update({"HOME": str(home), "GEMINI_CLI_HOME": str(home),
                    "XDG_CACHE_HOME": str(home / ".cache")})
    command = [sys.executable, "-c", _SIMPLE_PATHSPEC] if simple_pathspec else [
        sys.executable, "-m", "memlens"]
    proc = subprocess.run([*command, *args], cwd=cwd, env=environ, capture_output=True,
                          stdin=subprocess.DEVNULL, text=True, timeout=HANG_GUARD,
                          preexec_fn=_limit_memory)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1), (proc.returncode, proc.stderr[-2000:])
    return proc


@pytest.fixture
def repo(root: Path) -> Path:
    build_tree(root, {"home": None, "repo/.git": None})
    return root / "repo"


def instructions(apply_to: str) -> str:
    return f'---\napplyTo: "{apply_to}"\n---\nUse tabs.\n'


# ------------------------------------------- item 7: 16 stars against a 60-character name


def test_copilot_applyto_of_16_stars_and_a_60_character_name_ends(repo: Path) -> None:
    build_tree(repo, {".github/instructions/x.instructions.md": instructions(STARS),
                      NAME: "x\n"})
    proc = run("check", "--agent", "copilot", str(repo), cwd=repo)
    # it matches no file in the repository, and says so
    assert "[copilot-applyto-unmatched]" in proc.stdout, proc.stdout
    read = run("jit", "--agent", "copilot", "--cwd", str(repo), str(repo / NAME), cwd=repo)
    assert "Use tabs." not in read.stdout


def test_copilot_applyto_of_16_stars_still_matches_what_it_matches(repo: Path) -> None:
    build_tree(repo, {".github/instructions/x.instructions.md": instructions(STARS),
                      NAME: "x\n", "deep/" + MATCHING: "y\n"})
    proc = run("check", "--agent", "copilot", str(repo), cwd=repo)
    assert "[copilot-applyto-unmatched]" not in proc.stdout, proc.stdout
    for target, sent in ((repo / "deep" / MATCHING, True), (repo / NAME, False)):
        read = run("jit", "--agent", "copilot", "--cwd", str(repo), str(target), cwd=repo)
        assert ("Use tabs." in read.stdout) is sent, read.stdout


def test_vscode_chat_applyto_of_16_stars_on_an_attached_60_character_name(repo: Path) -> None:
    build_tree(repo, {".github/instructions/x.instructions.md": instructions(STARS),
                      NAME: "x\n", MATCHING: "y\n"})
    for target, sent in ((repo / NAME, False), (repo / MATCHING, True)):
        read = run("jit", "--agent", "vscode-chat", "--cwd", str(repo), str(target), cwd=repo)
        assert ("Use tabs." in read.stdout) is sent, read.stdout


@pytest.mark.parametrize("agent", ["vscode-chat", "copilot"])
def test_an_applyto_holding_a_lone_surrogate_matches_nothing_and_the_rest_still_works(
        repo: Path, agent: str) -> None:
    """YAML's `"\\ud800"` writes a character UTF-8 cannot hold (RE2 reads UTF-8)."""
    build_tree(repo, {".github/instructions/x.instructions.md":
                      instructions("[\\ud800]*, *.py"), "a.py": "", "b.md": ""})
    for target, sent in (("a.py", True), ("b.md", False)):
        read = run("jit", "--agent", agent, "--cwd", str(repo), str(repo / target), cwd=repo)
        assert ("Use tabs." in read.stdout) is sent, (agent, target, read.stdout)


GITIGNORE_RULES = {
    "cursor": (".cursor/rules/x.mdc", '---\nglobs: "{}"\n---\nUse tabs.\n'),
    "claude": (".claude/rules/x.md", '---\npaths: "{}"\n---\nUse tabs.\n'),
    "antigravity": (".agents/rules/x.md", '---\ntrigger: glob\nglobs: "{}"\n---\nUse tabs.\n'),
}


@pytest.mark.parametrize("agent", sorted(GITIGNORE_RULES))
def test_gitignore_globs_of_16_stars_end_whatever_pathspecs_default_backend(
        repo: Path, agent: str) -> None:
    """Linear because memlens names RE2, not because pathspec's default happens to be it."""
    rule, text = GITIGNORE_RULES[agent]
    build_tree(repo, {rule: text.replace("{}", STARS), "CLAUDE.md": "Claude.\n",
                      NAME: "x\n", MATCHING: "y\n"})
    run("check", "--agent", agent, str(repo), cwd=repo, simple_pathspec=True)
    for target, sent in ((repo / NAME, False), (repo / MATCHING, True)):
        read = run("jit", "--agent", agent, "--cwd", str(repo), str(target), cwd=repo,
                   simple_pathspec=True)
        assert ("Use tabs." in read.stdout) is sent, (agent, target.name, read.stdout)


def test_cursor_check_with_16_stars_reports_the_glob_that_matches_nothing(repo: Path) -> None:
    rule, text = GITIGNORE_RULES["cursor"]
    build_tree(repo, {rule: text.replace("{}", STARS), NAME: "x\n"})
    proc = run("check", "--agent", "cursor", str(repo), cwd=repo, simple_pathspec=True)
    assert "[cursor-glob-no-match]" in proc.stdout, proc.stdout


# ------------------------------------------- the same code, other spellings of the attack


@pytest.mark.parametrize("agent", ["cursor", "claude"])
def test_braces_that_expand_to_16_million_globs_stop_at_the_cap(repo: Path, agent: str) -> None:
    rule, text = GITIGNORE_RULES[agent]
    build_tree(repo, {rule: text.replace("{}", BOMB), "CLAUDE.md": "Claude.\n", "a.py": ""})
    proc = run("check", "--agent", agent, str(repo), cwd=repo)
    assert f"[{globs.BUDGET_EXCEEDED}]" in proc.stdout, proc.stdout
    assert f"of the {globs.MAX_EXPANDED:,} or more" in proc.stdout


MALFORMED = ["[z-a]", "[[:alpha:]]x", "!", "\\\\", "[\\ud800]"]  # pathspec or RE2 refuse each


@pytest.mark.parametrize("agent", sorted(GITIGNORE_RULES))
def test_gitignore_globs_that_do_not_parse_match_nothing_and_the_others_still_work(
        repo: Path, agent: str) -> None:
    rule, text = GITIGNORE_RULES[agent]
    listed = ", ".join(f'"{g}"' for g in [*MALFORMED, "*.py"])
    build_tree(repo, {rule: text.replace('"{}"', f"[{listed}]"),
                      "CLAUDE.md": "Claude.\n", "src/a.py": "", "src/b.md": ""})
    run("check", "--agent", agent, str(repo), cwd=repo)
    for target, sent in (("src/a.py", True), ("src/b.md", False)):
        read = run("jit", "--agent", agent, "--cwd", str(repo), str(repo / target), cwd=repo)
        assert ("Use tabs." in read.stdout) is sent, (agent, target, read.stdout)


def test_a_file_name_that_is_not_utf8_is_matched_not_a_traceback(repo: Path) -> None:
    rule, text = GITIGNORE_RULES["cursor"]
    build_tree(repo, {rule: text.replace("{}", "*.py")})
    (repo / os.fsdecode(b"\xff\xfe.py")).write_text("")
    proc = run("check", "--agent", "cursor", str(repo), cwd=repo)
    assert "[cursor-glob-no-match]" not in proc.stdout  # `*.py` matches the odd name


def test_copilot_braces_nested_600_deep_are_no_recursion_error(repo: Path) -> None:
    build_tree(repo, {".github/instructions/x.instructions.md": instructions("{" * 600),
                      ".github/instructions/y.instructions.md": instructions("{" * 200),
                      "a.py": ""})
    proc = run("check", "--agent", "copilot", str(repo), cwd=repo)
    assert "RecursionError" not in proc.stderr
    # 600 characters: past the cap, not matched; 200 deep: past 50, read as not parsing
    assert "x.instructions.md:1:1: warning[glob-budget-exceeded]" in proc.stdout, proc.stdout
    assert "y.instructions.md:1:1: warning[copilot-applyto-invalid]" in proc.stdout


# ------------------------------------------- item 9: 20,000 globs over 5,000 files


def _many_files(repo: Path, count: int) -> None:
    for index in range(count):
        folder = repo / "src" / f"d{index % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{index}.txt").write_bytes(b"")


def _unmatched_globs(count: int) -> list[str]:
    return [f"gen/**/never{index}.py" for index in range(count)]


def test_20000_applyto_globs_over_5000_files_are_bounded_and_said(repo: Path) -> None:
    _many_files(repo, 5000)
    build_tree(repo, {".github/instructions/x.instructions.md":
                      instructions(", ".join(_unmatched_globs(20_000)))})
    before = globs.operations
    check = CopilotAgent().check_workspace(MemorySettings(home=str(repo.parent / "home")),
                                           [str(repo)], [], FileReader())
    done = globs.operations - before
    # the file's first MAX_GLOBS globs against each file (and the instructions file), no more
    assert 0 < done <= globs.MAX_GLOBS * 5001 <= globs.MATCH_BUDGET
    codes = sorted(d.code for d in check.diagnostics)
    # 20,000 globs make a frontmatter past what Memory Lens parses (files/structured.py
    # `MAX_YAML_CHARS`): said, and read as Copilot's fallback reads it (the `applyTo:` line).
    assert codes == ["copilot-applyto-unmatched", "copilot-frontmatter-invalid",
                     globs.BUDGET_EXCEEDED], codes
    (large,) = [d for d in check.diagnostics if d.code == "copilot-frontmatter-invalid"]
    assert large.message.startswith("Memory Lens does not read a frontmatter this large")
    (said,) = [d for d in check.diagnostics if d.code == globs.BUDGET_EXCEEDED]
    assert said.path == str(repo / ".github/instructions/x.instructions.md")
    assert "19,900 of the 20,000 applyTo globs" in said.message
    # the command line says the same
    proc = run("check", "--agent", "copilot", str(repo), cwd=repo)
    assert "[glob-budget-exceeded]" in proc.stdout and "19,900 of the 20,000" in proc.stdout


def test_past_the_budget_a_check_stops_matching_and_names_the_file(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _many_files(repo, 500)
    build_tree(repo, {f".github/instructions/x{i}.instructions.md":
                      instructions(", ".join(_unmatched_globs(20))) for i in range(3)})
    monkeypatch.setattr(globs, "MATCH_BUDGET", 25_000)  # room for two files' 20 × 500
    before = globs.operations
    check = CopilotAgent().check_workspace(MemorySettings(home=str(repo.parent / "home")),
                                           [str(repo)], [], FileReader())
    assert globs.operations - before <= 25_000
    found = sorted((os.path.basename(d.path), d.code) for d in check.diagnostics)
    assert found == [("x0.instructions.md", "copilot-applyto-unmatched"),
                     ("x1.instructions.md", "copilot-applyto-unmatched"),
                     ("x2.instructions.md", globs.BUDGET_EXCEEDED)], found
    (said,) = [d for d in check.diagnostics if d.code == globs.BUDGET_EXCEEDED]
    # 500 files and the 3 instruction files
    assert "the 20 applyTo globs of this file were not matched against all 503 files" in (
        said.message)


def test_20000_cursor_globs_over_5000_files_are_bounded_and_said(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _many_files(repo, 5000)
    rule, text = GITIGNORE_RULES["cursor"]
    build_tree(repo, {rule: text.replace("{}", ", ".join(_unmatched_globs(20_000)))})
    monkeypatch.setattr(globs, "MATCH_BUDGET", 100_000)  # 20 globs' worth, to stay quick
    before = globs.operations
    check = CursorAgent().check_workspace(MemorySettings(home=str(repo.parent / "home")),
                                          [str(repo)], [], FileReader())
    assert globs.operations - before <= 100_000
    codes = [d.code for d in check.diagnostics]
    assert 0 < codes.count("cursor-glob-no-match") <= 20  # what the budget had room for
    said = [d.message for d in check.diagnostics if d.code == globs.BUDGET_EXCEEDED]
    assert len(said) == 2, said
    # the split stops at MAX_EXPANDED globs (for `{a,b}`), so the count is a floor
    assert "9,900 or more of the 10,000 or more globs" in said[0]
    assert "the 100 globs of this file were not matched against all 5,001 files" in said[1]


# ------------------------------------------- Gemini CLI's ignore files: the same globs


@pytest.mark.parametrize("lines", [STARS, "[z-a]\n[[:alpha:]]x"], ids=["stars", "malformed"])
@pytest.mark.parametrize("mode", ["classic", "jit"])
def test_a_gitignore_line_of_16_stars_or_that_does_not_parse_never_stops_gemini(
        repo: Path, mode: str, lines: str) -> None:
    build_tree(repo, {".gitignore": f"{lines}\nskipped\n", "GEMINI.md": "Root.\n",
                      f"{NAME}/GEMINI.md": "Kept.\n", f"{MATCHING}/GEMINI.md": "Starred.\n",
                      "skipped/GEMINI.md": "Skipped.\n"})
    run("check", "--trusted", "--mode", mode, "--agent", "gemini", str(repo), cwd=repo)
    # Gemini CLI 0.43's classic mode searches the folders below (its ignore files apply)
    listed = run("list", "--trusted", "--mode", "classic", "--agent", "gemini@0.43", str(repo),
                 cwd=repo)
    assert f"{NAME}/GEMINI.md" in listed.stdout, listed.stdout
    assert (f"{MATCHING}/GEMINI.md" in listed.stdout) is (lines != STARS), listed.stdout
    assert "skipped/" not in listed.stdout  # the other lines of the file still apply


def test_glob_budget_exceeded_is_a_sarif_rule() -> None:
    from memlens.reports.sarif import RULES

    assert globs.BUDGET_EXCEEDED in RULES


def test_a_long_glob_against_long_paths_spends_the_budget_faster(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RE2's worst time is the glob's size times the path's: such a match counts more."""
    deep = "/".join(["a" * 99] * 10)  # paths of about 1,000 characters
    for index in range(200):
        build_tree(repo, {f"{deep}/f{index}.txt": ""})
    long_glob = "*a" * 127 + "*b"  # 256 characters, the longest matched
    build_tree(repo, {".github/instructions/x.instructions.md": instructions(long_glob)})
    monkeypatch.setattr(globs, "MATCH_BUDGET", 10_000)
    before = globs.operations
    check = CopilotAgent().check_workspace(MemorySettings(home=str(repo.parent / "home")),
                                           [str(repo)], [], FileReader())
    # each match costs 256 × ~1,000 / 4,096 = 62: the budget holds about 160 of them
    assert 100 < globs.operations - before < 200
    assert [d.code for d in check.diagnostics] == [globs.BUDGET_EXCEEDED]


def test_a_glob_longer_than_the_cap_is_not_matched_and_said(repo: Path) -> None:
    build_tree(repo, {".github/instructions/x.instructions.md":
                      instructions("src/" + "x" * globs.MAX_GLOB_CHARS + ", *.py"),
                      "a.py": ""})
    check = CopilotAgent().check_workspace(MemorySettings(home=str(repo.parent / "home")),
                                           [str(repo)], [], FileReader())
    (said,) = [d.message for d in check.diagnostics]
    assert "does not match 1 of the 2 applyTo globs" in said, said
