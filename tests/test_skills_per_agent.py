"""`memlens skills list --agent claude|codex` through the real command line: every SKILL.md the
agent looks at, offered or dropped with why, its listing as it sends it, and the diagnostics
`memlens check` gives for the dropped ones. The expected listings are the ones Claude Code
2.1.330 and Codex 0.169.0 sent for these trees (tests/conformance/test_skills.py checks the
rules against the agents themselves)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import build_tree
from .test_cli import memlens

HEAD = "The following skills are available for use with the Skill tool:\n\n"


def _skills(agent: str, cwd: Path, home: Path) -> dict[str, object]:
    run = memlens("skills", "list", "--json", "--trusted", "--home", str(home), "--agent", agent,
                  cwd=cwd, home=home)
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert isinstance(data, dict)
    return data


def test_claude_listing_and_what_it_drops(root: Path) -> None:
    build_tree(root, {
        "proj/.git": None,
        "proj/.claude/skills/b/SKILL.md": "---\ndescription: \"two\\nlines <x>\"\n---\n",
        "proj/.claude/skills/A/SKILL.md": "# Heading first\n\nbody\n",
        "proj/.claude/skills/dup/SKILL.md": "---\ndescription: project dup\n---\n",
        "proj/.claude/skills/other/SKILL.md": "---\nname: renamed\ndescription: d\n---\n",
        "proj/.claude/skills/nested/inner/SKILL.md": "---\ndescription: not at start\n---\n",
        "home/.claude/skills/dup/SKILL.md": "---\ndescription: user dup\nwhen_to_use: w\n---\n",
    })
    proj, home = root / "proj", root / "home"
    data = _skills("claude", proj, home)
    assert data["listing"] == (HEAD + "- dup: user dup - w\n- A: Heading first\n"
                               "- b: two lines &lt;x&gt;\n- other (renamed): d")
    skills = data["skills"]
    assert isinstance(skills, list)
    dropped = [s for s in skills if not s["offered"]]
    assert [s["location"] for s in dropped] == [str(proj / ".claude/skills/dup/SKILL.md")]
    assert "shadowed" in dropped[0]["reason"]
    # Claude Code in use: `memlens check` says so (its skills are checked with its memory).
    check = memlens("check", "--format", "json", "--trusted", "--home", str(home), ".",
                    cwd=proj, home=home, env={"MEMLENS_AGENTS": "claude"})
    codes = [(Path(d["path"]).parent.name, d["code"]) for d in json.loads(check.out)
             if d["code"].startswith("skill-")]
    assert ("dup", "skill-duplicate") in codes


def test_codex_listing_and_what_it_drops(root: Path) -> None:
    build_tree(root, {
        "proj/.git": None,
        "proj/.agents/skills/fmt/SKILL.md": "---\nname: fmt\ndescription: Format.\n---\n",
        "proj/.agents/skills/deep/a/SKILL.md": "---\ndescription: Nested.\n---\n",
        "proj/.agents/skills/nodesc/SKILL.md": "---\nname: nodesc\n---\n",
        "proj/.agents/skills/nofm/SKILL.md": "# no frontmatter\n",
        "proj/sub/.agents/skills/fmt/SKILL.md": "---\nname: fmt\ndescription: Sub fmt.\n---\n",
        "home/.agents/skills/mine/SKILL.md": "---\nname: mine\ndescription: Mine.\n---\n",
    })
    proj, home = root / "proj", root / "home"
    data = _skills("codex", proj / "sub", home)
    assert data["listing"] == "\n".join([
        "<skills_instructions>", "## Skills",
        "A skill is a set of local instructions to follow that is stored in a `SKILL.md` file. "
        "Below is the list of skills that can be used. Each entry includes a name, description, "
        "and a short path that can be expanded into an absolute path using the skill roots "
        "table.",
        "### Skill roots", f"- `r0` = `{home}/.agents/skills`",
        f"- `r1` = `{proj}/.agents/skills`", f"- `r2` = `{proj}/sub/.agents/skills`",
        "### Available skills",
        "- a: Nested. (file: r1/deep/a/SKILL.md)",
        "- fmt: Format. (file: r1/fmt/SKILL.md)",
        "- fmt: Sub fmt. (file: r2/fmt/SKILL.md)",
        "- mine: Mine. (file: r0/mine/SKILL.md)",
        "</skills_instructions>"])
    skills = data["skills"]
    assert isinstance(skills, list)
    reasons = {Path(s["location"]).parent.name: s["reason"] for s in skills if not s["offered"]}
    assert reasons == {"nodesc": "no description: Codex skips it",
                       "nofm": "no YAML frontmatter (--- lines): Codex skips it"}
    check = memlens("check", "--format", "json", "--trusted", "--home", str(home), ".",
                    cwd=proj / "sub", home=home, env={"MEMLENS_AGENTS": "codex"})
    flagged = {Path(d["path"]).parent.name for d in json.loads(check.out)
               if d["code"] == "skill-not-offered"}
    assert flagged == {"nodesc", "nofm"}


def test_an_agent_without_a_skills_listing_is_refused(root: Path) -> None:
    build_tree(root, {"proj/AGENTS.md": "x\n"})
    run = memlens("skills", "list", "--agent", "agents", cwd=root / "proj", home=root)
    assert run.code != 0 and "no skills listing" in run.err
