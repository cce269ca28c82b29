"""The engine's answers as the CLI and the language server present them (pydantic models)."""

from __future__ import annotations

import dataclasses
import functools
import os
import posixpath
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from memlens.agents.gemini.discovery import LoadedFile, MemoryEngine, MemoryLoad, SearchReport
from memlens.agents.gemini.ignore import IgnoreFilter
from memlens.files import tree
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import is_subpath
from memlens.files.roots import broad_reason, in_skill_folder
from memlens.model import MemorySettings, is_context_file
from memlens.protocol.memory import Diagnostic, HierarchicalMemory

if TYPE_CHECKING:
    from memlens.agents.base import MemoryAgent, WorkspaceCheck
    from memlens.protocol.memory import (
        AgentJitEntry,
        JitEntry,
        ListResult,
        ShowResult,
    )
from memlens.agents.gemini.render import flatten_memory, render_prompt_memory

TRUNCATION_NOTE = ("\n[Memory Lens: preview truncated at {limit:,} characters "
                   "(memlens.maxContextChars); {agent} would receive more]")


def truncate(text: str, limit: int, agent: str = "Gemini CLI") -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit] + TRUNCATION_NOTE.format(limit=limit, agent=agent), True


def flattened(load: MemoryLoad) -> str:
    m = load.memory
    return flatten_memory(m.global_, m.user_project_memory, m.extension, m.project)


def _shifted(progress: Callable[[int], None], base: int, count: int) -> None:
    progress(base + count)


def broad_folder(folder: str, settings: MemorySettings) -> str | None:
    """Why `folder` is too broad a workspace folder to index ('the file system root', 'your
    home folder'), or None. `memlens.allowBroadWorkspace` lifts the refusal."""
    return None if settings.allow_broad_workspace else broad_reason(folder, settings.home)


def workspace_files_named(engine: MemoryEngine, roots: list[str], names: list[str],
                          unreadable: list[tuple[str, str]] | None = None, *,
                          stops: list[SearchReport] | None = None,
                          progress: Callable[[int], None] | None = None
                          ) -> dict[str, list[str]]:
    """Files with each of `names` under the workspace folders, found in one walk per root (no
    Gemini CLI folder budget, ignore files honoured; FIFOs and sockets included, so they get
    a diagnostic). Each name's list is in the order a search for that name alone gives.

    The walk reads at most `memlens.maxIndexedFolders` folders over all the roots; a root
    whose walk stopped short is added to `stops`. `progress` hears the folders read so far.
    Inside `files.tree.one_walk()` (a CLI run) the roots are walked once for every agent's
    names, whoever asks and for which names (the folders a search visits do not depend on
    the names it looks for)."""
    found: dict[str, list[str]] = {name: [] for name in names}
    # A relative name (`docs/CONTEXT.md`) is looked for by its file name, then by its end.
    by_base: dict[str, list[str]] = {}
    for name in names:
        by_base.setdefault(posixpath.basename(posixpath.normpath(name)), []).append(name)
    if tree.active():
        bases = frozenset([*by_base, *_every_base_name(engine.settings)])
        settings = engine.settings
        walked = tree.run_memo(
            ("workspace_files_named", tuple(roots), bases, settings.respect_git_ignore,
             settings.respect_gemini_ignore, settings.max_indexed_folders),
            lambda: _walk_roots(engine, roots, tuple(sorted(bases)), progress))
    else:
        walked = _walk_roots(engine, roots, tuple(by_base), progress)
    for root, paths, report in walked:
        if report is None:  # the budget was spent before this root
            if stops is not None:
                stops.append(SearchReport(root, ", ".join(names), engine.settings
                                          .max_indexed_folders, 0, [root], []))
            continue
        for path in paths:
            for name in by_base.get(posixpath.basename(path), []):
                if is_context_file(path, [name]):
                    found[name].append(path)
        if unreadable is not None:
            unreadable += [u for u in report.unreadable if u not in unreadable]
        if report.exhausted and stops is not None:
            stops.append(dataclasses.replace(
                report, filename=", ".join(by_base),
                max_dirs=engine.settings.max_indexed_folders))
    return {name: list(dict.fromkeys(paths)) for name, paths in found.items()}


