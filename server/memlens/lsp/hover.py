"""Hover: a reference shows its target as the agent reading the file includes it (Gemini CLI's
import, Claude Code's include); line 1 of a memory file shows what loads for that folder."""

from __future__ import annotations

import asyncio
import json
import os
import posixpath
import re
import urllib.parse
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from memlens.agents import AGENT_IDS, agent_by_id, owner_of
from memlens.agents.base import MemoryAgent
from memlens.agents.gemini.imports import ImportProcessor
from memlens.agents.gemini.trust import restricted_notice, rules_file_to_open
from memlens.files.nodecompat import dirname, resolve
from memlens.files.output import markdown_code, markdown_text
from memlens.lsp.agents_shown import agents_shown
from memlens.lsp.convert import path_of, uri_of
from memlens.lsp.links import reference_target, shown_reading_agent
from memlens.lsp.merged import folder_budget, memory_for, trust_source
from memlens.lsp.on_read import agent_label
from memlens.lsp.previews import visible
from memlens.protocol.matrix import MatrixCell
from memlens.protocol.skills import AgentSkill
from memlens.reports.budgets import ContextBudget, context_budget, summary, table

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

IMPORT_PREVIEW_CHARS = 4_000
MERGED_PREVIEW_CHARS = 8_000


# A rendered context is plain text with source markers, not markdown prose: its code block is
# tagged with the extension's `memlens-context` language (a client without it shows plain text).
CONTEXT_LANGUAGE = "memlens-context"


def fenced(text: str, language: str = "markdown") -> str:
    """A markdown code block whose fence is longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def clip(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit], True)


def show_command_link(path: str) -> str:
    args = urllib.parse.quote(json.dumps([uri_of(path)]))
    return f"command:memlens.showMergedContext?{args}"


def import_hover(ls: MemlensServer, path: str, text: str, position: types.Position
                 ) -> types.Hover | None:
    """On a reference: its target as the agent that reads the file includes it (links.py
    `agent_reading`: a CLAUDE.md's `@AGENTS.md` by Claude Code's rules, a GEMINI.md's import
    by Gemini CLI's); none where that agent is not shown (links.py `shown_reading_agent`)."""
    agent = shown_reading_agent(ls, path)
    if agent is None:
        return None
    if not agent.rendered_by_index:
        return _agent_include_hover(ls, agent, path, text, position)
    token = ls.positions.token_at(text, position)
    if token is None:
        return None
    index = ls.service.index_for(path)
    target = resolve(dirname(path), token.path)
    processor = ImportProcessor(index.reader, index.engine().root_finder,
                                max_chars=IMPORT_PREVIEW_CHARS * 4)
    wrapped = processor.process(f"@{token.path}", dirname(path), source_file=path)
    header = f"**{markdown_code('@' + token.path)}** → {markdown_code(target)}"
    if _said_by_a_problem(ls, path, position.line, wrapped.content):
        # VS Code shows the problem's detail in the same hover: the comment once is enough.
        value = (f"{header}\n\nGemini CLI includes no file here: it puts the error comment "
                 "the problem shows in its place.")
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value=value),
                           range=ls.positions.range_of(text, token.start, token.end))
    body, cut = clip(visible(ls, path, wrapped.content, base_file=path), IMPORT_PREVIEW_CHARS)
    note = "\n\n*(preview truncated)*" if cut else ""
    value = f"{header}\n\nAs Gemini CLI includes it:\n\n{fenced(body)}{note}"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
                       range=ls.positions.range_of(text, token.start, token.end))


