"""Effective-context diff in the editor (issue 14): memlens/contextChanged after a save that
changes what some agent sends at start in some folder, and memlens/contextDiff, the texts
before and after for one (agent, folder).

The baseline (what each agent sends at start in each folder of interest, from the files as
saved on disk) is taken when the first memory file (or a file one imports) is opened or
edited; each save of such a file (or a batch of changes the file watcher or the client
reports) recomputes it once, off the event loop (`Recompute`), and the differences are what
the notification lists. Folders of interest: every workspace folder and
every folder holding a memory file the index knows (any agent's names). Agents: the pins
(`memlens.agents` in the editor's settings, else $MEMLENS_AGENTS), else every agent the editor
shows for a workspace folder (lsp/agents_shown.py: in use, or with files that apply), each at
its detected version. An agent shown later (its first file was just created) joins the
comparison then; what it read before it was shown is not known, so its first baseline is
taken without a notification.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
from typing import TYPE_CHECKING, Any

from memlens.agent_versions import chosen_agents, detect_installed
from memlens.agents import AGENT_IDS, home_folders
from memlens.files.fsread import FileReader
from memlens.files.nodecompat import is_subpath
from memlens.lsp.agents_shown import agents_shown
from memlens.lsp.convert import uri_of
from memlens.lsp.errors import InvalidParams, parse_params
from memlens.model import MemorySettings
from memlens.protocol.context_diff import (
    ContextChangedEvent,
    ContextChangeEntry,
    ContextDiffParams,
    ContextDiffResult,
)
from memlens.workspace.effective import (
    ChosenAgent,
    ContextChange,
    chosen,
    effective_context,
    folders_of_interest,
    summary,
)

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

CONTEXT_CHANGED = "memlens/contextChanged"
CONTEXT_DIFF = "memlens/contextDiff"

def _pins(ls: MemlensServer) -> list[str]:
    value = ls.editor.window.get("agents")
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and value:
        return list(value)
    env = os.environ.get("MEMLENS_AGENTS", "")
    return [p.strip() for p in env.split(",") if p.strip()]


def editor_agents(ls: MemlensServer) -> list[ChosenAgent]:
    """The agents whose context the editor compares (see the module docstring)."""
    state = ls.service.effective
    pins = _pins(ls)
    if pins:
        if state.agents is None:
            state.agents = _profiles(pins)
        return state.agents
    compared = [a.id for a in state.agents or []]
    shown = {agent for folder in ls.service.folders
             for agent in agents_shown(ls, folder).shown}
    # Once compared, an agent stays: its baseline is known, and a file removed may be news.
    wanted = [agent for agent in AGENT_IDS if agent in shown or agent in compared]
    if state.agents is None or wanted != compared:
        state.agents = _profiles(wanted)
    return state.agents


def _profiles(names: list[str]) -> list[ChosenAgent]:
    """`names` (pins, or agent ids) as profiles at the versions detected on PATH."""
    try:
        installed = detect_installed() if any("@" not in n for n in names) else {}
        profiles = chosen_agents(names, installed) if names else []
    except ValueError:
        profiles = []
    return chosen((p.agent, p.name, p.release or p.profile or None) for p in profiles)


def _folders(ls: MemlensServer) -> tuple[list[str], dict[str, MemorySettings]]:
    """The folders of interest, and the settings of the workspace folder serving each."""
    service = ls.service
    settings_of: dict[str, MemorySettings] = {}
    for root in service.folders:
        index = service.index_of_folder(root)
        known = [*index.roots, *(p for c in index.agent_checks.values() for p in c.found)]
        homes = home_folders(index.settings.home)  # the user's memory is not a folder to work in
        known = [p for p in known if not any(is_subpath(h, p) for h in homes)]
        for folder in folders_of_interest([root], known):
            if service.folder_for(folder) == root:  # a nested workspace folder serves its own
                settings_of.setdefault(folder, index.settings)
    return list(settings_of), settings_of


def current(ls: MemlensServer) -> dict[tuple[str, str], str]:
    """What each agent sends at start in each folder of interest, from the files on disk."""
    folders, settings_of = _folders(ls)
    return effective_context(editor_agents(ls), folders, settings_of.__getitem__,
                             reader=FileReader)


def concerns(ls: MemlensServer, path: str) -> bool:
    """A change to `path` may change some agent's context: a memory file or a file the index
    or an agent check follows."""
    service = ls.service
    if service.tracks(path):
        return True
    return any(path in check.watched or path in check.sources
               for index in service.indexes() for check in index.agent_checks.values())


def _relative(folder: str, ls: MemlensServer) -> str:
    root = ls.service.folder_for(folder) or folder
    return posixpath.relpath(folder, root)


def _shown(folder: str, ls: MemlensServer) -> str:
    """`api/`, or the workspace folder's own name for its root (`demo/`)."""
    relative = _relative(folder, ls)
    return (posixpath.basename(folder) if relative == "." else relative) + "/"


