"""The agent matrix as a file: one self-contained HTML page (no network, no external asset: it
opens from a CI artifact or an email; its Content-Security-Policy forbids loading anything)
and a Markdown table for a CI job summary. Both render `protocol.matrix.MatrixResult`; what
each cell says is decided in workspace/matrix.py."""

from __future__ import annotations

import posixpath
from importlib import resources

from memlens.files.output import markdown_code
from memlens.protocol.matrix import MatrixResult
from memlens.protocol.memory import Diagnostic

ICONS = {"startup": "●", "on-read": "◐", "on-demand": "◌", "listed": "◇", "not-read": "○"}
# A cell whose file is not the agent's kind at all (`MatrixCell.foreign`): a dash, so that the
# cells that say something stand out in a row of ten agents.
FOREIGN = "–"
CONFLICT_CODES = ("instruction-conflict", "agents-disagree")


def _relative(result: MatrixResult, path: str) -> str:
    folder = result.folder.rstrip("/") + "/"
    if path.startswith(folder):
        return posixpath.relpath(path, result.folder)
    home = result.home.rstrip("/") + "/"
    return "~/" + posixpath.relpath(path, result.home) if path.startswith(home) else path


def html_report(result: MatrixResult, version: str) -> str:
    import jinja2

    template = resources.files("memlens").joinpath("data/report.html.j2").read_text("utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    scale = max([0, *(max(a.map.tokens, a.map.limit or 0) for a in result.agents)])
    return env.from_string(template).render(
        r=result, version=version, icons=ICONS, foreign=FOREIGN, rel=lambda p: _relative(result, p),
        conflicts=conflict_findings(result),
        scale_all=scale)


def conflict_findings(result: MatrixResult) -> list[Diagnostic]:
    """The rules that disagree among the matrix's diagnostics (`instruction-conflict`: one
    agent told two things; `agents-disagree`: agents in one folder told different things),
    for the report's own section (workspace/conflicts.py finds them)."""
    return [d for d in result.diagnostics if d.code in CONFLICT_CODES]


def _md(text: str) -> str:
    """A table cell of our own words (an agent's label, a cell's word): a pipe would end it."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_summary(result: MatrixResult) -> str:
    """The matrix as GitHub-flavoured Markdown (for `$GITHUB_STEP_SUMMARY`). Every name from
    disk (the folder, each file) is a code span (`files.output.markdown_code`): a file name
    can hold no link, image, @mention, heading, HTML or line break that renders, and never
    adds a cell or a row (docs/security.md)."""
    head = "| File | " + " | ".join(_md(a.label) for a in result.agents) + " |"
    rule = "|---|" + "---|" * len(result.agents)
    lines = [f"### What each agent reads in {markdown_code(result.folder)}", "", head, rule]
    for row in result.rows:
        cells = []
        for agent in result.agents:
            cell = row.cells[agent.id]
            if cell.foreign:
                cells.append(FOREIGN)
                continue
            text = f"{ICONS[cell.state]} {cell.word}" + (f" ({cell.cut})" if cell.cut else "")
            cells.append(_md(text if cell.state == "not-read" else f"**{text}**"))
        lines.append(f"| {markdown_code(row.relative, table=True)} | " + " | ".join(cells)
                     + " |")
    lines += ["", "| Agent | Tokens at start-up | Files |", "|---|---:|---:|"]
    for agent in result.agents:
        lines.append(f"| {_md(agent.label)} | {agent.map.tokens:,} | "
                     f"{len(agent.map.segments)} |")
    conflicts = conflict_findings(result)
    if conflicts:
        lines += ["", "#### Rules that disagree", ""]
        for d in conflicts:
            # The messages quote the files' rules: code spans, so nothing in them renders.
            lines.append(f"- {markdown_code(f'{_relative(result, d.path)}:{d.line}')} "
                         f"{d.severity}[{d.code}] {markdown_code(d.message)}")
            lines += [f"  - {markdown_code(f'{_relative(result, r.path)}:{r.line}')} "
                      f"{markdown_code(r.message)}" for r in d.related or []]
    errors = sum(d.severity == "error" for d in result.diagnostics)
    warnings = sum(d.severity == "warning" for d in result.diagnostics)
    lines += ["", f"{errors} error(s), {warnings} warning(s), {len(result.hidden)} hidden-content "
              f"finding(s). ● at start-up · ◐ on read · ◌ on demand · ○ not read · "
              f"{FOREIGN} not its file", ""]
    return "\n".join(lines)