def _agent_include_hover(ls: MemlensServer, agent: MemoryAgent, path: str, text: str,
                         position: types.Position) -> types.Hover | None:
    """An agent other than Gemini CLI: the file it sends for the reference, as it sends it
    (its load working in the file's folder, where the file and what it includes are read),
    or that it includes nothing there."""
    offset = ls.positions.offset_at(text, position)
    token = next((t for t in agent.find_references(text)
                  if not t.in_code and t.start <= offset <= t.end), None)
    if token is None:
        return None
    target = reference_target(ls, agent, path, token.path)
    index = ls.service.index_for(path)
    memory = agent.load(dirname(path), index.settings, index.reader)
    sent = next((f for f in memory.files if f.path == target and f.content is not None), None)
    header = f"**{markdown_code('@' + token.path)}** → {markdown_code(target)}"
    if sent is None:
        value = (f"{header}\n\n{agent_label(agent)} includes nothing here: "
                 + ("no such file." if not posixpath.isfile(target) else
                    "it does not include this file from here."))
    else:
        body, cut = clip(visible(ls, path, sent.content or "", base_file=path),
                         IMPORT_PREVIEW_CHARS)
        note = "\n\n*(preview truncated)*" if cut else ""
        value = f"{header}\n\nAs {agent_label(agent)} includes it:\n\n{fenced(body)}{note}"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value),
                       range=ls.positions.range_of(text, token.start, token.end))


def _said_by_a_problem(ls: MemlensServer, path: str, line: int, included: str) -> bool:
    """Whether what Gemini CLI includes for an import on `line` (0-based) is a failure
    comment that a diagnostic on that line already carries in its detail."""
    comment = included.strip()
    if not comment.startswith("<!-- Import failed"):
        return False
    return any(d.line - 1 == line and d.detail and comment in d.detail
               for d in ls.service.diagnostics_for(path))


TRUST_LINK = "[Manage Workspace Trust](command:workbench.trust.manage)"


def open_link(path: str) -> str:
    return f"command:vscode.open?{urllib.parse.quote(json.dumps([uri_of(path)]))}"


def merged_hover(ls: MemlensServer, path: str) -> types.Hover | None:
    merged, count, chars, jit_count, trusted = memory_for(ls.service, path)
    folder = dirname(path)
    body, cut = clip(visible(ls, path, merged), MERGED_PREVIEW_CHARS)
    jit_note = f" ({jit_count} loaded just in time for this folder)" if jit_count else ""
    budget = folder_budget(ls.service, path)
    lines = [f"**Merged context for {markdown_code(folder)}** — "
             f"{summary(count, chars, budget.total.tokens)}{jit_note}"]
    if not trusted:
        source = trust_source(ls.service, path)
        home = ls.service.settings_for(path).home
        rules = rules_file_to_open(source, home)
        link = (f"[Open {posixpath.basename(rules)}]({open_link(rules)})" if rules
                else TRUST_LINK)
        lines += ["", f"**{restricted_notice(count, source, home)}** {link}"]
    if budget.files:
        lines += ["", budget_table(budget, folder)]
    lines += ["", fenced(body, CONTEXT_LANGUAGE) if body else "*(no memory loaded)*"]
    if cut:
        lines += ["", f"*Truncated.* [Open the full merged context]({show_command_link(path)})"]
    value = "\n".join(lines)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))


def budget_table(budget: ContextBudget, folder: str) -> str:
    """The per-file figures (chars, bytes, tokens) and the folder total, paths relative to
    `folder` where they lie inside it."""
    rel = {f.path: posixpath.relpath(f.path, folder) for f in budget.files
           if f.path.startswith(folder + "/")}
    return table(budget, rel)


def dialect_hover(ls: MemlensServer, path: str, agent: MemoryAgent) -> types.Hover:
    """Line 1 of another agent's file (a CLAUDE.md, an AGENTS.md): what that agent loads for
    this folder."""
    index = ls.service.index_for(path)
    memory = agent.load(dirname(path), index.settings, index.reader)
    body, cut = clip(visible(ls, path, memory.text), MERGED_PREVIEW_CHARS)
    budget = context_budget(agent.id, [(f.path, f.label, f.content) for f in memory.files])
    figures = f"{budget_table(budget, dirname(path))}\n\n" if budget.files else ""
    value = (f"{memory.headline}\n\n{figures}"
             f"{fenced(body, CONTEXT_LANGUAGE) if body else '*(nothing loads)*'}")
    if cut:
        value += "\n\n*(preview truncated)*"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=value))


