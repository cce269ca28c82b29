"""Rules one agent receives together that disagree, and agents told different things
(docs/reference.md "Rules that disagree").

What an agent receives together comes from its reading of the folder (workspace/reading.py's
`AgentReading`), never from a discovery of our own: its start-up files in the order of its
load (what it sends first comes first; a file Gemini CLI imports sits where it is imported),
then, for each file it loads when a tool reads a path, the start-up files and that file (and
the files of the folders above it that load on the same read). Two decisions of the same kind
and subject whose values disagree (conflicts/kinds) in one such set are an
`instruction-conflict`; the one later in the payload is what the agent sees last. Two agents
whose start-up sets each give one answer, and different answers, `agents-disagree`.

Conservative by design: only what the decision kinds read (conflicts/prose.py leaves code,
quotations, tables and comments out), only files one reading puts together; two files that
load on reads of different paths are not compared (no single read brings both)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from memlens.agents.base import AgentFile, MemoryAgent
from memlens.conflicts.base import Decision
from memlens.conflicts.extract import decisions
from memlens.conflicts.kinds import kind_by_id
from memlens.files.fsread import FileReader
from memlens.model import MemorySettings
from memlens.protocol.conflicts import ConflictFinding, ConflictRule, ConflictSide, ConflictsResult
from memlens.protocol.memory import Diagnostic, RelatedLocation
from memlens.protocol.wire import Severity
from memlens.workspace.reading import AgentReading

Code = Literal["instruction-conflict", "agents-disagree"]
CONFLICT: Final = "instruction-conflict"
DISAGREE: Final = "agents-disagree"


@dataclass(frozen=True)
class Placed:
    """A decision in a file."""

    path: str
    decision: Decision

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.path, self.decision.line, self.decision.col)


@dataclass
class Received:
    """What one agent receives together: at start-up (`scope` None) or once a read brings
    `trigger` in; `placed` in the order of its payload."""

    agent: MemoryAgent
    scope: str | None
    placed: list[Placed]
    trigger: str | None = None


@dataclass
class AgentSide:
    """One agent's side of a finding: when it receives the rules, and which it sees last."""

    agent: MemoryAgent
    scope: str | None
    last: Placed


@dataclass
class Finding:
    code: Code
    kind: str
    subject: str
    rules: list[Placed]  # each rule once, in the order first seen
    sides: list[AgentSide] = field(default_factory=list)


class DecisionCache:
    """Each file's decisions, read once per run (many agents and folders read one file)."""

    def __init__(self, reader: FileReader) -> None:
        self.reader = reader
        self._kept: dict[str, list[Decision]] = {}

    def of(self, path: str) -> list[Decision]:
        if path not in self._kept:
            text = self.reader.read(path).content
            self._kept[path] = decisions(text) if text is not None else []
        return self._kept[path]


def received(reading: AgentReading, cache: DecisionCache) -> list[Received]:
    """Every set of rules the agent of `reading` receives together (see the module)."""
    agent = reading.agent
    roots = [f.path for f in reading.memory.files if f.content is not None]
    # Gemini CLI inlines what a file imports where the `@import` stands.
    startup = _placed([*roots, *reading.imports], cache)
    startup.sort(key=lambda p: _order(p.path, p.decision.line, p.decision.col, roots,
                                      reading.import_sites, cache))
    sets = [Received(agent, None, startup)]
    later = [f for f in reading.later if f.when == "on-read" and f.path not in reading.unmatched]
    for f in later:
        own = _placed([f.path], cache)
        if not own:
            continue
        # The files of folders above it that load on the same read (nested memory files).
        above = [g for g in later if g is not f and g.reads_on is None and f.reads_on is None
                 and _holds(posixpath.dirname(g.path), posixpath.dirname(f.path))]
        above.sort(key=lambda g: len(g.path))
        sets.append(Received(agent, _scope(f, reading.folder),
                             [*startup, *_placed([g.path for g in above], cache), *own],
                             trigger=f.path))
    return sets


