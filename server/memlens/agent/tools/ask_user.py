"""ask_user: a question for the user, through the session's approval channel (the memory
manager asks whether a memory is a personal habit or a project convention)."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any, ClassVar

from memlens.agent.tools.base import STRING, PlannedCall, Tool, ToolArgs, ToolOutcome, ToolRefused
from memlens.protocol.chat import ApprovalRequest, ApprovalResponse

if TYPE_CHECKING:
    from memlens.agent.tools.base import ToolRuntime


class AskUserArgs(ToolArgs):
    question: str
    options: list[str] | None = None


class AskUser(Tool):
    name = "ask_user"
    description = ("Asks the user a question and returns the answer (use it when it is unclear "
                   "whether a memory is a personal habit or a project convention).")
    properties: ClassVar[dict[str, Any]] = {
        "question": STRING,
        "options": {"type": "ARRAY", "items": STRING, "description": "Suggested answers."}}
    arguments = AskUserArgs

    def parse(self, args: dict[str, Any]) -> ToolArgs:
        """Lenient, as a question should be: any value is taken as its text."""
        question = str(args.get("question") or "").strip()
        if not question:
            raise ToolRefused("Parameter 'question' must be a non-empty string.")
        return AskUserArgs(question=question,
                           options=[str(o) for o in args.get("options") or []])

    async def run(self, call: PlannedCall, runtime: ToolRuntime) -> ToolOutcome:
        params = call.params
        assert isinstance(params, AskUserArgs)
        request = ApprovalRequest(session_id=runtime.session_id, call_id=runtime.call_id,
                                  tool=self.name, title=params.question,
                                  args={"question": params.question,
                                        "options": params.options or []})
        try:
            answer = await runtime.approve(request)
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
