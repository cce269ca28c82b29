"""The tools an agent may offer the model, one class each (see base.py for what a tool is).

read_file, list_directory, glob and search_file_content read; write_file, replace and
save_memory write, each after the user's approval; activate_skill returns a skill's
instructions; ask_user asks the user a question. Each agent builds its own `ToolSet` from
these (the chat in chat.py, the memory manager, skill extraction)."""

from __future__ import annotations

from typing import Any

from memlens.agent.tools.ask_user import AskUser
from memlens.agent.tools.base import Tool, ToolArgs
from memlens.agent.tools.files import ListDirectory, ReadFile, Replace, WriteFile
from memlens.agent.tools.memory import SaveMemory
from memlens.agent.tools.search import Glob, SearchFileContent
from memlens.agent.tools.skills import ActivateSkill

REGISTRY: tuple[type[Tool], ...] = (ReadFile, ListDirectory, Glob, SearchFileContent, WriteFile,
                                    Replace, SaveMemory, ActivateSkill, AskUser)
ARGUMENTS: dict[str, type[ToolArgs]] = {tool.name: tool.arguments for tool in REGISTRY}


def declarations() -> list[dict[str, Any]]:
    """Every tool's function declaration (JSON schema), in Gemini's FunctionDeclaration shape."""
    return [tool.declaration() for tool in REGISTRY]
