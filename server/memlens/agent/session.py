"""The chat loop: a turn streams the model's answer, runs the tools it calls (asking the user
to approve writes), feeds the results back, and repeats until the model answers in text.

History is curated as Gemini CLI curates it: a model turn with no valid content is dropped
together with the user turn before it, so one bad response never poisons the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import posixpath
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..discovery import MemoryLoad
from ..imports import ProjectRootFinder
from ..jit import JitSession
from ..model import MemorySettings
from ..nodecompat import is_subpath, resolve
from ..pathpolicy import PathPolicy
from ..protocol.chat import (
    ApprovalRequest,
    ApprovalResponse,
    ChatEvent,
    DoneEvent,
    ErrorEvent,
    MemoryFile,
    MemoryLoadedEvent,
    TextEvent,
    ThoughtEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from ..protocol.memory import HierarchicalMemory
from ..render import concatenate_instructions
from ..skills import Skill
from .config import ChatSettings
from .gemini import NoApiKey, describe, make_client, stream_with_retries
from .prompt import session_memory, system_instruction
from .records import Redactor, Transcript, redacting_emit
from .tools import PlannedCall, SaveMemoryArgs, ToolOutcome, ToolRefused, Tools, validate_args
from .tools import function_response as response_of

Emit = Callable[[ChatEvent], Awaitable[None]]
Approve = Callable[[ApprovalRequest], Awaitable[ApprovalResponse]]


@dataclass
class AgentContext:
    """What every session of one workspace shares: settings, memory, tools, the key."""

    settings: MemorySettings
    chat: ChatSettings
    startup: MemoryLoad
    jit: JitSession | None
    skills: list[Skill]
    transcripts: str | None  # folder for JSONL transcripts (None: not recorded)
    api_key: str | None = None
    redactor: Redactor = field(default_factory=Redactor)

    def __post_init__(self) -> None:
        self.redactor.add(self.api_key)

    def set_api_key(self, key: str | None) -> None:
        self.api_key = key or None
        self.redactor.add(key)

    @property
    def workspace_dirs(self) -> list[str]:
        return self.startup.workspace_dirs or [self.startup.cwd]

    def memory_roots(self) -> list[str]:
        """Where memory the chat sends may really live: the workspace folders (include
        directories among them), their project roots, and HOME's .gemini folder (global,
        extension and private project memory). A project root that holds HOME is left out:
        a dotfiles repository in HOME must not make all of HOME an allowed root."""
        home = resolve(self.settings.home)
        finder = ProjectRootFinder(self.settings.memory_boundary_markers)
        roots = list(self.workspace_dirs)
        for folder in self.workspace_dirs:
            project_root = finder.find(resolve(folder))
            if project_root is not None and not is_subpath(project_root, home):
                roots.append(project_root)
        roots.append(posixpath.join(home, ".gemini"))
        return roots

    def memory_policy(self) -> PathPolicy:
        return PathPolicy(self.memory_roots())

    def chat_memory(self) -> HierarchicalMemory:
        """The startup memory the chat sends: Gemini CLI's, less any memory file whose real
        path leaves the allowed roots (a GEMINI.md that is a symbolic link out of the
        workspace). The preview (`memlens show`) still shows what Gemini CLI sends."""
        policy = self.memory_policy()
        files = [f for f in self.startup.files if f.content is not None]
        kept = [f for f in files if policy.readable(f.path)]
        if len(kept) == len(files):
            return self.startup.memory

        def text(tier: str) -> str:
            return concatenate_instructions((f.path, f.content) for f in kept if f.tier == tier)

        return HierarchicalMemory.model_validate({
            "global": text("global"), "extension": text("extension"),
            "project": text("project"), "userProjectMemory": text("userProjectMemory")})

    def chat_skills(self) -> list[Skill]:
        """The skills the chat offers: those whose SKILL.md really lives in an allowed root
        (the memory roots, and HOME's .agents folder for the user's own skills)."""
        home = resolve(self.settings.home)
        policy = PathPolicy([*self.memory_roots(), posixpath.join(home, ".agents")])
        return [s for s in self.skills if policy.readable(s.location)]

    def tools(self) -> Tools:
        return Tools(self.settings, self.workspace_dirs, self.jit, self.chat_skills(),
                     memory_policy=self.memory_policy())

    def system_instruction(self) -> str:
        m = self.chat_memory()
        return system_instruction(
            mode=self.startup.mode, global_memory=m.global_,
            user_project_memory=m.user_project_memory, extension_memory=m.extension,
            project_memory=m.project, file_names=self.settings.context_file_names,
            workspace_dirs=self.workspace_dirs, skills=self.chat_skills())

    def session_memory(self) -> str:
        m = self.chat_memory()
        return session_memory(mode=self.startup.mode, extension_memory=m.extension,
                              project_memory=m.project,
                              file_names=self.settings.context_file_names)


def _valid_parts(parts: list[dict[str, Any]]) -> bool:
    return any(p.get("text") or p.get("function_call") for p in parts)


class ChatSession:
    def __init__(self, context: AgentContext, session_id: str | None = None):
        self.context = context
        self.id = session_id or uuid.uuid4().hex
        self.history: list[dict[str, Any]] = []
        self.always: set[str] = set()
        self.running: asyncio.Task[str] | None = None
        self.transcript = (Transcript(context.transcripts, self.id, context.redactor)
                           if context.transcripts else None)
        self.title = ""
        self.messages: list[dict[str, str]] = []

    def _record(self, kind: str, data: dict[str, Any]) -> None:
        if self.transcript is not None:
            with contextlib.suppress(OSError):  # a full disk must not break the chat
                self.transcript.append(kind, data)

    async def send(self, text: str, emit: Emit, approve: Approve) -> str:
        """Run one turn; returns 'done', 'cancelled' or 'error'. Never raises."""
        emit = redacting_emit(emit, self.context.redactor)  # no key in any event, ever
        task: asyncio.Task[str] = asyncio.ensure_future(self._turn(text, emit, approve))
        self.running = task
        try:
            return await task
        except asyncio.CancelledError:
            await emit(DoneEvent(session_id=self.id, reason="cancelled"))
            self._record("done", {"reason": "cancelled"})
            return "cancelled"
        finally:
            self.running = None

    def cancel(self) -> bool:
        if self.running is not None and not self.running.done():
            self.running.cancel()
            return True
        return False

    async def _turn(self, text: str, emit: Emit, approve: Approve) -> str:
        from google.genai import types

        sid = self.id
        self._record("user", {"text": text})
        self.messages.append({"role": "user", "text": text})
        if not self.title:
            self.title = " ".join(text.split())[:80]
        try:
            client = make_client(self.context.api_key, self.context.chat)
        except NoApiKey as err:
            await emit(ErrorEvent(session_id=sid, message=str(err), retryable=False))
            await emit(DoneEvent(session_id=sid, reason="error"))
            return "error"
        tools: Tools = await _off_loop(self.make_tools)  # reads ignore files: off the loop
        config = types.GenerateContentConfig(
            system_instruction=self.system_text(),
            tools=[types.Tool(function_declarations=tools.declarations())],  # type: ignore[arg-type]
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
        first_parts: list[dict[str, Any]] = []
        if not self.history:
            first_parts = [{"text": t} for t in self.intro_texts() if t]
        pending: list[dict[str, Any]] = [{"role": "user",
                                          "parts": [*first_parts, {"text": text}]}]
        answer: list[str] = []  # text of each model round, joined by a blank line

        async def on_retry(error: BaseException, attempt: int, delay: float) -> None:
            await emit(ErrorEvent(session_id=sid, retryable=True,
                                  message=f"{describe(error)} — retrying in {delay:.1f} s "
                                         f"(attempt {attempt + 1})"))

        for _round in range(self.max_turns()):
            contents = [*self.history, *pending]
            model_parts: list[dict[str, Any]] = []
            calls: list[Any] = []
            round_text: list[str] = []
            try:
                async for chunk in stream_with_retries(client, self.context.chat, contents,
                                                       config, on_retry):
                    for part in _parts(chunk):
                        if part.thought and part.text:
                            await emit(ThoughtEvent(session_id=sid, text=part.text))
                            continue
                        if part.text:
                            round_text.append(part.text)
                            await emit(TextEvent(session_id=sid, text=part.text))
                        if part.function_call is not None:
                            calls.append(part.function_call)
                        model_parts.append(part.model_dump(exclude_none=True, mode="json"))
            except asyncio.CancelledError:
                raise
            except Exception as error:
                message = self.context.redactor.text(describe(error))
                self._record("error", {"message": message})
                await emit(ErrorEvent(session_id=sid, message=message, retryable=False))
                await emit(DoneEvent(session_id=sid, reason="error"))
                return "error"
            model_parts = [p for p in model_parts if not p.get("thought")]
            if not _valid_parts(model_parts):
                # Gemini CLI drops an empty/invalid model turn with the user turn before it.
                message = "The model returned no usable answer (empty or malformed response)."
                self._record("error", {"message": message})
                await emit(ErrorEvent(session_id=sid, message=message, retryable=True))
                await emit(DoneEvent(session_id=sid, reason="error"))
                return "error"
            if round_text:
                answer.append("".join(round_text))
            pending.append({"role": "model", "parts": _merge_text(model_parts)})
            if not calls:
                break
            responses = []
            for call in calls:
                responses.append(await self._run_call(call, tools, emit, approve))
            pending.append({"role": "user", "parts": responses})
        else:
            await emit(DoneEvent(session_id=sid, reason="maxTurns"))
            self.history.extend(pending)
            return "done"
        self.history.extend(pending)
        full = "\n\n".join(answer)
        self._record("model", {"text": full})
        self.messages.append({"role": "model", "text": full})
        if self.transcript is not None:
            with contextlib.suppress(OSError):
                self.transcript.update_index(self.title, self.title, len(self.messages))
        await emit(DoneEvent(session_id=sid, reason="stop"))
        return "done"

    async def _run_call(self, call: Any, tools: Tools, emit: Emit,
                        approve: Approve) -> dict[str, Any]:
        sid = self.id
        name = call.name or ""
        args = dict(call.args) if isinstance(call.args, dict) else {}
        call_id = call.id or uuid.uuid4().hex[:12]
        needs = name in tools.write_tools
        await emit(ToolCallEvent(session_id=sid, call_id=call_id, tool=name,
                                 args=args, needs_approval=needs))
        self._record("toolCall", {"callId": call_id, "tool": name, "args": args})
        outcome: ToolOutcome | None = None
        error: str | None = None
        try:
            if not name:
                raise ToolRefused("Malformed function call: it has no name.")
            if name == "ask_user" and "ask_user" in tools.names():
                outcome = await self._ask_user(call.args, call_id, approve)
            elif name == "save_memory" and self.context.settings.memory_manager:
                outcome = await self._managed_save(call.args, emit, approve)
            else:
                # Planning reads files (the diff's base) and running may search the whole
                # workspace: both run in a worker thread, so the event loop (the language
                # server's every request, cancel included) keeps answering.
                planned = await _off_loop(tools.plan, name,
                                          call.args if call.args is not None else {})
                if needs:
                    planned = await self._approval(planned, call_id, tools, approve)
                stop = threading.Event()
                try:
                    outcome = await _off_loop(tools.run, planned, stop)
                except asyncio.CancelledError:
                    stop.set()  # a search still running in its thread ends at once
                    raise
        except ToolRefused as refused:
            error = str(refused)
        except OSError as err:
            error = f"{name} failed: {err.strerror or err}"
        except Exception as err:  # a bug in a tool must not end the turn
            error = f"{name} failed: {type(err).__name__}: {err}"
        ok = error is None and outcome is not None and outcome.ok
        output = (outcome.output if outcome is not None else error) or ""
        summary = (outcome.summary if outcome is not None else error) or ""
        await emit(ToolResultEvent(session_id=sid, call_id=call_id, tool=name, ok=ok,
                                   summary=summary.splitlines()[0][:200] if summary else "",
                                   output=output[:4000]))
        self._record("toolResult", {"callId": call_id, "tool": name, "ok": ok,
                                    "output": output[:4000]})
        if outcome is not None and outcome.jit_files:
            files: list[MemoryFile] = [{"path": f.path, "chars": len(f.content or "")}
                                       for f in outcome.jit_files]
            await emit(MemoryLoadedEvent(session_id=sid, files=files))
            self._record("memoryLoaded", {"files": files})
        part: dict[str, Any] = {"function_response": {
            "name": name or "unknown", "response": response_of(outcome, error)}}
        if call.id:
            part["function_response"]["id"] = call.id
        return part

    # --- what a specialised agent (the memory manager) overrides -------------------------
    def make_tools(self) -> Tools:
        return self.context.tools()

    def system_text(self) -> str:
        return self.context.system_instruction()

    def intro_texts(self) -> list[str]:
        return [self.context.session_memory()]

    def max_turns(self) -> int:
        return self.context.chat.max_turns

    async def _managed_save(self, args: Any, emit: Emit, approve: Approve) -> ToolOutcome:
        """save_memory with the memory manager on: the manager agent routes the fact."""
        from .memory_manager import manage_memory

        params = validate_args("save_memory", args if args is not None else {})
        assert isinstance(params, SaveMemoryArgs)
        fact = params.fact.strip()
        if not fact:
            raise ToolRefused('Parameter "fact" must be a non-empty string.')
        status, sentence = await manage_memory(self.context, fact, params.scope, emit, approve)
        ok = status == "done"
        message = sentence or ("Saved." if ok else "The memory manager could not save it.")
        return ToolOutcome(ok, json.dumps({"success": ok, "message": message}), message,
                           structured=True)

    async def _ask_user(self, args: Any, call_id: str, approve: Approve) -> ToolOutcome:
        """`ask_user`: a question for the user, through the approval channel."""
        question = str((args or {}).get("question") or "").strip()
        if not question:
            raise ToolRefused("Parameter 'question' must be a non-empty string.")
        options = [str(o) for o in (args or {}).get("options") or []]
        request = ApprovalRequest(session_id=self.id, call_id=call_id, tool="ask_user",
                                  args={"question": question, "options": options},
                                  title=question)
        try:
            answer = await approve(request)
        except asyncio.CancelledError:
            raise
        except Exception:
            answer = ApprovalResponse(outcome="deny")
        reply = (answer.answer or "").strip()
        if answer.outcome == "deny" or not reply:
            return ToolOutcome(True, json.dumps({"answer": None, "note": "The user did not "
                                                 "answer; decide conservatively or stop."}),
                               "no answer", structured=True)
        return ToolOutcome(True, json.dumps({"answer": reply}), f"user answered: {reply}",
                           structured=True)

    async def _approval(self, planned: PlannedCall, call_id: str, tools: Tools,
                        approve: Approve) -> PlannedCall:
        mode = self.context.chat.approval_mode
        if mode == "deny":
            raise ToolRefused(f"The user's approval mode refuses every change; {planned.tool} "
                              "was not run.")
        if planned.tool in self.always or (mode == "autoEdit"
                                           and planned.tool in ("write_file", "replace")):
            return planned
        request = ApprovalRequest(session_id=self.id, call_id=call_id, tool=planned.tool,
                                  args=planned.args, title=planned.title, diff=planned.diff)
        try:
            answer = await approve(request)
        except asyncio.CancelledError:
            raise
        except Exception:
            answer = ApprovalResponse(outcome="deny")
        if answer.outcome == "deny":
            raise ToolRefused(f"The user denied this {planned.tool} call. Do not retry it "
                              "unchanged; explain what you wanted to do instead.")
        if answer.outcome == "approveAlways":
            self.always.add(planned.tool)
        if answer.modified_args:
            planned = await _off_loop(tools.plan, planned.tool,
                                      {**planned.args, **answer.modified_args})
        return planned


async def _off_loop(function: Callable[..., Any], *args: Any) -> Any:
    """Run blocking tool work in a worker thread; cancelling the turn stops waiting for it."""
    return await asyncio.to_thread(function, *args)


def _parts(chunk: Any) -> list[Any]:
    candidates = getattr(chunk, "candidates", None) or []
    if not candidates or candidates[0].content is None:
        return []
    return list(candidates[0].content.parts or [])


def _merge_text(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive streamed text parts become one (as Gemini CLI records a model turn)."""
    merged: list[dict[str, Any]] = []
    for part in parts:
        if (merged and set(part) == {"text"} and set(merged[-1]) == {"text"}):
            merged[-1] = {"text": merged[-1]["text"] + part["text"]}
        else:
            merged.append(part)
    return merged
