"""activate_skill: returns an available skill's instructions to the model."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from memlens.agent.tools.base import (
    STRING,
    BlockingTool,
    PlannedCall,
    ToolArgs,
    ToolOutcome,
    ToolRefused,
)
from memlens.agents.gemini.skills import Skill, render_activated_skill


class ActivateSkillArgs(ToolArgs):
    name: str


class ActivateSkill(BlockingTool):
    name = "activate_skill"
    description = "Activates an available skill and returns its instructions."
    properties: ClassVar[dict[str, Any]] = {
        "name": {**STRING, "description": "The skill's name."}}
    arguments = ActivateSkillArgs

    def __init__(self, skills: list[Skill]):
        self.skills = {s.name: s for s in skills}

    def execute(self, call: PlannedCall, stop: threading.Event) -> ToolOutcome:
        params = call.params
        assert isinstance(params, ActivateSkillArgs)
        skill = self.skills.get(params.name)
        if skill is None:
            available = ", ".join(sorted(self.skills)) or "none"
            raise ToolRefused(f'Skill "{params.name}" not found. Available skills are: '
                              f"{available}")
        return ToolOutcome(True, render_activated_skill(skill), f"activated {skill.name}")
