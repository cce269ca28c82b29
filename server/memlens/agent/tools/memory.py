"""save_memory: a fact or preference appended to the user's memory file (global, or the
project's private one in HOME), after the user approves the diff."""

from __future__ import annotations

import posixpath
import threading
from typing import Any, ClassVar, Literal

from memlens.agent.tools.base import STRING, PlannedCall, ToolArgs, ToolOutcome, ToolRefused
from memlens.agent.tools.files import WorkspaceTool
from memlens.agents.gemini.writing import (
    Scope,
    create_patch,
    escapes_home,
    memory_target,
    proposed_memory,
    save_memory,
)
from memlens.files.pathpolicy import PathPolicy, PathRefused


class SaveMemoryArgs(ToolArgs):
    fact: str
    scope: Literal["global", "project"] | None = None


class SaveMemory(WorkspaceTool):
    name = "save_memory"
    description = ("Saves concise user context (a fact or preference) to long-term memory. The "
                   "user approves it.")
    properties: ClassVar[dict[str, Any]] = {
        "fact": {**STRING, "description": "The specific fact or piece of information to "
                 "remember. Should be a clear, self-contained statement."},
        "scope": {"type": "STRING", "enum": ["global", "project"],
                  "description": "Where to save the memory. 'global' (default) saves to a "
                  "file loaded in every workspace. 'project' saves to a project-specific file "
                  "private to the user, not committed to the repo."}}
    arguments = SaveMemoryArgs
    writes = True

    def plan(self, args: dict[str, Any], params: ToolArgs) -> PlannedCall:
        assert isinstance(params, SaveMemoryArgs)
        path, scope = self._target(params)
        try:
            current, proposed = proposed_memory(params.fact, path, scope)
        except ValueError as err:
            raise ToolRefused(str(err)) from err
        return PlannedCall(self.name, args, f"Confirm Memory Save: {path}",
                           create_patch(posixpath.basename(path), current, proposed), path,
                           params=params)

    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, SaveMemoryArgs)
        path, scope = self._target(params)
        settings = self.workspace.settings
        try:
            outcome = save_memory(params.fact, path, scope, home=settings.home)
        except ValueError as err:
            raise ToolRefused(str(err)) from err
        return ToolOutcome(outcome.success, outcome.llm_content, outcome.return_display,
                           structured=True)

    def _target(self, params: SaveMemoryArgs) -> tuple[str, Scope]:
        scope: Scope = "project" if params.scope == "project" else "global"
        settings = self.workspace.settings
        home = settings.home
        target = memory_target(home, settings.context_file_names, self.workspace.roots[0], scope)
        if escapes_home(target, home):
            raise ToolRefused(f"Refusing to write through a symbolic link that leaves HOME: "
                              f"{target}")
        try:
            PathPolicy([home]).check_write(target)
        except PathRefused as refused:
            raise ToolRefused(str(refused)) from None
        return target, scope