def _entry(ls: MemlensServer, change: ContextChange) -> ContextChangeEntry:
    profile = next((a.name for a in editor_agents(ls) if a.id == change.agent), change.agent)
    return ContextChangeEntry(agent=change.agent, agent_label=change.agent_label,
                              profile=profile, folder=change.folder,
                              relative_folder=_relative(change.folder, ls), diff=change.diff,
                              added=change.added, removed=change.removed)


def on_documents(ls: MemlensServer, recompute: Recompute, event: str, paths: list[str]
                 ) -> None:
    state = ls.service.effective
    if not ls.service.folders:
        return
    concerning = [p for p in paths if concerns(ls, p)]
    if not concerning:
        return
    if event in ("open", "change"):
        if state.baseline is None:
            state.advance(current(ls), concerning[0])
        return
    recompute.request(concerning)


class Recompute:
    """What each agent sends, recomputed after saves and disk changes once per batch, off the
    event loop (requests are answered meanwhile): a change that arrives while it computes
    supersedes the result, and one more computation covers both."""

    # Changes that arrive this soon after one join its batch (a branch switch comes as a
    # burst of notifications).
    DELAY_SECONDS = 0.05

    def __init__(self, ls: MemlensServer):
        self.ls = ls
        self.triggers: list[str] = []
        self.epoch = 0
        self.task: asyncio.Task[None] | None = None

    def request(self, paths: list[str]) -> None:
        self.triggers += [p for p in paths if p not in self.triggers]
        self.epoch += 1
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.DELAY_SECONDS)
            epoch, service = self.epoch, self.ls.service
            folders, settings_of = _folders(self.ls)
            agents = editor_agents(self.ls)
            now = await asyncio.to_thread(effective_context, agents, folders,
                                          settings_of.__getitem__, FileReader)
            if epoch == self.epoch and service is self.ls.service:
                break  # nothing newer: this result stands
        triggers, self.triggers = self.triggers, []
        _announce(self.ls, service.effective.advance(now, triggers[0]), triggers)


def _announce(ls: MemlensServer, changes: list[ContextChange], triggers: list[str]) -> None:
    if not changes:
        return
    name = posixpath.basename(triggers[0])
    said = name if len(triggers) == 1 else f"{name} and {len(triggers) - 1} more files"
    message = ContextChangedEvent(trigger=uri_of(triggers[0]), trigger_name=name,
                                  summary=summary(changes, said, several=len(triggers) > 1),
                                  changes=[_entry(ls, c) for c in changes])
    ls.protocol.notify(CONTEXT_CHANGED, message.wire())


def register(server: MemlensServer) -> None:
    recompute = Recompute(server)
    server.document_listeners.append(
        lambda event, paths: on_documents(server, recompute, event, paths))

    @server.feature(CONTEXT_DIFF)
    def context_diff(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(ContextDiffParams, params)
        folder = os.path.realpath(request.folder)
        last = (ls.service.effective.last or {}).get((request.agent, folder))
        if last is None:
            raise InvalidParams(f"no change to what {request.agent!r} reads in {folder} "
                                "since the server started")
        change = last.change
        trigger = posixpath.basename(last.trigger)
        shown = _shown(folder, ls)
        return ContextDiffResult(
            agent=change.agent, agent_label=change.agent_label, folder=folder,
            relative_folder=_relative(folder, ls), trigger_name=trigger,
            title=f"{trigger} → what {change.agent_label} reads in {shown} (before ↔ after)",
            before=change.before, after=change.after).wire()