Order = tuple[tuple[int, int, int], ...]


def _order(path: str, line: int, col: int, roots: list[str],
           sites: dict[str, tuple[str, int]], cache: DecisionCache, depth: int = 0) -> Order:
    """Where a line of `path` stands in the payload: a start-up file's place, then the line
    in it; an imported file's place is its `@import`'s in the file that imports it."""
    if path in roots:
        return ((roots.index(path), line, col),)
    site = sites.get(path)
    if site is None or depth > 64:
        return ((len(roots), line, col),)
    holder, offset = site
    text = cache.reader.read(holder).content or ""
    at_line = text.count("\n", 0, offset) + 1
    at_col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return (*_order(holder, at_line, at_col, roots, sites, cache, depth + 1), (0, line, col))


def file_sets(reading: AgentReading) -> list[tuple[str | None, list[str]]]:
    """The files the agent of `reading` receives together, each set with its scope (None: at
    start-up; else "when {agent} reads ..."), in payload order — the sets `received` reads
    decisions from, for the model's pass (agent/conflict_review.py)."""
    roots = [f.path for f in reading.memory.files if f.content is not None]
    startup = list(dict.fromkeys([*roots, *reading.imports]))
    sets: list[tuple[str | None, list[str]]] = [(None, startup)]
    later = [f for f in reading.later if f.when == "on-read" and f.path not in reading.unmatched]
    for f in later:
        above = sorted((g for g in later if g is not f and g.reads_on is None
                        and f.reads_on is None
                        and _holds(posixpath.dirname(g.path), posixpath.dirname(f.path))),
                       key=lambda g: len(g.path))
        sets.append((_scope(f, reading.folder), [*startup, *(g.path for g in above), f.path]))
    return sets


def _holds(folder: str, inner: str) -> bool:
    return inner.startswith(folder.rstrip("/") + "/")


def _scope(f: AgentFile, folder: str) -> str:
    """When a read brings `f` in, with `{agent}` for the agent's name."""
    if f.reads_on is None:
        where = posixpath.relpath(posixpath.dirname(f.path), folder)
        if where == "." or where.startswith(".."):
            return "when {agent} reads a file"
        return f"when {{agent}} reads a file in {where}/"
    return f"when {{agent}} reads a file {posixpath.basename(f.path)} applies to" + (
        f" ({f.note})" if f.note else "")


def _placed(paths: Sequence[str], cache: DecisionCache) -> list[Placed]:
    seen: set[tuple[str, int]] = set()
    out = []
    for path in paths:
        real = os.path.realpath(path)
        for d in cache.of(path):
            if (real, d.line) not in seen:
                seen.add((real, d.line))
                out.append(Placed(path, d))
    return out


def find_conflicts(readings: Sequence[AgentReading], reader: FileReader | None = None
                   ) -> list[Finding]:
    """The findings of the agents' readings of one folder: `instruction-conflict`s, then
    `agents-disagree`s."""
    cache = DecisionCache(reader or FileReader())
    by_pair: dict[tuple[tuple[str, int, int], tuple[str, int, int]], Finding] = {}
    startup_answers: list[tuple[MemoryAgent, dict[tuple[str, str], list[Placed]]]] = []
    for reading in readings:
        for got in received(reading, cache):
            groups: dict[tuple[str, str], list[Placed]] = {}
            for p in got.placed:
                groups.setdefault((p.decision.kind, p.decision.subject), []).append(p)
            if got.scope is None:
                startup_answers.append((got.agent, groups))
            for (kind_id, subject), placed in groups.items():
                kind = kind_by_id(kind_id)
                for i, first in enumerate(placed):
                    for second in placed[i + 1:]:
                        if not kind.disagree(first.decision.value, second.decision.value):
                            continue
                        # A read adds its file: only the pairs the read brings in are new.
                        if got.trigger is not None and got.trigger not in (first.path,
                                                                          second.path):
                            continue
                        a, b = sorted((first.key, second.key))
                        finding = by_pair.setdefault(
                            (a, b), Finding(CONFLICT, kind_id, subject, [first, second]))
                        if not any(s.agent.id == got.agent.id for s in finding.sides):
                            finding.sides.append(AgentSide(got.agent, got.scope, second))
    findings = list(by_pair.values())
    findings += _disagreements(startup_answers)
    return findings


