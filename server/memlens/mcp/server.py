"""`memlens mcp`: the Model Context Protocol server over stdio (docs/mcp.md), on the official
SDK's `MCPServer`. Four read-only tools, each with its JSON schema and structured output
(models.py), and each agent's merged context as a resource; every answer is the engine's
(answers.py), for the workspace folders the client gives as roots, else the folder the server
was started in (scope.py). Nothing is written."""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable, Mapping
from typing import Annotated, Any, TypeVar
from urllib.parse import urlencode

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer, ResourceSecurity
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.session import ServerSession
from mcp.types import (
    CallToolResult,
    ListResourcesResult,
    PaginatedRequestParams,
    Resource,
    TextContent,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

from memlens import __version__
from memlens.agent_versions import AGENT_LABELS, InstalledAgent
from memlens.files.tree import one_walk
from memlens.mcp import answers
from memlens.mcp.models import AgentReads, AgentsHere, FileExplained, RulesFor
from memlens.mcp.scope import (
    Refused,
    agent_pin,
    folder_in,
    path_in,
    root_of,
    roots_from_uris,
    settings_for,
)
from memlens.model import MemorySettings

T = TypeVar("T")
CONTEXT_URI = "memlens://context/{agent}{?folder}"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)
INSTRUCTIONS = (
    "Memory Lens answers what a coding agent (Gemini CLI, Claude Code, Codex, GitHub Copilot "
    "CLI, VS Code chat, Cursor, Antigravity, the AGENTS.md convention) receives from its "
    "memory and instruction files, as verified against the real agents: at start-up in a "
    "folder, and when a file is read or written. Call rules_for(path) before editing or "
    "creating a file to get the scoped instructions that apply to it.")

FolderArg = Annotated[str, Field(description="a workspace folder (absolute, or relative to "
                                             "the first root); '.': the first root")]
PathArg = Annotated[str, Field(description="a file (absolute, or relative to the folder); "
                                           "it need not exist")]
AgentArg = Annotated[str, Field(description="the agent, as `memlens --agent` takes it: gemini, "
                                            "claude, codex, copilot, vscode-chat, cursor, "
                                            "antigravity, agents, opencode, pi; optionally "
                                            "@VERSION")]


