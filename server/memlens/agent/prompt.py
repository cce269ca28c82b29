"""The system prompt and the first user message, assembled as Gemini CLI assembles them.

The core prompt is Memory Lens's own; around it the memory is rendered exactly as Gemini CLI
v0.43.0 renders it (`renderUserMemory` in the system instruction; in jit mode the extension and
project memory go into the first user message, `getSessionMemory`).
"""

from __future__ import annotations

from memlens.agents.gemini.render import render_prompt_memory
from memlens.agents.gemini.skills import Skill, render_available_skills

CONFLICT_RESOLUTION = (
    "\n- **Conflict Resolution:** Instructions are provided in hierarchical context tags: "
    "`<global_context>`, `<extension_context>`, and `<project_context>`. In case of "
    "contradictory instructions, follow this priority: `<project_context>` (highest) > "
    "`<extension_context>` > `<global_context>` (lowest).")


def core_prompt(workspace_dirs: list[str], file_names: list[str], hierarchical: bool,
                has_skills: bool) -> str:
    names = ", ".join(f"`{n}`" for n in file_names)
    folders = "\n".join(f"- {d}" for d in workspace_dirs)
    conflict = CONFLICT_RESOLUTION if hierarchical else ""
    skills = ("\n- **Skills:** When a task matches one of the available skills, call "
              "`activate_skill` with its name first and follow the instructions it returns."
              if has_skills else "")
    return f"""You are Memory Lens Chat, a coding assistant inside the user's editor. You help with
software engineering tasks in the user's workspace, using the tools below and the project's
memory files.

# Core Mandates
- **Project memory first:** Instructions found in {names} files are the project's standing
  rules. They take precedence over your general habits and over this prompt's defaults.{conflict}
- **Look before you change:** Read the relevant files (`read_file`, `list_directory`, `glob`,
  `search_file_content`) before proposing or making an edit. Never assume a file's content.
- **Approval:** Every change (`write_file`, `replace`, `save_memory`) is shown to the user, who
  may approve or deny it. If a change is denied, do not retry it unchanged: say what you would
  have done and continue with what you can do.
- **Workspace only:** Tools work only inside these workspace folders (use absolute paths):
{folders}
- **Be concise:** Answer in GitHub-flavoured markdown; show code rather than describing it.{skills}

# Memory
- Use `save_memory` only for durable facts or preferences the user states or confirms (how
  they like to work, conventions that hold across tasks), one short self-contained sentence at
  a time. Use `scope: "project"` for facts specific to this project (saved privately, not in
  the repository), the default global scope for preferences that apply everywhere.
- Do not save what is already in the loaded context, and never save secrets."""


def system_instruction(*, mode: str, global_memory: str, user_project_memory: str,
                       extension_memory: str, project_memory: str, file_names: list[str],
                       workspace_dirs: list[str], skills: list[Skill]) -> str:
    system_memory, _ = render_prompt_memory(mode, global_memory, user_project_memory,
                                            extension_memory, project_memory, file_names)
    hierarchical = system_memory.startswith("\n---\n")
    base = core_prompt(workspace_dirs, file_names, hierarchical, bool(skills))
    skills_block = render_available_skills(skills)
    if skills_block:
        base += "\n\n" + skills_block
    return f"\n{base.strip()}\n\n{system_memory}\n".strip()


def session_memory(*, mode: str, extension_memory: str, project_memory: str,
                   file_names: list[str]) -> str:
    """Jit mode's memory for the first user message ('' in classic mode)."""
    _, session = render_prompt_memory(mode, "", "", extension_memory, project_memory,
                                      file_names)
    return session
