"""Rules one agent receives together that disagree (`instruction-conflict`) and agents told
different things (`agents-disagree`): workspace/conflicts.py over each agent's reading, and
where they show — `check` (text, JSON, SARIF with related locations), the report, `memlens
conflicts`, the language server's diagnostics (docs/reference.md "Rules that disagree")."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types

from memlens.agents import agent_by_id
from memlens.lsp.convert import PositionConverter
from memlens.model import MemorySettings
from memlens.protocol.conflicts import ConflictsResult
from memlens.protocol.memory import Diagnostic
from memlens.workspace.conflicts import (
    CONFLICT,
    DISAGREE,
    Finding,
    diagnostics,
    find_conflicts,
    folder_readings,
)
from memlens.workspace.matrix import agent_matrix

from .conftest import build_tree
from .test_cli import memlens


def findings(root: Path, *agents: str) -> list[Finding]:
    settings = MemorySettings(home=str(root / "home"), trusted=True)
    readings = folder_readings(str(root / "proj"), settings, [agent_by_id(a) for a in agents])
    return find_conflicts(readings)


def said(root: Path, *agents: str) -> list[Diagnostic]:
    return diagnostics(findings(root, *agents), str(root / "proj"))


def tree(root: Path, files: dict[str, str]) -> Path:
    build_tree(root, {"home": None, "proj/.git": None, **{f"proj/{k}": v
                                                         for k, v in files.items()}})
    return root / "proj"


def test_one_agent_two_rules_at_start_up_on_both_lines(root: Path) -> None:
    proj = tree(root, {"CLAUDE.md": "# Project\n\nUse pnpm.\n",
                       ".claude/rules/deps.md": "Use yarn.\n"})
    [finding] = findings(root, "claude")
    assert finding.code == CONFLICT and finding.subject == "package manager (JavaScript)"
    [side] = finding.sides
    assert side.scope is None  # at start-up
    out = said(root, "claude")
    assert [(d.path, d.line, d.col, d.end_col, d.severity) for d in out] == [
        (str(proj / "CLAUDE.md"), 3, 1, 9, "warning"),
        (str(proj / ".claude/rules/deps.md"), 1, 1, 9, "warning")]
    first, second = out
    # Each points at the other, and says which the agent sees last (the rule, loaded after
    # CLAUDE.md).
    assert [(r.path, r.line) for r in first.related or []] == [
        (str(proj / ".claude/rules/deps.md"), 1)]
    assert [(r.path, r.line) for r in second.related or []] == [(str(proj / "CLAUDE.md"), 3)]
    assert first.message == (
        "Rules disagree on the package manager (JavaScript): pnpm here; yarn at "
        ".claude/rules/deps.md:1 (Claude Code at start-up; seen last: .claude/rules/deps.md:1)")
    assert second.message.endswith("(Claude Code at start-up; seen last: this line)")


def test_the_later_line_of_one_file_is_seen_last(root: Path) -> None:
    tree(root, {"AGENTS.md": "- Never push.\n- Run the tests.\n- Push your changes.\n"})
    [finding] = findings(root, "codex")
    assert finding.subject == "push"
    assert finding.sides[0].last.decision.line == 3
    assert [p.decision.value for p in finding.rules] == ["never", "do"]


def test_an_imported_rule_stands_where_it_is_imported(root: Path) -> None:
    """Gemini CLI inlines an import where the `@` stands: what follows it comes later."""
    tree(root, {"GEMINI.md": "@./deps.md\nUse pnpm.\n", "deps.md": "Use yarn.\n"})
    [finding] = findings(root, "gemini")
    assert finding.sides[0].last.path.endswith("GEMINI.md")
    (root / "proj/GEMINI.md").write_text("Use pnpm.\n@./deps.md\n")
    [finding] = findings(root, "gemini")
    assert finding.sides[0].last.path.endswith("deps.md")


def test_scope_on_read(root: Path) -> None:
    """A nested CLAUDE.md loads when Claude Code reads a file in its folder: the conflict says
    so, and the nested file comes later."""
    proj = tree(root, {"CLAUDE.md": "Use pnpm.\n", "web/CLAUDE.md": "Use npm.\n",
                       "web/app.ts": ""})
    [finding] = findings(root, "claude")
    [side] = finding.sides
    assert side.scope is not None
    assert side.scope.replace("{agent}", "Claude Code") == \
        "when Claude Code reads a file in web/"
    assert side.last.path == str(proj / "web/CLAUDE.md")
    [top, _] = said(root, "claude")
    assert "Claude Code when reading a file in web/; seen last: web/CLAUDE.md:1" in top.message


def test_no_finding_for_files_no_agent_receives_together(root: Path) -> None:
    """web/ and api/ load on reads of different folders; AGENTS.md reaches Codex, CLAUDE.md
    Claude Code: no agent receives both of either pair."""
    tree(root, {"web/CLAUDE.md": "Use npm.\n", "api/CLAUDE.md": "Use yarn.\n",
                "web/a.ts": "", "api/b.ts": ""})
    assert findings(root, "claude") == []
    for rel in ("web/CLAUDE.md", "api/CLAUDE.md"):
        (root / "proj" / rel).unlink()
    tree(root, {"AGENTS.md": "Use pnpm.\n", "CLAUDE.md": "Use bun.\n"})
    assert [f.code for f in findings(root, "claude", "codex")] == [DISAGREE]


def test_no_finding_for_rules_that_agree(root: Path) -> None:
    tree(root, {"CLAUDE.md": "Use pnpm.\nNever use npm.\nRun tests with `pnpm test`.\n",
                ".claude/rules/a.md": "Use pnpm instead of npm.\nRun tests with `pytest`.\n",
                "AGENTS.md": "Use pnpm.\n"})
    assert findings(root, "claude", "codex") == []


def test_a_rule_scoped_to_no_file_today_is_not_compared(root: Path) -> None:
    tree(root, {"CLAUDE.md": "Use pnpm.\n",
                ".claude/rules/py.md": "---\npaths: [\"**/*.py\"]\n---\nUse npm.\n"})
    assert findings(root, "claude") == []
    (root / "proj/tool.py").write_text("")
    [finding] = findings(root, "claude")
    assert finding.sides[0].scope is not None and "py.md" in finding.sides[0].scope


def test_agents_disagree(root: Path) -> None:
    proj = tree(root, {"CLAUDE.md": "# Deps\nUse pnpm.\n", "AGENTS.md": "Use yarn.\n"})
    [finding] = findings(root, "claude", "codex")
    assert finding.code == DISAGREE
    out = said(root, "claude", "codex")
    assert [(d.path, d.line, d.severity, d.code) for d in out] == [
        (str(proj / "CLAUDE.md"), 2, "info", DISAGREE),
        (str(proj / "AGENTS.md"), 1, "info", DISAGREE)]
    assert out[0].message == ("Agents are told different things about the package manager "
                              "(JavaScript): Claude Code: pnpm here; Codex: yarn (AGENTS.md:1)")
    assert [r.line for r in out[0].related or []] == [1]


def test_check_and_sarif_carry_both_lines(root: Path) -> None:
    proj = tree(root, {"CLAUDE.md": "Use pnpm.\n", ".claude/rules/deps.md": "Use yarn.\n"})
    text = memlens("check", "--agent", "claude", "--fail-on", "warning", cwd=proj,
                   home=root / "home")
    assert text.code == 1
    assert "CLAUDE.md:1:1: warning[instruction-conflict] Rules disagree" in text.out
    assert ".claude/rules/deps.md:1:1: warning[instruction-conflict]" in text.out
    listed = memlens("check", "--agent", "claude", "--format", "json", cwd=proj,
                     home=root / "home").json()
    assert isinstance(listed, list)
    conflict = next(d for d in listed if d["code"] == "instruction-conflict")
    assert conflict["related"][0]["line"] == 1
    sarif = memlens("check", "--agent", "claude", "--format", "sarif", cwd=proj,
                    home=root / "home").json()
    assert isinstance(sarif, dict)
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "instruction-conflict"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in results} == {"CLAUDE.md", ".claude/rules/deps.md"}
    related = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]:
               r["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
               for r in results}
    assert related == {"CLAUDE.md": ".claude/rules/deps.md",
                       ".claude/rules/deps.md": "CLAUDE.md"}
    assert results[0]["relatedLocations"][0]["message"]["text"] in ("yarn: Use yarn.",
                                                                     "pnpm: Use pnpm.")


def test_the_report_lists_them(root: Path) -> None:
    proj = tree(root, {"CLAUDE.md": "Use pnpm.\n", ".claude/rules/deps.md": "Use yarn.\n"})
    matrix = agent_matrix(str(proj), MemorySettings(home=str(root / "home")),
                          agents=["claude"])
    assert sorted(d.path for d in matrix.diagnostics if d.code == CONFLICT) == [
        str(proj / ".claude/rules/deps.md"), str(proj / "CLAUDE.md")]


def test_the_report_has_a_section_of_its_own_with_both_lines(root: Path) -> None:
    from memlens.reports.report import html_report, markdown_summary

    # A file's name is the repository's: in the Markdown summary it stays a code span.
    proj = tree(root, {"CLAUDE.md": "Use pnpm.\n",
                       ".claude/rules/[x](https:evil) <b>.md": "Use yarn.\n"})
    matrix = agent_matrix(str(proj), MemorySettings(home=str(root / "home")),
                          agents=["claude"])
    text = markdown_summary(matrix)
    section = text[text.index("#### Rules that disagree"):]
    assert "- `CLAUDE.md:1` warning[instruction-conflict]" in section
    assert "  - `.claude/rules/[x](https:evil) <b>.md:1` `yarn: Use yarn.`" in section
    assert "- `.claude/rules/[x](https:evil) <b>.md:1` warning[instruction-conflict]" in section
    page = html_report(matrix, "test")
    part = page[page.index('<h2 id="conflicts">'):page.index('<h2 id="hidden">')]
    assert part.count('class="card"') == 2 and "&lt;b&gt;.md" in part and "<b>" not in part
    # None to show: the section says so.
    (proj / ".claude/rules/[x](https:evil) <b>.md").write_text("Use pnpm.\n")
    clean = agent_matrix(str(proj), MemorySettings(home=str(root / "home")), agents=["claude"])
    assert "#### Rules that disagree" not in markdown_summary(clean)
    assert "None: no two rules" in html_report(clean, "test")


def test_conflicts_command(root: Path) -> None:
    proj = tree(root, {"CLAUDE.md": "Use pnpm.\n", "web/CLAUDE.md": "Use npm.\n",
                       "web/a.ts": "", "AGENTS.md": "Use yarn.\n"})
    run = memlens("conflicts", "--agent", "claude", cwd=proj, home=root / "home")
    assert run.code == 0
    assert run.out == (
        "warning[instruction-conflict] package manager (JavaScript): pnpm (CLAUDE.md:1), "
        "npm (web/CLAUDE.md:1)\n"
        "  when Claude Code reads a file in web/: sees npm (web/CLAUDE.md:1) last\n")
    answer = ConflictsResult.model_validate(
        memlens("conflicts", "--json", cwd=proj, home=root / "home",
                env={"MEMLENS_AGENTS": "claude,codex"}).json())
    assert answer.agents[:2] == ["claude", "codex"]
    codes = sorted(f.code for f in answer.findings)
    assert codes == ["agents-disagree", "instruction-conflict"]
    conflict = next(f for f in answer.findings if f.code == "instruction-conflict")
    assert [(s.agent, s.when, s.seen_last.value) for s in conflict.agents] == [
        ("claude", "on-read", "npm")]


def test_the_editor_gets_related_information_on_both_lines(root: Path) -> None:
    proj = tree(root, {"CLAUDE.md": "Use pnpm.\n", ".claude/rules/deps.md": "Use yarn.\n"})
    first = said(root, "claude")[0]
    lsp = PositionConverter().to_lsp_diagnostic(first, "Use pnpm.\n", (proj / "CLAUDE.md")
                                                .as_uri())
    assert lsp.code == "instruction-conflict" and lsp.severity == types.DiagnosticSeverity.Warning
    [related] = lsp.related_information or []
    assert related.location.uri == (proj / ".claude/rules/deps.md").as_uri()
    assert related.location.range.start == types.Position(line=0, character=0)
    assert related.message == "yarn: Use yarn."


def test_json_of_other_diagnostics_is_unchanged(root: Path) -> None:
    """`related` is only there when a diagnostic has other places."""
    d = Diagnostic(path="/x", line=1, col=1, end_line=1, end_col=2, severity="info",
                   code="c", message="m")
    assert "related" not in json.dumps(d.wire())
