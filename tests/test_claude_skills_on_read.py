"""Claude Code's skills found on a read (server/memlens/agents/claude/skills_on_read.py): the
texts below are what Claude Code 2.1.330 sent for these trees (the
`regression-claude-skills-*` trees of tests/conformance/differential/regressions_claude.yaml
check them against it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memlens.agents.claude.on_read import ClaudeJitSession

from .conftest import build_tree

SKILL = "---\ndescription: {d}\n---\n"
FROM = " (from {o}/.claude/skills \u2014 applies when working on files under {o}/)"
LISTING = "The following skills are available for use with the Skill tool:\n\n"


def _announce(where: str, names: list[str]) -> str:
    return (f"New skills discovered in {where}, now available via the Skill tool:\n"
            + "\n".join(f"- {n}" for n in names))


def _payloads(root: Path, read: str, cwd: str = "repo") -> list[str]:
    session = ClaudeJitSession(str(root / "home"), str(root / cwd))
    return session.load_for(str(root / "repo" / read)).payloads


def test_after_the_nested_agents_md_in_the_same_system_message(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/sub/AGENTS.md": "x\n",
                      "repo/sub/deep/y.py": "content\n",
                      "repo/sub/.claude/skills/a_b/SKILL.md":
                          "---\r\ndescription: Run the tests first.\r\n---\r\nbody\r\n"})
    assert _payloads(root, "sub/deep/y.py") == [
        f"tool.call hook additional context: Contents of {root}/repo/sub/AGENTS.md:\n\nx\n"
        "\n\n" + _announce("sub/.claude/skills", ["a_b"]) + "\n\n" + LISTING
        + "- a_b: Run the tests first." + FROM.format(o="sub")]


def test_a_system_message_of_its_own_without_nested_memory(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/CLAUDE.md": "root\n",
                      "repo/sub/CLAUDE.md": "nested\n", "repo/sub/deep/y.py": "content\n",
                      "repo/.claude/skills/top/SKILL.md": SKILL.format(d="At start."),
                      "repo/sub/.claude/skills/a_b/SKILL.md": SKILL.format(d="Run.")})
    payloads = _payloads(root, "sub/deep/y.py")
    assert payloads[0].startswith("<system-reminder>\nContents of ")
    assert payloads[1:] == [_announce("sub/.claude/skills", ["a_b"]) + "\n\n" + LISTING
                            + "- a_b: Run." + FROM.format(o="sub")]


def test_nearest_folder_first_listing_by_name(root: Path) -> None:
    skills = {f"repo/sub/.claude/skills/{n}/SKILL.md": SKILL.format(d=n.upper())
              for n in ("zeta", "alpha", "Mid", "10")}
    skills["repo/sub/.claude/skills/none/README.md"] = "not a skill\n"
    skills["repo/sub/deep/.claude/skills/aaa/SKILL.md"] = SKILL.format(d="DA")
    build_tree(root, {"home": None, "repo/sub/deep/y.py": "content\n", **skills})
    # Announced as the file system lists them (what Claude Code's readdir gives).
    listed = [n for n in os.listdir(root / "repo/sub/.claude/skills") if n != "none"]
    (text,) = _payloads(root, "sub/deep/y.py")
    assert text == ("\n\n".join([_announce("sub/deep/.claude/skills", ["aaa"]),
                                 _announce("sub/.claude/skills", listed)])
                    + "\n\n" + LISTING + "\n".join([
                        "- 10: 10" + FROM.format(o="sub"),
                        "- aaa: DA" + FROM.format(o="sub/deep"),
                        "- alpha: ALPHA" + FROM.format(o="sub"),
                        "- Mid: MID" + FROM.format(o="sub"),
                        "- zeta: ZETA" + FROM.format(o="sub")]))


def test_taken_names_are_qualified(root: Path) -> None:
    build_tree(root, {"home/.claude/skills/fmt/SKILL.md": SKILL.format(d="user"),
                      "repo/sub/deep/y.py": "content\n",
                      "repo/sub/.claude/skills/review/SKILL.md": SKILL.format(d="R"),
                      "repo/sub/.claude/skills/fmt/SKILL.md": SKILL.format(d="F"),
                      "repo/sub/.claude/skills/a_b/SKILL.md": SKILL.format(d="outer"),
                      "repo/sub/deep/.claude/skills/a_b/SKILL.md": SKILL.format(d="inner")})
    (text,) = _payloads(root, "sub/deep/y.py")
    listing = text.split(LISTING)[1].split("\n")

    def scoped(owner: str, name: str) -> str:
        return (f" (scoped to {owner}/ \u2014 use this instead of the unscoped \"{name}\" skill"
                f" when the files being changed are under {owner}/)")
    assert listing == ["- sub:a_b: outer" + FROM.format(o="sub"),
                       "- sub/deep:a_b: inner" + FROM.format(o="sub/deep"),
                       "- sub:fmt: F" + scoped("sub", "fmt"),
                       "- sub:review: R" + scoped("sub", "review")]
    assert _announce("sub/deep/.claude/skills", ["sub/deep:a_b"]) in text


def test_descriptions_and_names_as_at_start(root: Path) -> None:
    build_tree(root, {"home": None, "repo/sub/y.py": "content\n",
                      "repo/.claude/skills/top/SKILL.md": SKILL.format(d="T"),
                      "repo/sub/.claude/skills/x1/SKILL.md": "---\nname: other\n---\nFirst\n",
                      "repo/sub/.claude/skills/x3/SKILL.md":
                          "---\ndescription: use <this> & that\nwhen_to_use: when asked\n---\n",
                      "repo/sub/.claude/skills/x4/SKILL.md": "",
                      "repo/sub/.claude/skills/x5/SKILL.md": "---\nname: top\n---\nS\n",
                      "repo/sub/.claude/skills/a<b/SKILL.md": SKILL.format(d="angle")})
    (text,) = _payloads(root, "sub/y.py")
    assert text.split(LISTING)[1].split("\n") == [
        "- x1 (other): First" + FROM.format(o="sub"),
        "- x3: use &lt;this&gt; & that" + FROM.format(o="sub") + " - when asked",
        "- x4: Skill" + FROM.format(o="sub"),
        "- x5: S" + FROM.format(o="sub")]


def test_a_qualified_skill_drops_its_frontmatter_name(root: Path) -> None:
    # Scoped (a name taken at start) or found twice: no name in brackets, and the plain skill
    # with the same frontmatter name shows it.
    fm = "---\nname: {n}\ndescription: {d}\n---\n"
    build_tree(root, {"home": None, "repo/a/b/x.txt": "c\n",
                      "repo/a/.claude/skills/fmt/SKILL.md": fm.format(n="nm1", d="F1"),
                      "repo/a/b/.claude/skills/fmt/SKILL.md": fm.format(n="nm2", d="F2"),
                      "repo/a/b/.claude/skills/doctor/SKILL.md": fm.format(n="esc", d="D"),
                      "repo/a/b/.claude/skills/zz/SKILL.md": fm.format(n="esc", d="Z")})
    (text,) = _payloads(root, "a/b/x.txt")
    assert text.split(LISTING)[1].split("\n") == [
        "- a/b:doctor: D (scoped to a/b/ \u2014 use this instead of the unscoped \"doctor\" "
        "skill when the files being changed are under a/b/)",
        "- a:fmt: F1" + FROM.format(o="a"),
        "- a/b:fmt: F2" + FROM.format(o="a/b"),
        "- zz (esc): Z" + FROM.format(o="a/b")]


def test_a_missing_file_announces_without_listing(root: Path) -> None:
    build_tree(root, {"home": None, "repo/sub/y.py": "content\n",
                      "repo/sub/.claude/skills/s1/SKILL.md": SKILL.format(d="S")})
    session = ClaudeJitSession(str(root / "home"), str(root / "repo"))
    assert session.load_for(str(root / "repo/sub/missing.txt")).payloads == [
        _announce("sub/.claude/skills", ["s1"])]
    # Not listed yet: a later read lists it (and announces nothing again).
    assert session.load_for(str(root / "repo/sub/y.py")).payloads == [
        LISTING + "- s1: S" + FROM.format(o="sub")]


def test_a_folder_read_lists_the_skills(root: Path) -> None:
    build_tree(root, {"home": None, "repo/sub/d/z.txt": "z\n",
                      "repo/sub/.claude/skills/s1/SKILL.md": SKILL.format(d="S")})
    assert _payloads(root, "sub/d") == [_announce("sub/.claude/skills", ["s1"]) + "\n\n"
                                        + LISTING + "- s1: S" + FROM.format(o="sub")]


def test_an_unnamed_folder_is_not_announced(root: Path) -> None:
    build_tree(root, {"home": None, "repo/a<b/y.py": "content\n",
                      "repo/a<b/.claude/skills/s1/SKILL.md": SKILL.format(d="S")})
    assert _payloads(root, "a<b/y.py") == [LISTING + "- s1: S"]


def test_relative_to_the_working_folder_and_once(root: Path) -> None:
    build_tree(root, {"home": None, "repo/x.txt": "x\n", "repo/sub/deep/y.py": "content\n",
                      "repo/sub/deep/z.py": "content\n",
                      "repo/.claude/skills/top/SKILL.md": SKILL.format(d="T"),
                      "repo/sub/.claude/skills/s1/SKILL.md": SKILL.format(d="S"),
                      "repo/sub/deep/.claude/skills/d1/SKILL.md": SKILL.format(d="D")})
    session = ClaudeJitSession(str(root / "home"), str(root / "repo/sub"))
    assert session.load_for(str(root / "repo/sub/deep/y.py")).payloads == [
        _announce("deep/.claude/skills", ["d1"]) + "\n\n" + LISTING + "- d1: D"
        + FROM.format(o="deep")]
    assert session.load_for(str(root / "repo/sub/deep/z.py")).payloads == []
    # In the working folder, or outside it: no folder to search.
    fresh = ClaudeJitSession(str(root / "home"), str(root / "repo"))
    assert fresh.load_for(str(root / "repo/x.txt")).payloads == []
    assert fresh.load_for(str(root / "elsewhere/x.txt")).payloads == []


def test_jit_prints_the_skills_found(root: Path) -> None:
    build_tree(root, {"home": None, "repo/.git": None, "repo/sub/y.py": "content\n",
                      "repo/sub/.claude/skills/s1/SKILL.md": SKILL.format(d="S")})
    run = subprocess.run([sys.executable, "-m", "memlens", "jit", "--agent", "claude",
                          "--home", str(root / "home"), "--cwd", str(root / "repo"),
                          "sub/y.py"], capture_output=True, text=True, timeout=60,
                         cwd=root / "repo")
    assert run.stdout == (_announce("sub/.claude/skills", ["s1"]) + "\n\n" + LISTING
                          + "- s1: S" + FROM.format(o="sub") + "\n")


def test_hostile_skill_folders(root: Path) -> None:
    tree: dict[str, str | None] = {"home": None, "repo/sub/y.py": "content\n",
                                   "repo/sub/.claude/skills/big/SKILL.md": "x" * 1_000_100,
                                   "repo/sub/.claude/skills/nul/SKILL.md": "\0\x1b[31m\n",
                                   "repo/sub/.claude/skills/dir/SKILL.md/inner": "x\n"}
    tree.update({f"repo/sub/.claude/skills/m{i:04d}/SKILL.md": SKILL.format(d="d")
                 for i in range(1200)})
    build_tree(root, tree)
    (root / "repo/sub/.claude/skills/loop").symlink_to(root / "repo/sub/.claude/skills/loop")
    (text,) = _payloads(root, "sub/y.py")
    # At most 1,000 entries of a folder are looked at; what is not a skill is left out.
    announced = text.split(LISTING)[0]
    assert 996 <= announced.count("\n- m") <= 1000
    assert "- big" not in text and "- dir" not in text and "- loop" not in text


def test_folders_git_ignores_are_not_searched(root: Path) -> None:
    git = {"repo/.git/HEAD": "ref: refs/heads/main\n", "repo/.git/objects": None,
           "repo/.gitignore": "ign/\n", "repo/ok/.gitignore": "inner\n"}
    build_tree(root, {"home": None, **git, "repo/ign/deep/y.py": "content\n",
                      "repo/ign/deep/.claude/skills/s3/SKILL.md": SKILL.format(d="S3"),
                      "repo/ok/inner/y.py": "content\n",
                      "repo/ok/inner/.claude/skills/s1/SKILL.md": SKILL.format(d="S1"),
                      "repo/ok/.claude/skills/s2/SKILL.md": SKILL.format(d="S2")})
    assert _payloads(root, "ign/deep/y.py") == []
    assert _payloads(root, "ok/inner/y.py") == [
        _announce("ok/.claude/skills", ["s2"]) + "\n\n" + LISTING + "- s2: S2"
        + FROM.format(o="ok")]
    # A `.git` without HEAD is no repository to git: nothing is ignored.
    (root / "repo/.git/HEAD").unlink()
    assert "- s3" in _payloads(root, "ign/deep/y.py")[0]


def test_an_ignore_file_that_is_a_fifo_is_never_opened(root: Path) -> None:
    # A repository's `.gitignore` and `.git/info/exclude` may be FIFOs: opening one would
    # block until a writer comes. They hold no rules, and the read's skills are found.
    build_tree(root, {"home": None, "repo/.git/HEAD": "ref: refs/heads/main\n",
                      "repo/.git/info": None, "repo/sub/y.py": "content\n",
                      "repo/sub/.claude/skills/s1/SKILL.md": SKILL.format(d="S1")})
    os.mkfifo(root / "repo/.gitignore")
    os.mkfifo(root / "repo/.git/info/exclude")
    os.mkfifo(root / "repo/sub/.gitignore")
    (text,) = _payloads(root, "sub/y.py")
    assert "- s1: S1" in text