def _every_base_name(settings: MemorySettings) -> list[str]:
    """The file names of every agent's memory files."""
    from memlens.agents import workspace_file_names

    return [posixpath.basename(posixpath.normpath(n)) for n in workspace_file_names(settings)]


def _walk_roots(engine: MemoryEngine, roots: list[str], bases: tuple[str, ...],
                progress: Callable[[int], None] | None
                ) -> list[tuple[str, list[str], SearchReport | None]]:
    """Each root's search for the file names `bases` (None: the folder budget was spent
    before it), the roots sharing `memlens.maxIndexedFolders`."""
    out: list[tuple[str, list[str], SearchReport | None]] = []
    left = engine.settings.max_indexed_folders
    done = 0
    for root in roots:
        if left <= 0:
            out.append((root, [], None))
            continue
        ignore = IgnoreFilter(root, respect_git_ignore=engine.settings.respect_git_ignore,
                              respect_gemini_ignore=engine.settings.respect_gemini_ignore)
        paths, report = engine.downward_search(
            root, bases, ignore, left, include_special=True,
            progress=None if progress is None else functools.partial(_shifted, progress, done))
        left -= report.scanned
        done += report.scanned
        out.append((root, paths, report))
    return out


def workspace_memory_files(engine: MemoryEngine, roots: list[str],
                           unreadable: list[tuple[str, str]] | None = None,
                           stops: list[SearchReport] | None = None) -> list[str]:
    """Every memory file under the workspace folders (see `workspace_files_named`)."""
    by_name = workspace_files_named(engine, roots, engine.settings.context_file_names,
                                    unreadable, stops=stops)
    return list(dict.fromkeys(p for name in engine.settings.context_file_names
                              for p in by_name[name]))


def walked_roots(load: MemoryLoad, settings: MemorySettings) -> list[str]:
    """The folders whose subfolders `check` walks: the folder asked for (the user named it),
    and each include directory unless it is `/` or a home folder (a walk of everything; see
    `broad_include_directories`)."""
    return [r for r in (load.workspace_dirs or [load.cwd])
            if r == load.cwd or broad_folder(r, settings) is None]


def broad_include_directories(load: MemoryLoad, settings: MemorySettings) -> list[Diagnostic]:
    """`workspace-not-indexed` on each include directory `check` does not walk."""
    return [Diagnostic(path=r, line=1, col=1, end_line=1, end_col=1, severity="warning",
                       code="workspace-not-indexed",
                       message=f"Memory Lens did not check the subfolders of the include "
                               f"directory {r}: it is {what}, and walking it reads everything "
                               "below. Name a project folder instead, or set "
                               "memlens.allowBroadWorkspace to check it anyway")
            for r in (load.workspace_dirs or []) if r != load.cwd and load.trusted
            and (what := broad_folder(r, settings)) is not None]


def subfolder_files(engine: MemoryEngine, load: MemoryLoad,
                    unreadable: list[tuple[str, str]] | None = None,
                    stops: list[SearchReport] | None = None) -> list[LoadedFile]:
    """Workspace memory files the startup load did not read, loaded as jit would load them."""
    if not load.trusted:
        return []
    loaded = set(load.paths)
    roots = walked_roots(load, engine.settings)
    return [engine.load_file(p, "jit", import_format="tree")
            for p in workspace_memory_files(engine, roots, unreadable, stops)
            if p not in loaded]


