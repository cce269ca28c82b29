"""The agent loop: a turn streams the model's answer, runs the tools it calls (asking the user
to approve writes), feeds the results back, and repeats until the model answers in text.

A session runs one `Agent`: a tool set, a system prompt and a turn budget. The chat
(chat.py), the memory manager and skill extraction are agents on this same machinery; the
session knows no tool and no agent by name.

History is curated as Gemini CLI curates it: a model turn with no valid content is dropped
together with the user turn before it, so one bad response never poisons the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from memlens.agent.context import AgentContext
from memlens.agent.gemini import NoApiKey, describe, make_client, stream_with_retries
from memlens.agent.records import Transcript, redacting_emit
from memlens.agent.tools.base import (
    Agent,
    AgentRun,
    Approve,
    PlannedCall,
    ToolOutcome,
    ToolRefused,
    ToolRuntime,
    ToolSet,
    function_response,
)
from memlens.protocol.chat import (
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

Emit = Callable[[ChatEvent], Awaitable[None]]


def _valid_parts(parts: list[dict[str, Any]]) -> bool:
    return any(p.get("text") or p.get("function_call") for p in parts)


class AgentSession:
    """One conversation with the model, running `agent`'s tools on `context`'s workspace."""

    def __init__(self, context: AgentContext, agent: Agent, session_id: str | None = None):
        self.context = context
        self.agent = agent
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
            await emit(ErrorEvent(session_id=sid, message=str(err),
                                 retryable=False))
            await emit(DoneEvent(session_id=sid, reason="error"))
            return "error"
        # Building a tool set reads ignore files: off the loop.
        tools: ToolSet = await _off_loop(self.agent.tools, self.context)
        config = types.GenerateContentConfig(
            system_instruction=self.agent.system_text(self.context),
            tools=[types.Tool(function_declarations=tools.declarations())],  # type: ignore[arg-type]
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
        first_parts: list[dict[str, Any]] = []
        if not self.history:
            first_parts = [{"text": t} for t in self.agent.intro_texts(self.context) if t]
        pending: list[dict[str, Any]] = [{"role": "user",
                                          "parts": [*first_parts, {"text": text}]}]
        answer: list[str] = []  # text of each model round, joined by a blank line

        async def on_retry(error: BaseException, attempt: int, delay: float) -> None:
            await emit(ErrorEvent(session_id=sid, retryable=True,
                                 message=f"{describe(error)} — retrying in {delay:.1f} s "
                                         f"(attempt {attempt + 1})"))

        for _round in range(self.agent.max_turns or self.context.chat.max_turns):
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
                await emit(ErrorEvent(session_id=sid, message=message,
                                     retryable=False))
                await emit(DoneEvent(session_id=sid, reason="error"))
                return "error"
            model_parts = [p for p in model_parts if not p.get("thought")]
            if not _valid_parts(model_parts):
                # Gemini CLI drops an empty/invalid model turn with the user turn before it.
                message = "The model returned no usable answer (empty or malformed response)."
                self._record("error", {"message": message})
                await emit(ErrorEvent(session_id=sid, message=message,
                                     retryable=True))
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

    async def _run_call(self, call: Any, tools: ToolSet, emit: Emit,
                        approve: Approve) -> dict[str, Any]:
        sid = self.id
        name = call.name or ""
        args = dict(call.args) if isinstance(call.args, dict) else {}
        call_id = call.id or uuid.uuid4().hex[:12]
        needs = tools.needs_approval(name)
        await emit(ToolCallEvent(session_id=sid, call_id=call_id, tool=name,
                             args=args, needs_approval=needs))
        self._record("toolCall", {"callId": call_id, "tool": name, "args": args})
        outcome: ToolOutcome | None = None
        error: str | None = None

        async def delegate(agent: Agent, prompt: str) -> AgentRun:
            return await run_agent(self.context, agent, prompt, emit, approve)

        runtime = ToolRuntime(sid, call_id, approve, delegate)
        try:
            if not name:
                raise ToolRefused("Malformed function call: it has no name.")
            # Planning reads files (the diff's base) and running may search the whole
            # workspace: both run off the event loop, so the loop (the language server's
            # every request, cancel included) keeps answering.
            planned = await _off_loop(tools.plan, name,
                                      call.args if call.args is not None else {})
            tool = tools.get(name)
            if needs and tool is not None and not tool.approves_own_writes:
                planned = await self._approval(planned, call_id, tools, approve)
            try:
                outcome = await tools.run(planned, runtime)
            except asyncio.CancelledError:
                runtime.stop.set()  # a search still running in its thread ends at once
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
        await emit(ToolResultEvent(session_id=sid, call_id=call_id, tool=name,
                             ok=ok, summary=summary.splitlines()[0][:200] if summary else "",
                             output=output[:4000]))
        self._record("toolResult", {"callId": call_id, "tool": name, "ok": ok,
                                    "output": output[:4000]})
        if outcome is not None and outcome.jit_files:
            files: list[MemoryFile] = [{"path": f.path, "chars": len(f.content or "")}
                                       for f in outcome.jit_files]
            await emit(MemoryLoadedEvent(session_id=sid, files=files))
            self._record("memoryLoaded", {"files": files})
        part: dict[str, Any] = {"function_response": {
            "name": name or "unknown", "response": function_response(outcome, error)}}
        if call.id:
            part["function_response"]["id"] = call.id
        return part

    async def _approval(self, planned: PlannedCall, call_id: str, tools: ToolSet,
                        approve: Approve) -> PlannedCall:
        mode = self.context.chat.approval_mode
        tool = tools.get(planned.tool)
        if mode == "deny":
            raise ToolRefused(f"The user's approval mode refuses every change; {planned.tool} "
                              "was not run.")
        if planned.tool in self.always or (mode == "autoEdit" and tool is not None
                                           and tool.file_edit):
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


async def run_agent(context: AgentContext, agent: Agent, prompt: str, emit: Emit,
                    approve: Approve) -> AgentRun:
    """One turn of `agent` on its own (a task, not a conversation), within its time limit."""
    session = AgentSession(context, agent)
    texts: list[str] = []

    async def collect(event: ChatEvent) -> None:
        if event.kind == "text" and event.text:
            texts.append(event.text)
        await emit(event)

    try:
        status = await asyncio.wait_for(session.send(prompt, collect, approve),
                                        agent.time_limit)
    except TimeoutError:
        session.cancel()
        return AgentRun("error", "".join(texts).strip(), timed_out=True)
    return AgentRun(status, "".join(texts).strip())


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
