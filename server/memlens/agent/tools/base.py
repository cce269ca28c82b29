"""What a chat tool is, the set of tools one agent offers the model, the agent itself (a
tool set, a system prompt, a turn budget) and what a running tool may ask of the session
(`ToolRuntime`: the user's approval, another agent run to its end). The agent is defined with
its tools because a tool may hand work to an agent (save_memory to the memory manager).

A tool is one object: its declaration (what the model is told), whether a call waits for the
user's approval, its plan (the arguments validated, the change it would make shown as a diff)
and its run. The session knows tools only through a `ToolSet`, never by name.

Whatever the model sends, its arguments are validated by the tool's pydantic model: a bad
argument is a tool error the model reads, never an exception.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from memlens.agents.gemini.discovery import LoadedFile
from memlens.protocol.chat import ApprovalRequest, ApprovalResponse

if TYPE_CHECKING:
    from memlens.agent.context import AgentContext

MAX_OUTPUT_CHARS = 200_000

STRING: dict[str, Any] = {"type": "STRING"}
INTEGER: dict[str, Any] = {"type": "INTEGER"}


class ToolRefused(Exception):
    """A call the tool will not perform; the message goes back to the model."""


@dataclass
class ToolOutcome:
    ok: bool
    output: str
    summary: str
    jit_files: list[LoadedFile] = field(default_factory=list)
    # The output is a JSON object to hand to the model as is (save_memory's llmContent).
    structured: bool = False


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must be a non-empty string")
    return value


NonBlank = Annotated[str, AfterValidator(_non_blank)]


class ToolArgs(BaseModel):
    """The arguments of one tool call, as the model sent them (unknown keys are ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True)


@dataclass
class PlannedCall:
    tool: str
    args: dict[str, Any]
    title: str = ""
    diff: str | None = None
    path: str | None = None
    # What the file held when the diff was made (None: it did not exist). A write goes ahead
    # only if the file still holds it, so an edit made while the user was reading the
    # proposal is never overwritten.
    base: str | None = None
    params: ToolArgs | None = None


class Tool(ABC):
    """One chat tool. The declaration's required list is the arguments model's, so the two
    cannot disagree."""

    name: ClassVar[str]
    description: ClassVar[str]
    properties: ClassVar[dict[str, Any]]
    arguments: ClassVar[type[ToolArgs]]
    # A call changes files: it waits for the user's approval (where the tool set asks).
    writes: ClassVar[bool] = False
    # A change to a workspace file, which the autoEdit approval mode approves without asking.
    file_edit: ClassVar[bool] = False
    # The tool asks for each change itself while it runs (the memory manager does), so the
    # session does not ask for the call as a whole.
    approves_own_writes: ClassVar[bool] = False

    @classmethod
    def declaration(cls) -> dict[str, Any]:
        """The FunctionDeclaration (JSON schema) in Gemini's shape."""
        required = [n for n, f in cls.arguments.model_fields.items() if f.is_required()]
        return {"name": cls.name, "description": cls.description,
                "parameters": {"type": "OBJECT", "properties": copy.deepcopy(cls.properties),
                               "required": required}}

    def parse(self, args: dict[str, Any]) -> ToolArgs:
        """The arguments model, or ToolRefused with a message the model can act on."""
        try:
            return self.arguments.model_validate(args)
        except ValidationError as err:
            problems = []
            for problem in err.errors()[:5]:
                where = ".".join(str(p) for p in problem["loc"]) or "arguments"
                problems.append(f"{where}: {problem['msg']}")
            raise ToolRefused(f"Invalid arguments for {self.name}: {'; '.join(problems)}. "
                              "Call it again with arguments that match its declaration."
                              ) from None

    def plan(self, args: dict[str, Any], params: ToolArgs) -> PlannedCall:
        """What the call will do (blocking: the session plans in a worker thread). A write
        says which file and shows the diff the user approves."""
        return PlannedCall(self.name, args, params=params)

    @abstractmethod
    async def run(self, call: PlannedCall, runtime: ToolRuntime) -> ToolOutcome:
        """Carry out a planned (and, for a write, approved) call."""


class BlockingTool(Tool):
    """A tool whose work blocks (the file system): it runs in a worker thread, so the event
    loop (the language server's every request, cancel included) keeps answering."""

    async def run(self, call: PlannedCall, runtime: ToolRuntime) -> ToolOutcome:
        outcome = await asyncio.to_thread(self.execute, call, runtime.stop)
        if len(outcome.output) > MAX_OUTPUT_CHARS:
            outcome.output = outcome.output[:MAX_OUTPUT_CHARS] + "\n[output truncated]"
        return outcome

    @abstractmethod
    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        """The work itself; `stop`, once set, ends a long search early."""


class ToolSet:
    """The tools one agent offers, in the order the model is told of them."""

    def __init__(self, tools: Iterable[Tool], *, asks_approval: bool = True):
        self._tools = {tool.name: tool for tool in tools}
        # False for background work: nothing asks, its tools confine the writes instead.
        self.asks_approval = asks_approval

    def declarations(self) -> list[dict[str, Any]]:
        return [tool.declaration() for tool in self._tools.values()]

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def needs_approval(self, name: str) -> bool:
        tool = self._tools.get(name)
        return self.asks_approval and tool is not None and tool.writes

    def plan(self, tool: str, args: Any) -> PlannedCall:
        """Validate a call and work out what it will do (raises ToolRefused)."""
        found = self._tools.get(tool)
        if found is None:
            raise ToolRefused(f'Tool "{tool}" not found. Available tools: '
                              f"{', '.join(self.names())}.")
        if not isinstance(args, dict):
            raise ToolRefused(f"Arguments of {tool} must be an object.")
        return found.plan(args, found.parse(args))

    async def run(self, call: PlannedCall, runtime: ToolRuntime) -> ToolOutcome:
        return await self._tools[call.tool].run(call, runtime)


def function_response(outcome: ToolOutcome | None, error: str | None) -> dict[str, Any]:
    """The `response` object of a functionResponse part."""
    if error is not None:
        return {"error": error}
    assert outcome is not None
    if outcome.structured:
        try:
            parsed = json.loads(outcome.output)
            if isinstance(parsed, dict):
                return parsed
        except ValueError:
            pass
    return {"output": outcome.output}


# --- the agent a session runs, and what a running tool may ask of the session ---------------
Approve = Callable[[ApprovalRequest], Awaitable[ApprovalResponse]]


def _no_intro(context: AgentContext) -> list[str]:
    return []


@dataclass(frozen=True)
class Agent:
    """What a session runs: the tools the model may call, the system prompt, texts to put
    before the user's first message, a turn budget (None: the user's chat.maxTurns) and a
    time limit for a run on its own (`run_agent`; None: none)."""

    tools: Callable[[AgentContext], ToolSet]
    system_text: Callable[[AgentContext], str]
    intro_texts: Callable[[AgentContext], list[str]] = _no_intro
    max_turns: int | None = None
    time_limit: float | None = None


@dataclass(frozen=True)
class AgentRun:
    """How a run on its own ended: the status of its turn, the text it answered with, and
    whether it ran out of time."""

    status: str
    text: str
    timed_out: bool = False


@dataclass
class ToolRuntime:
    """What a running tool may ask of the session: the user (through the approval channel)
    and another agent, run to its end on this session's context, events and approvals."""

    session_id: str
    call_id: str
    approve: Approve
    delegate: Callable[[Agent, str], Awaitable[AgentRun]]
    # Set when the turn is cancelled: a search still running in its thread ends at once.
    stop: threading.Event = field(default_factory=threading.Event)