def show(cwd: str, settings: MemorySettings, *, with_diagnostics: bool = True) -> ShowResult:
    from memlens.protocol.memory import ShowResult

    engine = MemoryEngine(settings)
    engine.collect_events = with_diagnostics
    load = engine.load(cwd)
    content, truncated = truncate(flattened(load), settings.max_context_chars)
    m = load.memory
    system, session = render_prompt_memory(load.mode, m.global_, m.user_project_memory,
                                           m.extension, m.project, settings.context_file_names)
    diagnostics: list[Diagnostic] = []
    if with_diagnostics:  # `memlens show` as text does not need the checker at all
        from memlens.agents.gemini.diagnostics import diagnose

        diagnostics = diagnose(load, engine)
    from memlens.reports.budgets import context_budget

    budget = context_budget("gemini", [(f.path, f.tier, f.content) for f in load.files])
    return ShowResult(cwd=load.cwd, mode=load.mode, trusted=load.trusted, files=load.paths,
                      file_count=load.file_count, content=content, hierarchical=m,
                      prompt=system, session_memory=session,
                      truncated=truncated or load.truncated, diagnostics=diagnostics,
                      chars=budget.total.chars, bytes=budget.total.bytes,
                      tokens=budget.total.tokens, estimator=budget.estimator.label)


def list_files(cwd: str, settings: MemorySettings) -> ListResult:
    from memlens.protocol.memory import ListedFile, ListResult
    from memlens.reports.budgets import context_budget, estimator_for, measure

    load = MemoryEngine(settings).load(cwd)
    files = []
    for f in load.files:
        figures = None if f.content is None else measure("gemini", f.content)
        files.append(ListedFile(path=f.path, tier=f.tier,
                                chars=figures.chars if figures else None,
                                bytes=figures.bytes if figures else None,
                                tokens=figures.tokens if figures else None))
    total = context_budget("gemini", [(f.path, f.tier, f.content) for f in load.files]).total
    return ListResult(cwd=load.cwd, mode=load.mode, files=files, file_count=load.file_count,
                      chars=total.chars, bytes=total.bytes, tokens=total.tokens,
                      estimator=estimator_for("gemini").label)


def check(cwd: str, settings: MemorySettings, *, reader: FileReader | None = None,
          receivers: Collection[str] | None = None) -> list[Diagnostic]:
    """Every diagnostic for the workspace at `cwd`: startup memory and every subfolder file
    (`reader`: the files' text, the disk's by default); hidden content in what the agents of
    `receivers` read (the agents shown there; None: every agent), Gemini CLI's files with
    them."""
    from memlens.agents.gemini.diagnostics import diagnose

    engine = MemoryEngine(settings, reader)
    load = engine.load(cwd)
    unreadable: list[tuple[str, str]] = []
    stops: list[SearchReport] = []
    extra = subfolder_files(engine, load, unreadable, stops)
    from memlens.agents.gemini.inbox import skill_diagnostics

    found = diagnose(load, engine, extra, unreadable, stops)
    found += hidden_check(engine, load, extra, receivers)
    found += broad_include_directories(load, settings)
    # Gemini CLI's own skills; another agent's are in that agent's check (reading.agent_check).
    found += skill_diagnostics(settings.home, load.cwd, load.trusted)
    return sorted(found, key=Diagnostic.sort_key)


def check_file(path: str, settings: MemorySettings) -> list[Diagnostic]:
    """Diagnostics for one memory file, rendered as a root (as jit loading reads it)."""
    from memlens.agents.gemini.diagnostics import diagnose
    from memlens.workspace.readers import readers_diagnostics, readers_of

    engine = MemoryEngine(settings)
    loaded = engine.load_file(path, "project")
    load = MemoryLoad(settings.mode, posixpath.dirname(path), True, None, [path], [loaded],
                      {}, HierarchicalMemory())
    return [*diagnose(load, engine),
            *readers_diagnostics(readers_of([loaded], []), _text_of(engine))]


def _text_of(engine: MemoryEngine) -> Callable[[str], str | None]:
    return lambda path: engine.reader.read(path).content


