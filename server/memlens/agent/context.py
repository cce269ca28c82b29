"""What every agent session of one workspace shares (settings, memory, skills, the key), and
the one place that assembles it for the CLI, the language server and the background agents."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from memlens.agent.config import ChatSettings
from memlens.agent.records import Redactor, chats_dir
from memlens.agents.gemini.discovery import MemoryLoad
from memlens.agents.gemini.jit import JitSession
from memlens.agents.gemini.render import concatenate_instructions
from memlens.agents.gemini.skills import Skill, discover_skills
from memlens.files.nodecompat import is_subpath, resolve
from memlens.files.pathpolicy import PathPolicy
from memlens.files.roots import ProjectRootFinder
from memlens.model import MemorySettings
from memlens.protocol.memory import HierarchicalMemory


@dataclass
class AgentContext:
    """What every session of one workspace shares: settings, memory, skills, the key."""

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


def assemble_context(settings: MemorySettings, chat: ChatSettings, startup: MemoryLoad,
                     folder: str, *, for_chat: bool, jit: JitSession | None = None,
                     api_key: str | None = None) -> AgentContext:
    """The context for agents working in `folder` (whose memory `startup` loaded). A chat
    (`for_chat`) also offers the folder's skills and records its sessions as transcripts; a
    one-off run (the memory manager from the CLI, skill extraction) does neither."""
    skills: list[Skill] = []
    transcripts: str | None = None
    if for_chat:
        skills = [s for s, _ in discover_skills(settings.home, folder, startup.trusted)]
        try:
            transcripts = chats_dir(settings.home, folder)
        except OSError:
            transcripts = None
    return AgentContext(settings=settings, chat=chat, startup=startup, jit=jit, skills=skills,
                        transcripts=transcripts, api_key=api_key)