def skill_hover(ls: MemlensServer, path: str, text: str, position: types.Position
                ) -> types.Hover | None:
    """On the `name:` line of a SKILL.md: each agent shown here that lists skills, and looks
    at this one, says its tier and whether it offers it (workspace/skills.py `agent_skills`,
    what `memlens skills list --agent A` says); one that finds it only on a read (Claude
    Code's skills below the working folder) says what the agent matrix's cell says, the one
    answer of workspace/reading.py (listed on read, or why not offered); an agent that never
    looks at the file is silent."""
    from memlens.workspace.skills import SKILL_AGENTS, agent_skills

    if posixpath.basename(path) != "SKILL.md":
        return None
    lines = text.split("\n")
    if position.line >= len(lines) or not re.match(r"^\s*name\s*:", lines[position.line]):
        return None
    folder = ls.service.folder_or_default(path)
    if folder is None:
        raise JsonRpcInvalidParams("open a workspace folder first")
    settings, trusted = ls.service.settings_for(path), ls.service.trusted(folder)
    shown = agents_shown(ls, folder).shown
    verdicts: list[AgentSkill] = []
    said: list[str] = []
    cells: dict[str, MatrixCell] | None = None
    for agent_id in (a for a in AGENT_IDS if a in SKILL_AGENTS and a in shown):
        label = agent_label(agent_by_id(agent_id))
        listed = [s for s in agent_skills(agent_id, settings.home, folder, trusted=trusted,
                                          version=settings.agent_version(agent_id)).skills
                  if s.location == path]
        verdicts += listed
        said += [f"{label}: {_skill_verdict(skill)}" for skill in listed]
        if not listed:
            if cells is None:
                cells = _matrix_cells(ls, folder, path)
            cell = cells.get(agent_id)
            if cell is not None and not cell.foreign:
                said.append(f"{label}: {_cell_verdict(cell)}")
    name = next((s.name for s in verdicts if s.name), posixpath.basename(dirname(path)))
    description = next((s.description for s in verdicts if s.description), "")
    if not said:
        said = ["not loaded (outside the skills folders of the agents shown here)"]
    header = f"**Skill {markdown_code(name)}**"
    value = (f"{header} — {said[0]}" if len(said) == 1
             else "\n".join([header, "", *(f"- {line}" for line in said)]))
    if description:
        value += f"\n\n{markdown_text(description)}"
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                    value=value))


def _matrix_cells(ls: MemlensServer, folder: str, path: str) -> dict[str, MatrixCell]:
    """The agent matrix's cells for `path` (kept per workspace generation: the panel and the
    conflict diagnostics ask for the same one); none when it is no row."""
    matrix = ls.service.matrix(folder, ls.service.settings_for(folder))
    real = os.path.realpath(path)
    row = next((r for r in matrix.rows if r.path == path), None) or next(
        (r for r in matrix.rows if posixpath.basename(r.path) == "SKILL.md"
         and os.path.realpath(r.path) == real), None)
    return row.cells if row is not None else {}


def _skill_verdict(skill: AgentSkill) -> str:
    status = ("offered" if skill.offered
              else f"**not offered**: {markdown_text(skill.reason or 'not listed')}")
    return f"tier: {markdown_text(skill.tier)}; {status}"


def _cell_verdict(cell: MatrixCell) -> str:
    """A matrix cell in a line: its words, what triggers it, and why."""
    when = f" {markdown_text(cell.trigger)}" if cell.trigger and cell.state != "not-read" else ""
    return f"**{markdown_text(cell.word)}**{when}: {markdown_text(cell.why)}"


def register(server: MemlensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: MemlensServer, params: types.HoverParams) -> types.Hover | None:
        path = path_of(params.text_document.uri)
        if path is None:
            return None
        text = ls.text_of(path)
        if text is None:
            return None
        found = import_hover(ls, path, text, params.position)
        if found is not None:
            return found
        if posixpath.basename(path) == "SKILL.md":
            # Off the event loop: on a change the agent matrix it may ask for is computed
            # anew (all of the folder's agents), and other requests must not wait for it.
            found = await asyncio.to_thread(skill_hover, ls, path, text, params.position)
            if found is not None:
                return found
        if params.position.line == 0 and ls.service.is_memory_file(path):
            return merged_hover(ls, path)
        owner = owner_of(path, ls.service.settings_for(path))
        # An agent the index renders has its line-1 hover above (merged_hover); any other
        # agent's is asked through the interface.
        if params.position.line == 0 and owner is not None and not owner.rendered_by_index:
            return dialect_hover(ls, path, owner)
        return None