def _disagreements(answers: list[tuple[MemoryAgent, dict[tuple[str, str], list[Placed]]]]
                   ) -> list[Finding]:
    """Agents whose start-up rules each give one answer to a subject, and different ones."""
    subjects: dict[tuple[str, str], list[AgentSide]] = {}
    for agent, groups in answers:
        for key, placed in groups.items():
            kind = kind_by_id(key[0])
            if any(kind.disagree(a.decision.value, b.decision.value)
                   for i, a in enumerate(placed) for b in placed[i + 1:]):
                continue  # its own conflict says it
            subjects.setdefault(key, []).append(AgentSide(agent, None, placed[-1]))
    out = []
    for (kind_id, subject), sides in subjects.items():
        kind = kind_by_id(kind_id)
        if not any(kind.disagree(a.last.decision.value, b.last.decision.value)
                   for i, a in enumerate(sides) for b in sides[i + 1:]):
            continue
        rules = list({s.last.key: s.last for s in sides}.values())
        out.append(Finding(DISAGREE, kind_id, subject, rules, sides))
    return out


def _where(p: Placed, folder: str) -> str:
    rel = posixpath.relpath(p.path, folder)
    shown = rel if not rel.startswith("..") else p.path
    return f"{shown}:{p.decision.line}"


def _value(p: Placed) -> str:
    return kind_by_id(p.decision.kind).describe(p.decision.value)


def when(side: AgentSide) -> str:
    """"Claude Code at start-up", "when Claude Code reads a file in web/"."""
    if side.scope is None:
        return f"{side.agent.label} at start-up"
    return side.scope.replace("{agent}", side.agent.label)


def _receivers(finding: Finding, here: Placed, other: Placed, folder: str) -> str:
    """"Claude Code, GitHub Copilot CLI when reading a file in web/; seen last: web/CLAUDE.md:1":
    who receives
    both rules of a conflict, when, and whether `other` or `here` comes later."""
    scopes: dict[str, list[str]] = {}
    for s in finding.sides:
        scope = "at start-up" if s.scope is None else s.scope.replace("{agent} reads", "reading")
        scopes.setdefault(scope, []).append(s.agent.label)
    who = "; ".join(f"{', '.join(labels)} {scope}" for scope, labels in scopes.items())
    last = {s.last.key for s in finding.sides}
    order = (f"seen last: {_where(other, folder)}" if last == {other.key} else
             "seen last: this line" if last == {here.key} else "the order differs by agent")
    return f"{who}; {order}"


def explain(finding: Finding, folder: str) -> str:
    """The finding in one sentence: who receives what, and which each sees last."""
    if finding.code == DISAGREE:
        told = "; ".join(f"{s.agent.label}: {_value(s.last)} ({_where(s.last, folder)})"
                         for s in finding.sides)
        return f"agents working here are told different things about the {finding.subject}: " \
               f"{told}"
    rules = " and ".join(f"{_value(p)} ({_where(p, folder)})" for p in finding.rules)
    by_last: dict[tuple[str, int, int], list[str]] = {}
    for s in finding.sides:
        by_last.setdefault(s.last.key, []).append(when(s))
    seen = "; ".join(f"{_where(next(p for p in finding.rules if p.key == key), folder)} comes "
                     f"later in the payload (seen last) {', '.join(whens)}"
                     for key, whens in by_last.items())
    return f"{rules} reach one agent together: {seen}"