def hidden_check(engine: MemoryEngine, load: MemoryLoad, extra: list[LoadedFile],
                 receivers: Collection[str] | None = None) -> list[Diagnostic]:
    """`hidden-text` and `hidden-comment` on every file an agent reads for the workspace at
    `load.cwd`: Gemini CLI's startup and subfolder files with their imports, and (in a
    trusted folder) the memory of every other agent of `receivers` (None: every agent)
    checked there."""
    from memlens.agents import checked_agents
    from memlens.workspace.readers import readers_diagnostics, readers_of

    checks = []
    if load.trusted:
        roots = walked_roots(load, engine.settings)
        others = tuple(a for a in checked_agents() if receivers is None or a.id in receivers)
        found = workspace_files_named(engine, roots, list(dict.fromkeys(
            n for a in others for n in a.file_names(engine.settings))))
        for agent in others:
            names = agent.file_names(engine.settings)
            checks.append((agent, workspace_check(
                agent, engine.settings, roots, [p for n in names for p in found[n]],
                engine.reader)))
    return readers_diagnostics(readers_of([*load.files, *extra], checks), _text_of(engine))


def workspace_check(agent: MemoryAgent, settings: MemorySettings, roots: list[str],
                    found: list[str], reader: FileReader) -> WorkspaceCheck:
    """`agent.check_workspace(...)`, once per command run for the same question (`check`
    asks it for the hidden-content check and again for the agent's own diagnostics)."""
    # The settings object is kept with the answer, so its id names it for the whole run.
    return tree.run_memo(
        ("check_workspace", agent.id, tuple(roots), tuple(found), id(settings)),
        lambda: (settings, agent.check_workspace(settings, roots, found, reader)))[1]


def agent_hidden_check(agent: MemoryAgent, check: WorkspaceCheck, reader: FileReader,
                       others: Iterable[tuple[MemoryAgent, WorkspaceCheck]] = ()
                       ) -> list[Diagnostic]:
    """`hidden-text` and `hidden-comment` on the files one agent's workspace check reads,
    each naming the agents of `others` (other agents' checks) that read it too."""
    from memlens.workspace.readers import readers_diagnostics, readers_of

    readers = readers_of([], [(agent, check), *others])
    return readers_diagnostics({p: agents for p, agents in readers.items() if agent in agents},
                               lambda path: reader.read(path).content)


def _touched(agent: MemoryAgent, cwd: str, target: str, settings: MemorySettings,
             read_tool: bool) -> str | None:
    """The path whose memory loads after the agent's tools touch `target` (None: nothing
    loads). With `read_tool` its read tool reads it (`MemoryAgent.read_tool_target`: a missing
    file or a folder fails first; Gemini CLI 0.44+ follows a link to its real path); without
    it a folder stands for list_directory and a missing file for a write creating it."""
    path = posixpath.join(cwd, target)
    return agent.read_tool_target(path, settings) if read_tool else path


def agent_jit(agent: MemoryAgent, cwd: str, targets: list[str],
              settings: MemorySettings, *, read_tool: bool = False) -> list[JitEntry]:
    """For each target in turn, what `agent` adds after its tools read it (one session)."""
    from memlens.agents.base import WorkspaceCheck
    from memlens.protocol.memory import JitEntry

    session = agent.jit_session(settings, cwd, FileReader(), WorkspaceCheck())
    entries = []
    for target in targets:
        touched = _touched(agent, cwd, target, settings, read_tool)
        if session is None or touched is None:
            entries.append(JitEntry(target=target, files=[], context=""))
            continue
        load = session.load_for(touched)
        entries.append(JitEntry(target=target, files=[f.path for f in load.files],
                                context=load.context))
    return entries


def jit(cwd: str, targets: list[str], settings: MemorySettings, *,
        read_tool: bool = False) -> list[JitEntry]:
    """For each target in turn, what Gemini CLI's tools would append (shared loaded set)."""
    from memlens.protocol.memory import JitEntry

    engine = MemoryEngine(settings)
    if not settings.jit_context:
        return [JitEntry(target=t, files=[], context="") for t in targets]
    startup = engine.load_jit(cwd)
    from memlens.agents import agent_by_id
    from memlens.agents.gemini.jit import JitSession

    session = JitSession.after_startup(engine, startup)
    entries = []
    for target in targets:
        touched = _touched(agent_by_id("gemini"), startup.cwd, target, settings, read_tool)
        if touched is None:
            entries.append(JitEntry(target=target, files=[], context=""))
            continue
        result = session.discover(touched)
        entries.append(JitEntry(target=target, files=[f.path for f in result.files],
                                context=result.appendix))
    return entries