class Oracle:
    """The server's state: the folder it started in, the agents found on PATH (asked once),
    and the SDK server with the tools and resources."""

    def __init__(self, start: str) -> None:
        self.start = os.path.realpath(start)
        self._installed: Mapping[str, InstalledAgent] | None = None
        self.server: MCPServer[Any] = _Server(
            self, name="memlens", title="Memory Lens", version=__version__,
            instructions=INSTRUCTIONS, log_level="WARNING")
        self._register()

    # -- where and with which settings ---------------------------------------------------

    def installed(self) -> Mapping[str, InstalledAgent]:
        if self._installed is None:
            from memlens.agent_versions import detect_installed

            self._installed = detect_installed()
        return self._installed

    async def roots(self, ctx: Context[Any] | None) -> list[str]:
        return await self.roots_of(None if ctx is None else ctx.session)

    async def roots_of(self, session: ServerSession | None) -> list[str]:
        """The client's file:// roots when it has the roots capability, else the start
        folder."""
        caps = None if session is None else session.client_capabilities
        if session is not None and caps is not None and caps.roots is not None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # roots are deprecated in a later revision
                    listed = await session.list_roots()
                folders = roots_from_uris([str(r.uri) for r in listed.roots])
                if folders:
                    return folders
            except Exception:  # a client that cannot answer: the start folder
                pass
        return [self.start]

    def settings(self, folder: str, pin: str | None = None) -> MemorySettings:
        return settings_for(folder, self.installed(), pin)

    async def answer(self, work: Callable[[], T]) -> T:
        """`work` on a worker thread (the event loop keeps serving), every folder walked at
        most once within it, a refusal as the tool's error."""
        def run() -> T:
            with one_walk():
                return work()
        try:
            return await anyio.to_thread.run_sync(run)
        except Refused as err:
            raise ToolError(str(err)) from None

    # -- the tools -------------------------------------------------------------------------

    def _register(self) -> None:
        tool = functools.partial(self.server.tool, annotations=READ_ONLY)
        tool(description="The coding agents in use or with memory files in a workspace folder "
                         "(what `memlens show` covers there), each with its version, whether "
                         "Memory Lens was verified on it, and how we know it is here.")(
            self.agents_here)
        tool(description="The exact text an agent receives at start-up working in a folder "
                         "(as `memlens show --agent` prints it), each part's source file; with "
                         "`path`, what reading or writing that file adds (as `memlens jit`): "
                         "the tool's text is that added text.")(self.what_agent_reads)
        tool(description="For a memory or instruction file: which agents read it, when "
                         "(start-up, on read, on demand, never) and why, where it is cut, and "
                         "its diagnostics (as `memlens check`).")(self.explain_file)
        tool(description="The scoped instructions every agent shown in the folder applies to "
                         "`path` when it reads or creates it, with their sources: follow them "
                         "when your agent does not load them on its own.")(self.rules_for)
        # `folder` is checked by scope.py (inside a root), not by the SDK's refusal of any
        # absolute path: a root other than the first is named by its absolute path.
        self.server.resource(
            CONTEXT_URI, name="agent-context", security=ResourceSecurity(
                exempt_params={"folder"}),
            description="An agent's merged context at start-up in a workspace folder (the "
                        "first root when `folder` is left out)",
            mime_type="text/markdown")(self.context)

    async def agents_here(self, folder: FolderArg = ".", ctx: Context[Any] | None = None
                          ) -> Annotated[CallToolResult, AgentsHere]:
        roots = await self.roots(ctx)

        def work() -> AgentsHere:
            where = folder_in(roots, folder)
            return answers.agents_here(where, self.settings(where), self.installed())
        return _result(await self.answer(work))

    async def what_agent_reads(self, agent: AgentArg, folder: FolderArg = ".",
                               path: PathArg | None = None, ctx: Context[Any] | None = None
                               ) -> Annotated[CallToolResult, AgentReads]:
        roots = await self.roots(ctx)

        def work() -> AgentReads:
            agent_id, pin = agent_pin(agent)
            where = folder_in(roots, folder)
            target = None if path is None else path_in(roots, path, where)
            return answers.what_agent_reads(agent_id, where, self.settings(where, pin), target)
        reads = await self.answer(work)
        text = reads.startup.text if reads.on_path is None else reads.on_path.text
        return _result(reads, text)

    async def explain_file(self, path: PathArg, folder: FolderArg | None = None,
                           ctx: Context[Any] | None = None
                           ) -> Annotated[CallToolResult, FileExplained]:
        roots = await self.roots(ctx)

        def work() -> FileExplained:
            where = folder_in(roots, folder) if folder else roots[0]
            target = path_in(roots, path, where)
            where = where if folder else root_of(roots, target)
            return answers.explain_file(target, where, self.settings(where))
        return _result(await self.answer(work))

    async def rules_for(self, path: PathArg, folder: FolderArg | None = None,
                        ctx: Context[Any] | None = None) -> Annotated[CallToolResult, RulesFor]:
        roots = await self.roots(ctx)

        def work() -> RulesFor:
            where = folder_in(roots, folder) if folder else roots[0]
            target = path_in(roots, path, where)
            where = where if folder else root_of(roots, target)
            return answers.rules_for(target, where, self.settings(where))
        rules = await self.answer(work)
        text = "".join(f"==> {a.label}: instructions for {rules.path} <==\n{a.rules.text}\n"
                       for a in rules.agents) or f"No agent adds instructions for {rules.path}."
        return _result(rules, text)

    async def context(self, agent: str, folder: str = ".", ctx: Context[Any] | None = None
                      ) -> str:
        roots = await self.roots(ctx)

        def work() -> str:
            agent_id, pin = agent_pin(agent)
            where = folder_in(roots, folder)
            return answers.context_of(agent_id, where, self.settings(where, pin))
        try:
            return await self.answer(work)
        except ToolError as err:
            raise ResourceError(str(err)) from None


class _Server(MCPServer[Any]):
    """The SDK's server, whose resource listing names each agent's context in each root
    (the agents shown there), asked of the client's roots."""

    def __init__(self, oracle: Oracle, **options: Any) -> None:
        super().__init__(**options)
        self._oracle = oracle

    async def _handle_list_resources(self, ctx: ServerRequestContext[Any],
                                     params: PaginatedRequestParams | None
                                     ) -> ListResourcesResult:
        roots = await self._oracle.roots_of(ctx.session)
        oracle = self._oracle

        def work() -> list[Resource]:
            listed = []
            for number, root in enumerate(roots):
                _, _, agents = answers.shown(root, oracle.settings(root))
                query = "" if number == 0 else "?" + urlencode({"folder": root})
                listed += [Resource(uri=f"memlens://context/{agent}{query}",
                                    name=f"{agent} context: {os.path.basename(root) or root}",
                                    title=f"What {AGENT_LABELS.get(agent, agent)} reads at "
                                          f"start-up in {root}",
                                    mime_type="text/markdown") for agent in agents]
            return listed
        return ListResourcesResult(resources=await oracle.answer(work))


def _result(answer: BaseModel, text: str | None = None) -> CallToolResult:
    """The tool's result: its structured answer, and as text `text` (the agent's exact text)
    or the answer as JSON."""
    shown = answer.model_dump_json(by_alias=True, indent=2) if text is None else text
    return CallToolResult(content=[TextContent(type="text", text=shown)],
                          structured_content=answer.model_dump(mode="json", by_alias=True))


def serve(start: str) -> None:
    """Serve over stdio until the client closes it."""
    Oracle(start).server.run("stdio")
