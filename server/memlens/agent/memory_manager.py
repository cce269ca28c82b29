"""The memory manager (opt-in `memlens.memoryManager`): save_memory handed to an agent that
routes a fact to the right GEMINI.md (global, project root or a subfolder, referenced from the
root), merges duplicates, and asks the user when the scope is ambiguous. It is an agent like
the chat, with its own tool set and system prompt, run by the same session machinery.

Its policy is enforced here, on every call, whatever the model asks: it may read and write
memory files only (the context file names, under the workspace folders and HOME/.gemini);
listing and globbing show memory files only; nothing else is readable or writable. A file is
judged by its real path: `link/GEMINI.md` pointing at `../Makefile` is the Makefile, refused.
Nor does it write into Claude Code's memory folder when the repository's own settings chose
that folder (docs/security.md, "Claude Code's memory folder"): only the user may confirm that,
and the manager cannot ask (it refuses and says how).
"""

from __future__ import annotations

import json
import os
import posixpath
from typing import Any

from memlens.agent.context import AgentContext
from memlens.agent.session import Emit, run_agent
from memlens.agent.tools.ask_user import AskUser
from memlens.agent.tools.base import (
    Agent,
    AgentRun,
    Approve,
    PlannedCall,
    Tool,
    ToolArgs,
    ToolOutcome,
    ToolRefused,
    ToolRuntime,
    ToolSet,
)
from memlens.agent.tools.files import ListDirectory, ReadFile, Replace, WriteFile
from memlens.agent.tools.memory import SaveMemory, SaveMemoryArgs
from memlens.agent.tools.search import Glob
from memlens.agent.tools.workspace import Workspace
from memlens.agents.claude.memory_folder import AutoMemoryFolder, auto_memory_folder
from memlens.files.nodecompat import is_subpath
from memlens.files.pathpolicy import PathPolicy, PathRefused, Refusal
from memlens.model import is_context_file

MAX_TURNS = 10
MAX_SECONDS = 5 * 60
OUT_OF_TIME = "The memory manager ran out of time (5 minutes)."


def repository_memory_folders(home: str, folders: list[str]) -> list[AutoMemoryFolder]:
    """Claude Code's auto-memory folders that the repository's own settings chose, for each
    workspace folder."""
    out = []
    for folder in folders:
        place = auto_memory_folder(home, folder)
        if place.folder is not None and place.chosen_by == "repository":
            out.append(place)
    return out


class MemoryFiles(Workspace):
    """The workspace folders and HOME/.gemini, memory files only."""

    def __init__(self, context: AgentContext):
        home_gemini = posixpath.join(context.settings.home, ".gemini")
        os.makedirs(home_gemini, exist_ok=True)
        super().__init__(context.settings, [*context.workspace_dirs, home_gemini], None)
        self.names_allowed = set(context.settings.context_file_names)
        self.home_gemini = os.path.realpath(home_gemini)
        self.repository_chosen = repository_memory_folders(context.settings.home,
                                                           context.workspace_dirs)

    def _repository_folder(self, real: str) -> AutoMemoryFolder | None:
        """The repository-chosen Claude memory folder a write to `real` lands in (never
        ~/.gemini: Claude Code's memory is not written there, Gemini CLI's global file is)."""
        if is_subpath(self.home_gemini, real):
            return None
        for place in self.repository_chosen:
            if place.folder is not None and is_subpath(os.path.realpath(place.folder), real):
                return place
        return None

    def _memory_name(self, path: str, real: str) -> bool:
        names = sorted(self.names_allowed)
        return is_context_file(path, names) and is_context_file(real, names)

    def allow_file(self, tool: str, path: str, real: str, write: bool) -> None:
        if not self._memory_name(path, real):
            shown = path if path == real else f"{path} (really {real})"
            raise ToolRefused(f"The memory manager may only read and write memory files "
                              f"({', '.join(sorted(self.names_allowed))}) under the workspace "
                              f"and ~/.gemini; refused: {shown}")
        place = self._repository_folder(real) if write else None
        if place is not None:
            raise ToolRefused(f"The memory manager does not write into Claude Code's memory "
                              f"folder {place.folder}: the repository chose it (in "
                              f"{place.chosen_in}), and only the user can confirm writing "
                              "there (memlens add --agent claude "
                              "--allow-repository-memory-folder, or Add Memory in the editor). "
                              f"Refused: {path}")

    def listed(self, path: str, real: str, is_dir: bool) -> bool:
        if not self.visible(path):
            return False
        return is_dir or self._memory_name(path, real)