def startup_text(agent: MemoryAgent, cwd: str, settings: MemorySettings) -> str:
    """What `agent` sends at start-up working in `cwd`, as `memlens show` prints it: Gemini
    CLI's merged memory (flat), another agent's exact text; cut at `maxContextChars`."""
    if agent.id == "gemini":
        return show(cwd, settings, with_diagnostics=False).content
    text, _ = truncate(agent.load(cwd, settings).text, settings.max_context_chars,
                       agent.receiver)
    return text


def jit_entries(agent: MemoryAgent, cwd: str, targets: list[str], settings: MemorySettings,
                *, read_tool: bool = False) -> list[JitEntry]:
    """`memlens jit`'s entries for `agent`: Gemini CLI's own JIT session, another agent's
    (`agent_jit`); the text it prints is their contexts joined."""
    if agent.id == "gemini":
        return jit(cwd, targets, settings, read_tool=read_tool)
    return agent_jit(agent, cwd, targets, settings, read_tool=read_tool)


def agent_jit_payloads(agent: MemoryAgent, cwd: str, targets: list[str],
                       settings: MemorySettings, *, read_tool: bool = False
                       ) -> list[AgentJitEntry]:
    """`memlens jit --agent`: for each target in turn (one session), the files `agent` adds
    and the exact strings it sends then."""
    from memlens.agents.base import WorkspaceCheck
    from memlens.protocol.memory import AgentJitEntry

    session = agent.jit_session(settings, cwd, FileReader(), WorkspaceCheck())
    entries = []
    for target in targets:
        touched = _touched(agent, cwd, target, settings, read_tool)
        if session is None or touched is None:
            entries.append(AgentJitEntry(target=target, files=[], payloads=[], context=""))
            continue
        load = session.load_for(touched)
        entries.append(AgentJitEntry(target=target, files=[f.path for f in load.files],
                                     payloads=load.payloads, context=load.context))
    return entries


def _worth_saying(agent: MemoryAgent, settings: MemorySettings, roots: list[str],
                  ignored: list[Diagnostic], reader: FileReader) -> list[Diagnostic]:
    """The files an agent will not read that a user needs told about: not one inside a skill
    folder (the skill's material, not a folder's memory), nor one that is the same file as
    one it reads at start under another name (`CLAUDE.md -> AGENTS.md`: a symbolic link)."""
    ignored = [d for d in ignored if not in_skill_folder(d.path)]
    if not ignored or not roots:
        return ignored
    read = {os.path.realpath(f.path) for root in roots
            for f in agent.load(root, settings, reader).files}
    return [d for d in ignored if os.path.realpath(d.path) not in read]


def profile_diagnostics(settings: MemorySettings, roots: list[str], found: list[str],
                        reader: FileReader, only: str | None = None) -> list[Diagnostic]:
    """What the chosen agents' profiles say about the workspace folders `roots`
    (docs/reference.md "Which agent, which version", "Diagnostics"): the memory files each will not
    read (`agent-ignores-file`; `found`: every agent's memory file the walk found), and
    `agent-version-unverified` on the first file an unverified one reads in the first root (outside
    HOME when it can). `only`: that agent alone."""
    from memlens.agent_versions import profile_for, version_diagnostic
    from memlens.agents import AGENT_IDS, agent_by_id

    profiles = [p for p in settings.chosen_agents if p.agent in AGENT_IDS]
    if only is not None:
        profiles = [p for p in profiles if p.agent == only] or [profile_for(only, None)]
    problems: list[Diagnostic] = []
    for profile in profiles:
        agent = agent_by_id(profile.agent)
        problems += _worth_saying(agent, settings, roots,
                                  agent.ignored_files(settings, roots, found, reader), reader)
        if not profile.verified and roots:
            files = [f.path for f in agent.load(roots[0], settings, reader).files]
            inside = [p for p in files if is_subpath(roots[0], p)
                      and not is_subpath(settings.home, p)]
            if files and (note := version_diagnostic(profile, (inside or files)[0])):
                problems.append(note)
    return problems
