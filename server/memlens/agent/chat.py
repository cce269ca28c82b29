"""The chat: the agent the user talks to, in the editor's panel or with `memlens chat`.

Its tools work in the workspace folders; its system prompt carries the memory Gemini CLI
sends (less any memory file whose real path leaves the allowed roots) and the skills on
offer. With the memory manager on, save_memory hands the fact to the memory manager.
"""

from __future__ import annotations

from memlens.agent.context import AgentContext
from memlens.agent.memory_manager import RoutedSaveMemory
from memlens.agent.prompt import session_memory, system_instruction
from memlens.agent.session import AgentSession
from memlens.agent.tools.base import Agent, ToolSet
from memlens.agent.tools.files import ListDirectory, ReadFile, Replace, WriteFile
from memlens.agent.tools.memory import SaveMemory
from memlens.agent.tools.search import Glob, SearchFileContent
from memlens.agent.tools.skills import ActivateSkill
from memlens.agent.tools.workspace import Workspace


def chat_tools(context: AgentContext) -> ToolSet:
    workspace = Workspace(context.settings, context.workspace_dirs, context.jit,
                          memory_policy=context.memory_policy())
    save = RoutedSaveMemory() if context.settings.memory_manager else SaveMemory(workspace)
    return ToolSet([ReadFile(workspace), ListDirectory(workspace), Glob(workspace),
                    SearchFileContent(workspace), WriteFile(workspace), Replace(workspace),
                    save, ActivateSkill(context.chat_skills())])


def chat_system_text(context: AgentContext) -> str:
    m = context.chat_memory()
    return system_instruction(
        mode=context.startup.mode, global_memory=m.global_,
        user_project_memory=m.user_project_memory, extension_memory=m.extension,
        project_memory=m.project, file_names=context.settings.context_file_names,
        workspace_dirs=context.workspace_dirs, skills=context.chat_skills())


def chat_intro(context: AgentContext) -> list[str]:
    """Jit mode's project and extension memory, before the user's first message."""
    m = context.chat_memory()
    return [session_memory(mode=context.startup.mode, extension_memory=m.extension,
                           project_memory=m.project,
                           file_names=context.settings.context_file_names)]


CHAT = Agent(tools=chat_tools, system_text=chat_system_text, intro_texts=chat_intro)


class ChatSession(AgentSession):
    """A conversation with the chat agent (its turn budget is the user's chat.maxTurns)."""

    def __init__(self, context: AgentContext, session_id: str | None = None):
        super().__init__(context, CHAT, session_id)
