"""The short answer `memlens show` and `memlens list` give first (protocol/summary.py): per
agent, rendered from its reading of the folder (reading.py `AgentReading`, the answer every
view renders) — what it sends at start, what loads later and where, what it cuts, and which of
its own files it leaves unread here and why. Nothing here renders text."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping, Sequence

from memlens.agents import agent_by_id, workspace_file_names
from memlens.agents.base import AgentFile
from memlens.agents.gemini.discovery import MemoryEngine
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings
from memlens.protocol.summary import (
    AgentSummary,
    CutFile,
    FolderSummary,
    LaterFiles,
    NotReadGroup,
    NotReadKind,
    StartupFigures,
)
from memlens.reports.budgets import context_budget, estimate_tokens
from memlens.workspace.queries import workspace_files_named
from memlens.workspace.reading import BLANK, CUT_CODES, AgentReading

ELSEWHERE = "read only when it works in another folder"
NOT_ITS = "not its file"


def folder_summary(agent_ids: Sequence[str], cwd: str, settings: MemorySettings,
                   profiles: Mapping[str, str]) -> FolderSummary:
    """The summary of `cwd` for the agents `agent_ids` (in that order); `profiles`: what
    `--agent` takes for each (its profile's name)."""
    reader = FileReader()
    folder = os.path.realpath(cwd)
    names = workspace_file_names(settings)
    by_name = workspace_files_named(MemoryEngine(settings, reader), [folder], names)
    found = list(dict.fromkeys(p for n in names for p in by_name[n]))
    return FolderSummary(cwd=folder, agents=[
        agent_summary(AgentReading(agent_by_id(a), folder, settings, found, reader), found,
                      profiles.get(a, a))
        for a in agent_ids])


def agent_summary(reading: AgentReading, found: Sequence[str], profile: str) -> AgentSummary:
    """One agent's summary from its reading of the folder; `found`: every agent's memory
    files under the folder (the walk's)."""
    agent = reading.agent
    budget = context_budget(agent.id, [(f.path, f.label, f.content)
                                       for f in reading.memory.files])
    later = [f for f in reading.later if f.path not in {s.path for s in reading.memory.files}]
    on_read = [f for f in later if reading.when(f) == "on-read"]
    on_demand = [f for f in later if reading.when(f) == "on-demand"]
    listed = [f for f in later if reading.when(f) == "listed"]
    cut = [CutFile(path=d.path, line=d.line, code=d.code, message=d.message)
           for d in reading.diagnostics if d.code in CUT_CODES]
    return AgentSummary(
        agent=agent.id, label=agent.label, profile=profile,
        startup=StartupFigures(files=len(reading.memory.files), chars=budget.total.chars,
                               bytes=budget.total.bytes, tokens=budget.total.tokens,
                               estimator=budget.estimator.label),
        on_read=_later(agent.id, on_read, unmatched=reading.unmatched),
        on_demand=_later(agent.id, on_demand, unmatched=set()),
        listed=_later(agent.id, listed, unmatched=set()),
        cut=list({(c.path, c.line): c for c in cut}.values()),
        not_read=_not_read(reading, found))


def _later(agent_id: str, files: Sequence[AgentFile], *, unmatched: set[str]) -> LaterFiles:
    return LaterFiles(
        files=len(files), folders=sorted({posixpath.dirname(f.path) for f in files}),
        tokens=sum(estimate_tokens(agent_id, f.content) for f in files
                   if f.content is not None),
        unmatched=sum(f.path in unmatched for f in files))


def _kind(reading: AgentReading, path: str, why: str) -> NotReadKind:
    if any(d.path == path for d in reading.ignored):
        return "ignored"
    if why == BLANK:
        return "blank"
    if why.startswith("the folder is not trusted"):
        return "untrusted"
    if why == ELSEWHERE or why.startswith("not read working here"):
        return "elsewhere"
    return "other"


def _not_read(reading: AgentReading, found: Sequence[str]) -> list[NotReadGroup]:
    """The agent's own files (by name, or a file it owns) and the files its check read that
    it does not read working in the folder, grouped by kind (the first file's sentence says
    why)."""
    agent, settings = reading.agent, reading.settings
    names = set(agent.file_names(settings))
    read = {f.path for f in reading.files()} | set(reading.imports)
    own = [p for p in dict.fromkeys([*found, *sorted(reading.sources),
                                     *(d.path for d in reading.ignored),
                                     *reading.not_offered])
           if p not in read and (posixpath.basename(p) in names or agent.owns(p, settings)
                                 or p in reading.sources or p in reading.not_offered)]
    groups: dict[NotReadKind, NotReadGroup] = {}
    for path in own:
        cell = reading.answer(path)
        if cell.state != "not-read" or cell.why == NOT_ITS:
            continue
        kind = _kind(reading, path, cell.why)
        group = groups.setdefault(kind, NotReadGroup(kind=kind, why=cell.why, paths=[],
                                                     folders=[]))
        group.paths.append(path)
    for group in groups.values():
        group.folders = sorted({posixpath.dirname(p) for p in group.paths})
    return list(groups.values())
