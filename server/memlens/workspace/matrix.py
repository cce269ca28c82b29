"""The agent matrix of a workspace folder (protocol/matrix.py): every memory and instruction
file × every agent, from what each agent's profile predicts — its start-up load, what it
loads when a tool reads a path, what the model reads on demand, what a read lists without
sending it (Claude Code's skills found on a read), the files it ignores and why — and each
agent's context map. Both the CLI (`memlens report`) and the server
(`memlens/matrix`) ask this module; nothing here renders."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from memlens.agents import all_agents, owner_of, workspace_file_names
from memlens.agents.base import MemoryAgent
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings
from memlens.protocol.matrix import (
    ContextMap,
    MapSegment,
    MatrixAgent,
    MatrixCell,
    MatrixResult,
    MatrixRow,
)
from memlens.protocol.memory import Diagnostic
from memlens.reports.budgets import context_budget
from memlens.reports.notes import add_notes
from memlens.workspace.agents_here import agents_of_files, agents_shown, chosen_ids
from memlens.workspace.queries import workspace_files_named
from memlens.workspace.reading import (
    CUT_CODES,
    AgentReading,
    agent_check,
    folder_files,
    static_settings,
)

HIDDEN_CODES = ("hidden-text", "hidden-comment")
T = TypeVar("T")


class Keeper(Protocol):
    """Keeps what `compute` answers for (what, agent id) while what it depends on is
    unchanged (the language server's index: that agent's part and the folder's files)."""

    def __call__(self, what: str, agent: str, compute: Callable[[], T]) -> T: ...


def _compute(what: str, agent: str, compute: Callable[[], T]) -> T:
    return compute()


@dataclass
class Known:
    """What the caller already holds about the folder, so the matrix need not find it again:
    every agent's memory files under it (`found`, a walk's), the files a glob-scoped rule may
    match (`files`), a `keep` for each agent's reading and diagnostics, the diagnostics of
    the agent the index renders (Gemini CLI's check of the folder: `rendered`, None to run
    it), and the reader of the files' text (`reader`). The CLI passes none (`memlens report`
    walks once itself); the language server passes its index's."""

    found: list[str]
    files: Callable[[str], Iterable[str]] = folder_files
    keep: Keeper = _compute
    rendered: Callable[[Collection[str] | None], list[Diagnostic]] | None = None
    # What the files say: the editor's unsaved buffers over the disk (the language server's
    # views all show the buffers); None: the disk.
    reader: FileReader | None = None


def _relative(path: str, folder: str, home: str) -> str:
    if path == folder or path.startswith(folder.rstrip("/") + "/"):
        return posixpath.relpath(path, folder)
    if home and path.startswith(home.rstrip("/") + "/"):
        return "~/" + posixpath.relpath(path, home)
    return path


class _AgentView(AgentReading):
    """One agent's reading of the folder (workspace/reading.py), and its context map."""

    def cell(self, path: str) -> MatrixCell:
        return self.answer(path)

    def context_map(self, folder: str, home: str, budget: int) -> ContextMap:
        rows = [(f.path, f.label, f.content) for f in self.memory.files]
        figures = context_budget(self.agent.id, rows)
        cuts = [f"{_relative(d.path, folder, home)}:{d.line}: {d.message}"
                for d in self.diagnostics if d.code in CUT_CODES]
        return ContextMap(
            tokens=figures.total.tokens, chars=figures.total.chars,
            estimator=figures.estimator.label,
            segments=[MapSegment(path=b.path, relative=_relative(b.path, folder, home),
                                 chars=b.figures.chars, tokens=b.figures.tokens)
                      for b in figures.files],
            limit=budget or None, limit_label="your budget (memlens.budget)" if budget else None,
            cuts=cuts)


def _columns(folder: str, settings: MemorySettings, present: Sequence[str],
             reader: FileReader) -> list[tuple[MemoryAgent, str]]:
    """The agents worth a column, as every other command shows them
    (agents_here.agents_shown): the ones in use, each one whose files are here
    (agents_here.agents_of_files) or apply from above the folder; in the registry's order."""
    chosen = chosen_ids(settings)
    shown = set(agents_shown(chosen, folder, settings, present, reader))
    out = []
    for agent in all_agents():
        if agent.id not in shown:
            continue
        if agent.id in chosen:
            out.append((agent, "chosen" if agent.id == chosen[0] else "one of your agents"))
        elif agent.id in present:
            out.append((agent, "its files are here"))
        else:
            out.append((agent, "its files apply here"))
    return out


def _column_label(agent: MemoryAgent) -> str:
    """The agent's name, and for a convention that it is one: "Cursor (convention)", as the
    status item says it."""
    from memlens.agent_versions import basis_of, profile_for

    return profile_for(agent.id, None).label if basis_of(agent.id) == "convention" else agent.label


def agent_matrix(folder: str, settings: MemorySettings, *,
                 agents: Sequence[str] | None = None, known: Known | None = None
                 ) -> MatrixResult:
    """The matrix of `folder`; `known`: what the caller already holds (see `Known`)."""
    folder = os.path.realpath(folder)
    reader = (known.reader if known is not None else None) or FileReader()
    if known is None:
        names = workspace_file_names(settings)
        found_by_name = workspace_files_named(MemoryEngine(settings, reader), [folder], names)
        known = Known(list(dict.fromkeys(p for n in names for p in found_by_name[n])))
    found, keep = known.found, known.keep
    present = agents_of_files([folder], found, settings)
    picked = _columns(folder, settings, present, reader) if agents is None else [
        (a, "asked for") for a in all_agents() if a.id in agents]

    def view(agent: MemoryAgent) -> _AgentView:
        return keep("reading", agent.id, lambda: _AgentView(
            agent, folder, settings, found, reader, files=known.files))

    columns = [(view(a), why) for a, why in picked]
    home = settings.home
    paths = list(dict.fromkeys([
        *found, *(f.path for v, _ in columns for f in v.files()),
        *(p for v, _ in columns for p in v.imports),
        *(d.path for v, _ in columns for d in v.ignored),
        *(p for v, _ in columns for p in v.not_offered)]))
    # The diagnostics are `memlens check`'s for the same agents: what a profile says
    # (`agent-ignores-file`) for the agents in use or asked for, every column's own checks.
    in_use = set(chosen_ids(settings)) if agents is None else set(agents)
    static = static_settings(settings)
    diagnostics: dict[tuple[str, int, int, str], Diagnostic] = {}

    # A hidden-content finding names the columns' agents that receive the file.
    receivers = [v.agent.id for v, _ in columns]

    def checked(agent: MemoryAgent) -> list[Diagnostic]:
        profile = agent.id in in_use
        what = ("check" if profile else "check-alone") + ":" + ",".join(receivers)
        return keep(what, agent.id,
                    lambda: agent_check(agent, folder, static, profile=profile, found=found,
                                        rendered=known.rendered, reader=reader,
                                        receivers=receivers))

    for v, _ in columns:
        for d in checked(v.agent):
            diagnostics.setdefault((d.path, d.line, d.col, d.code), d)
    # Rules the columns' agents receive together that disagree (check's, for the same
    # agents).
    from memlens.workspace.conflicts import diagnostics as conflict_diagnostics
    from memlens.workspace.conflicts import find_conflicts

    for d in conflict_diagnostics(find_conflicts([v for v, _ in columns], reader), folder):
        diagnostics.setdefault((d.path, d.line, d.col, d.code), d)
    ordered: list[Diagnostic] = sorted(diagnostics.values(), key=lambda d: d.sort_key())

    def sort_key(path: str) -> tuple[int, str]:
        inside = path.startswith(folder.rstrip("/") + "/")
        return (0 if inside else 1, path)

    rows = []
    for path in sorted(paths, key=sort_key):
        owner = owner_of(path, settings)
        rows.append(MatrixRow(
            path=path, relative=_relative(path, folder, home),
            owner=owner.id if owner else None,
            cells={v.agent.id: v.cell(path) for v, _ in columns},
            problems=sum(d.path == path and d.severity in ("error", "warning")
                         for d in ordered)))
    return add_notes(MatrixResult(
        folder=folder, home=home,
        agents=[MatrixAgent(id=v.agent.id, label=_column_label(v.agent), why=why,
                            map=v.context_map(folder, home, settings.budget))
                for v, why in columns],
        rows=rows,
        diagnostics=[d for d in ordered if d.code not in HIDDEN_CODES],
        hidden=[d for d in ordered if d.code in HIDDEN_CODES]))