def diagnostics(findings: Sequence[Finding], folder: str) -> list[Diagnostic]:
    """Each finding on every line it names (one diagnostic per line and subject), with
    related information pointing at the other rules."""
    places: dict[tuple[str, tuple[str, int, int], str], tuple[Placed, list[Finding]]] = {}
    for finding in findings:
        for p in finding.rules:
            places.setdefault((finding.code, p.key, finding.subject), (p, []))[1].append(finding)
    out: list[Diagnostic] = []
    for (code, _, subject), (here, group) in places.items():
        others = list({p.key: p for f in group for p in f.rules if p.key != here.key}.values())
        if code == CONFLICT:
            parts = []
            for o in others:
                pair = next(f for f in group if any(p.key == o.key for p in f.rules))
                said = _receivers(pair, here, o, folder)
                parts.append(f"{_value(o)} at {_where(o, folder)} ({said})")
            message = (f"Rules disagree on the {subject}: {_value(here)} here; "
                       + ", ".join(parts))
            severity: Severity = "warning"
        else:
            sides = group[0].sides
            mine = ", ".join(s.agent.label for s in sides if s.last.key == here.key)
            told: dict[tuple[str, int, int], list[str]] = {}
            for s in sides:
                if s.last.key != here.key:
                    told.setdefault(s.last.key, []).append(s.agent.label)
            said = "; ".join(f"{', '.join(labels)}: {_value(o)} ({_where(o, folder)})"
                             for o in others if (labels := told.get(o.key)))
            message = (f"Agents are told different things about the {subject}: "
                       f"{mine}: {_value(here)} here; {said}")
            severity = "info"
        d = here.decision
        out.append(Diagnostic(
            path=here.path, line=d.line, col=d.col, end_line=d.line, end_col=d.end_col,
            severity=severity, code=code, message=message,
            # The message says it all; the other rules are its related information.
            related=[RelatedLocation(path=p.path, line=p.decision.line, col=p.decision.col,
                                     end_line=p.decision.line, end_col=p.decision.end_col,
                                     message=f"{_value(p)}: {p.decision.quote}")
                     for p in others]))
    return out


def folder_readings(folder: str, settings: MemorySettings, agents: Sequence[MemoryAgent],
                    reader: FileReader | None = None) -> list[AgentReading]:
    """Each agent's reading of `folder` (the walk for memory files done once)."""
    from memlens.agents import workspace_file_names
    from memlens.agents.gemini.discovery import MemoryEngine
    from memlens.workspace.queries import workspace_files_named

    reader = reader or FileReader()
    names = workspace_file_names(settings)
    by_name = workspace_files_named(MemoryEngine(settings, reader), [folder], names)
    found = list(dict.fromkeys(p for n in names for p in by_name[n]))
    return [AgentReading(a, folder, settings, found, reader) for a in agents]


def result(folder: str, agents: Sequence[MemoryAgent], findings: Sequence[Finding]
           ) -> ConflictsResult:
    """`memlens conflicts --json`: the findings with each agent's side."""

    def rule(p: Placed) -> ConflictRule:
        d = p.decision
        return ConflictRule(path=p.path, line=d.line, col=d.col, end_col=d.end_col,
                            value=_value(p), quote=d.quote)

    return ConflictsResult(folder=folder, agents=[a.id for a in agents], findings=[
        ConflictFinding(
            code=f.code,
            severity="warning" if f.code == CONFLICT else "info", kind=f.kind,
            subject=f.subject, rules=[rule(p) for p in f.rules],
            agents=[ConflictSide(agent=s.agent.id, label=s.agent.label,
                                 when="startup" if s.scope is None else "on-read",
                                 scope="at start-up" if s.scope is None
                                 else s.scope.replace("{agent}", s.agent.label),
                                 seen_last=rule(s.last)) for s in f.sides])
        for f in findings])
