"""`memlens mcp`'s answers, each rendered from the engine's own (no memory logic here): the
agents shown in a folder as `memlens show` covers them (workspace/agents_here.py), the text an
agent receives as `memlens show` and `memlens jit` print it (workspace/queries.py
`startup_text`, `jit_entries`), when an agent reads a file as the matrix says it
(workspace/reading.py `AgentReading`) with `memlens check`'s diagnostics on it (`agent_check`).
The folder and path are already inside a root (scope.py)."""

from __future__ import annotations

from collections.abc import Mapping

from memlens.agent_versions import AGENT_LABELS, InstalledAgent, profile_for
from memlens.agents import agent_by_id
from memlens.agents.base import MemoryAgent
from memlens.files.secrets import Redactor
from memlens.mcp.models import (
    AgentHere,
    AgentOnFile,
    AgentReads,
    AgentRules,
    AgentsHere,
    FileDiagnostic,
    FileExplained,
    Part,
    RulesFor,
    Source,
    Withheld,
)
from memlens.mcp.scope import MAX_TEXT
from memlens.model import MemorySettings

GEMINI = "gemini"


def _capped(text: str) -> tuple[str, bool]:
    """The text as the command line prints it (known keys redacted, as its output stream
    does: files/secrets.py), at most MAX_TEXT characters."""
    text = Redactor().text(text)
    return (text[:MAX_TEXT], True) if len(text) > MAX_TEXT else (text, False)


def _part(text: str, sources: list[Source]) -> Part:
    capped, cut = _capped(text)
    return Part(text=capped, sources=sources, truncated=cut)


def shown(folder: str, settings: MemorySettings) -> tuple[list[str], list[str], list[str]]:
    """The agents in use, those with files in the folder or below it, and the agents shown
    there (in use, then every agent whose files apply): what `memlens show` covers."""
    from memlens.workspace.agents_here import agents_shown, agents_with_files, chosen_ids

    in_use = chosen_ids(settings)
    with_files = agents_with_files([folder], settings)
    return in_use, with_files, agents_shown(in_use, folder, settings, with_files)


def withheld(folder: str, settings: MemorySettings, agents: list[str]) -> list[Withheld]:
    """What an untrusted folder keeps from Gemini CLI (when it is shown), and why: Gemini
    CLI's folder trust, as `memlens show` notes it."""
    if GEMINI not in agents:
        return []
    from memlens.agents.gemini.trust import decide_trust, how_to_trust, untrusted_reason

    trusted, source = decide_trust(folder, settings.home, explicit=settings.trusted,
                                   folder_trust_enabled=settings.folder_trust_enabled)
    if trusted:
        return []
    return [Withheld(agent=GEMINI, what="its project memory and the folder's settings: "
                     "Gemini CLI reads only global memory in a folder it does not trust",
                     why=untrusted_reason(source, settings.home),
                     how_to_trust=how_to_trust(folder, settings.home))]


def _profile_name(agent_id: str, settings: MemorySettings) -> str:
    profile = next((p for p in settings.chosen_agents if p.agent == agent_id), None)
    return (profile or profile_for(agent_id, None)).name


def agents_here(folder: str, settings: MemorySettings,
                installed: Mapping[str, InstalledAgent]) -> AgentsHere:
    in_use, with_files, agents = shown(folder, settings)
    out = []
    for agent_id in agents:
        profile = next((p for p in settings.chosen_agents if p.agent == agent_id), None)
        how = []
        if agent_id in in_use:
            found = installed.get(agent_id)
            if settings.agents:
                how.append("pinned (MEMLENS_AGENTS or memlens.agents)")
            elif found is not None:
                how.append(f"on PATH at {found.executable} (version from {found.source})")
        if agent_id in with_files:
            how.append("its memory files are in the folder or below it")
        elif agent_id not in in_use:
            how.append("its memory files apply from a folder above or from HOME")
        profile = profile or profile_for(agent_id, None)
        out.append(AgentHere(agent=agent_id, label=AGENT_LABELS.get(agent_id, agent_id),
                             profile=profile.name, version=profile.installed,
                             verified=profile.verified, note=profile.note, how=how))
    return AgentsHere(folder=folder, agents=out, withheld=withheld(folder, settings, agents))


def _startup(agent: MemoryAgent, folder: str, settings: MemorySettings) -> Part:
    from memlens.workspace.queries import startup_text

    files = agent.load(folder, settings).files
    return _part(startup_text(agent, folder, settings),
                 [Source(path=f.path, label=f.label, note=f.note) for f in files])


def _on_path(agent: MemoryAgent, folder: str, path: str, settings: MemorySettings) -> Part:
    """What touching `path` adds, as `memlens jit --cwd FOLDER PATH` prints it."""
    from memlens.workspace.queries import jit_entries

    entries = jit_entries(agent, folder, [path], settings)
    return _part("".join(e.context for e in entries),
                 [Source(path=p, label="jit", when="on-read") for e in entries
                  for p in e.files])


def what_agent_reads(agent_id: str, folder: str, settings: MemorySettings,
                     path: str | None) -> AgentReads:
    agent = agent_by_id(agent_id)
    return AgentReads(
        agent=agent_id, profile=_profile_name(agent_id, settings), folder=folder,
        startup=_startup(agent, folder, settings), path=path,
        on_path=None if path is None else _on_path(agent, folder, path, settings),
        withheld=withheld(folder, settings, [agent_id]))


def context_of(agent_id: str, folder: str, settings: MemorySettings) -> str:
    """An agent's merged context at start-up in `folder` (the resource a host attaches)."""
    return _startup(agent_by_id(agent_id), folder, settings).text


def explain_file(path: str, folder: str, settings: MemorySettings) -> FileExplained:
    from memlens.agents import workspace_file_names
    from memlens.agents.gemini.discovery import MemoryEngine
    from memlens.files.fsread import FileReader
    from memlens.workspace.queries import workspace_files_named
    from memlens.workspace.reading import AgentReading, agent_check, static_settings

    _, _, agents = shown(folder, settings)
    reader = FileReader()
    names = workspace_file_names(settings)
    by_name = workspace_files_named(MemoryEngine(settings, reader), [folder], names)
    found = [p for n in names for p in by_name[n]]
    checked = static_settings(settings)
    out = []
    for agent_id in agents:
        agent = agent_by_id(agent_id)
        cell = AgentReading(agent, folder, settings, found, reader).answer(path)
        diagnostics = [FileDiagnostic(line=d.line, severity=d.severity, code=d.code,
                                      message=d.message)
                       for d in agent_check(agent, folder, checked, profile=True, found=found,
                                            receivers=agents)
                       if d.path == path]
        out.append(AgentOnFile(agent=agent_id, label=agent.label, when=cell.state,
                               word=cell.word, why=cell.why, trigger=cell.trigger, cut=cell.cut,
                               diagnostics=diagnostics))
    return FileExplained(path=path, folder=folder, agents=out,
                         withheld=withheld(folder, settings, agents))


def rules_for(path: str, folder: str, settings: MemorySettings) -> RulesFor:
    _, _, agents = shown(folder, settings)
    applying, quiet = [], []
    for agent_id in agents:
        agent = agent_by_id(agent_id)
        rules = _on_path(agent, folder, path, settings)
        if rules.text:
            applying.append(AgentRules(agent=agent_id, label=agent.label, rules=rules))
        else:
            quiet.append(agent_id)
    return RulesFor(path=path, folder=folder, agents=applying, quiet=quiet,
                    withheld=withheld(folder, settings, agents))