def manager_tools(context: AgentContext) -> ToolSet:
    files = MemoryFiles(context)
    return ToolSet([ReadFile(files), ListDirectory(files), Glob(files), WriteFile(files),
                    Replace(files), AskUser()])


def _file_block(label: str, path: str, policy: PathPolicy, names: list[str]) -> str:
    """A memory file for the prompt, read through the policy: never a FIFO, never a file
    whose real path leaves the roots or is not a memory file."""
    try:
        if posixpath.basename(policy.check_read(path)) not in names:
            content = "(not shown: not a memory file)"
        else:
            content = policy.read_text(path, 1_000_000)
    except PathRefused as refused:
        content = ("(no file yet)" if refused.kind is Refusal.MISSING
                   else f"(not shown: {refused})")
    return f"## {label}: {path}\n```markdown\n{content}\n```"


def manager_prompt(context: AgentContext) -> str:
    home = context.settings.home
    name = context.settings.context_file_names[0]
    root = context.workspace_dirs[0]
    global_file = posixpath.join(home, ".gemini", name)
    project_file = posixpath.join(root, name)
    policy = PathPolicy([*context.workspace_dirs, posixpath.join(home, ".gemini")])
    names = context.settings.context_file_names
    return f"""You keep the user's long-term memory: the {name} files a coding agent loads at the
start of every session. Your job is to record one new memory in the right place.

# Where memories live (broadest first)
- Global: {global_file} — the user's own preferences, habits, aliases and facts that hold in
  every project.
- Project root: {project_file} — this project's table of contents: architecture, conventions,
  workflows, people, and a reference to each subfolder memory file.
- Subfolder: <folder>/{name} inside the project — detail about one module or area. When you
  create or extend one, make sure the project root file references it.

# How to route
- A personal preference or habit → global.
- How this project does things (architecture, conventions, workflow, team) → project root.
- Detail about one module → that module's {name}, referenced from the project root.
- If a memory could be either a personal habit or a project convention, call ask_user before
  writing anything. Never guess between global and project.

# While writing
- First check the current files below: if the memory is already there, or an entry says the
  same thing, update that entry instead of adding another; merge equivalent entries and keep the
  most informative wording; drop entries the new memory makes stale.
- Keep files short (they are read in every session) and entries concise; edit surgically and
  keep everything the user wrote.
- You can only read and write {name} files under the workspace and ~/.gemini. Do not explore the
  codebase. If you lack the context to decide, say what you need and stop.
- Use as few turns as possible. When done, answer with one sentence saying where the memory went.

# Initial context
{_file_block("Global memory", global_file, policy, names)}

{_file_block("Project memory", project_file, policy, names)}"""


MEMORY_MANAGER = Agent(tools=manager_tools, system_text=manager_prompt, max_turns=MAX_TURNS,
                       time_limit=MAX_SECONDS)


def fact_request(fact: str, scope: str | None) -> str:
    hint = {"global": " The user asked for it to be saved globally.",
            "project": " The user asked for it to be saved for this project."}.get(scope or "",
                                                                                  "")
    return f"Remember this: {fact}{hint}"


def _ended(run: AgentRun) -> tuple[str, str]:
    """(status, the manager's closing sentence) of a run."""
    return ("error", OUT_OF_TIME) if run.timed_out else (run.status, run.text)


async def manage_memory(context: AgentContext, fact: str, scope: str | None, emit: Emit,
                        approve: Approve) -> tuple[str, str]:
    """Run the manager on one fact; returns (status, its closing sentence)."""
    return _ended(await run_agent(context, MEMORY_MANAGER, fact_request(fact, scope), emit,
                                  approve))


class RoutedSaveMemory(Tool):
    """The chat's save_memory with the memory manager on: the manager routes the fact and
    asks the user to approve each of its writes."""

    name = SaveMemory.name
    description = SaveMemory.description
    properties = SaveMemory.properties
    arguments = SaveMemoryArgs
    writes = True
    approves_own_writes = True

    def plan(self, args: dict[str, Any], params: ToolArgs) -> PlannedCall:
        assert isinstance(params, SaveMemoryArgs)
        if not params.fact.strip():
            raise ToolRefused('Parameter "fact" must be a non-empty string.')
        return super().plan(args, params)

    async def run(self, call: PlannedCall, runtime: ToolRuntime) -> ToolOutcome:
        params = call.params
        assert isinstance(params, SaveMemoryArgs)
        status, sentence = _ended(await runtime.delegate(
            MEMORY_MANAGER, fact_request(params.fact.strip(), params.scope)))
        ok = status == "done"
        message = sentence or ("Saved." if ok else "The memory manager could not save it.")
        return ToolOutcome(ok, json.dumps({"success": ok, "message": message}), message,
                           structured=True)
