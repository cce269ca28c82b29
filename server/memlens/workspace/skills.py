"""The skills each agent offers working in a folder, as it lists them (docs/reference.md "Skills"):
one query the CLI (`memlens skills list --agent A`) and the language server (`memlens/agentSkills`,
the Skills view per agent) both ask, answered by each agent's own rules:

* Gemini CLI: `agents/gemini/skills.py` (its tiers, precedence, `<available_skills>`);
* Claude Code: `agents/claude/skills.py` (its listing line per skill, budget);
* Codex: `agents/codex/skills.py` (its `<skills_instructions>` block).

Every SKILL.md an agent looks at is listed, the ones it drops with the reason, and each dropped
one gets a diagnostic at its first line: `skill-not-offered` (it never loads, or is left out),
`skill-duplicate` (another skill of that name wins), `skill-listing-over-budget` (Claude Code
lists it by name only, Codex cuts its description). Claude Code's skills found on a read below
the folder follow its start-up ones, each with when it lists them (`on_read`), offered or not
as the agent matrix has them (workspace/reading.py); they are not in its listing at start, and
their diagnostics have the matrix's words (`_on_read_diagnostics`), one per skill.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from memlens.agents.claude import skills as claude_skills
from memlens.agents.codex import skills as codex_skills
from memlens.agents.gemini import skills as gemini_skills
from memlens.model import MemorySettings
from memlens.protocol.memory import Diagnostic
from memlens.protocol.skills import AgentSkill, AgentSkillsResult
from memlens.workspace.queries import broad_folder

if TYPE_CHECKING:
    from memlens.agents.claude.skills_on_read import SkillOnRead

SKILL_AGENTS = ("gemini", "claude", "codex")
LABELS = {"gemini": "Gemini CLI", "claude": "Claude Code", "codex": "Codex"}
NOT_OFFERED, DUPLICATE, OVER_BUDGET = ("skill-not-offered", "skill-duplicate",
                                       "skill-listing-over-budget")


def _at_top(path: str, severity: str, code: str, message: str) -> Diagnostic:
    return Diagnostic(path=path, line=1, col=1, end_line=1, end_col=4,
                      severity=severity,  # type: ignore[arg-type]
                      code=code, message=message)


def _diagnostics(agent: str, skills: list[AgentSkill]) -> list[Diagnostic]:
    label = LABELS[agent]
    out = []
    for s in skills:
        if s.tier == "system" or (s.reason or "").startswith("agents/openai.yaml"):
            continue  # the agent's own skills; a skill kept out of the listing on purpose
        if s.on_read is not None:
            continue  # found on a read: its one diagnostic is `_on_read_diagnostics`'s
        if not s.offered and s.reason:
            code = DUPLICATE if s.reason.startswith("shadowed") else NOT_OFFERED
            out.append(_at_top(s.location, "warning", code,
                               f"{label} does not offer this skill: {s.reason}"))
        elif s.name_only:
            out.append(_at_top(s.location, "info", OVER_BUDGET,
                               f"{label} lists this skill by name only: its skills listing is "
                               "past its budget, and the description no longer fits"))
        elif s.cut_to is not None:
            out.append(_at_top(s.location, "info", OVER_BUDGET,
                               f"{label} lists only the first {s.cut_to} of the description's "
                               f"{len(s.description)} characters: its skills listing is past "
                               "its budget"))
    return out


def _on_read_skills(found: list[SkillOnRead]) -> list[AgentSkill]:
    """Claude Code's skills found on a read below the working folder, as the agent matrix has
    them: listed (by name only past the budget) or not offered and why."""
    return [AgentSkill(name=s.shown or posixpath.basename(posixpath.dirname(s.path)),
                       description=s.description, location=s.path, tier="project",
                       offered=s.offered, reason=s.reason or None, name_only=s.name_only,
                       on_read=s.trigger) for s in found]


def agent_skills(agent: str, home: str, cwd: str, *, trusted: bool = True,
                 version: str | None = None, below: bool = False) -> AgentSkillsResult:
    """What `agent` lists working in `cwd` (`version`: the release it is for, when the
    listing depends on it); with `below`, Claude Code's skills found on a read below `cwd`
    after its start-up ones (a walk of the folder: the caller leaves them out where the
    folder is refused as too broad, `broad_folder`)."""
    items: list[AgentSkill] = []
    listing = ""
    on_read: list[Diagnostic] = []
    if agent == "claude":
        found = claude_skills.load_skills(home, cwd, version)
        listing = found.listing  # what it sends at start: the skills found on a read are not in it
        items = [AgentSkill(name=s.shown or s.folder, description=s.description,
                            location=s.path, tier=s.tier, offered=s.offered, reason=s.reason,
                            name_only=s.name_only) for s in found.skills]
        if below:
            from memlens.agents.claude.agent import skills_found_below

            found_below = skills_found_below(home, cwd)
            items += _on_read_skills(found_below)
            on_read = _on_read_diagnostics(found_below)
    elif agent == "codex":
        from memlens.agents.codex.load import codex_home

        got = codex_skills.load_skills(home, cwd, codex_home(home), version=version)
        listing = got.listing
        items = [AgentSkill(name=s.name, description=s.description, location=s.path,
                            tier=s.scope, offered=s.offered, reason=s.reason, cut_to=s.shown)
                 for s in got.skills]
    elif agent == "gemini":
        chosen = gemini_skills.discover_skills(home, cwd, trusted)
        winners = {s.location for s, _ in chosen}
        by_name = {s.name: s.location for s, _ in chosen}
        listing = gemini_skills.render_available_skills([s for s, _ in chosen])
        # In its listing's order (a later tier takes an earlier one's place), then the rest.
        items = [AgentSkill(name=s.name, description=s.description, location=s.location,
                            tier=tier, offered=True) for s, tier in chosen]
        for path, tier in gemini_skills.all_skill_files(home, cwd, trusted):
            if path in winners:
                continue
            skill = gemini_skills.load_skill_file(path)
            reason = ("no frontmatter with a name and a description Gemini CLI can read"
                      if skill is None else
                      f"shadowed: {by_name.get(skill.name, 'a built-in skill')} has the same "
                      "name and a later tier wins")
            items.append(AgentSkill(
                name=skill.name if skill else posixpath.basename(posixpath.dirname(path)),
                description=skill.description if skill else "", location=path, tier=tier,
                offered=False, reason=reason))
    else:
        raise ValueError(f"{agent!r} lists no skills Memory Lens knows of "
                         f"({', '.join(SKILL_AGENTS)} do)")
    return AgentSkillsResult(agent=agent, label=LABELS[agent], cwd=cwd, skills=items,
                             listing=listing, diagnostics=_diagnostics(agent, items) + on_read)


def agents_with_skills(settings: MemorySettings, folder: str) -> list[str]:
    """Besides Gemini CLI, the agents whose skills concern `folder`: Claude Code when it has a
    skills folder here, above or in HOME, or is in use; Codex when it is in use."""
    in_use = {p.agent for p in settings.chosen_agents}
    chain = [folder]
    while (parent := posixpath.dirname(chain[-1])) != chain[-1]:
        chain.append(parent)
    claude_here = any(os.path.isdir(posixpath.join(d, ".claude", "skills"))
                      for d in (settings.home, *chain))
    return [a for a, wanted in (("claude", claude_here or "claude" in in_use),
                                ("codex", "codex" in in_use)) if wanted]


def skill_diagnostics(agent: str, settings: MemorySettings, folder: str, *, trusted: bool = True,
                      buffers: dict[str, str] | None = None) -> list[Diagnostic]:
    """One agent's own verdicts on the skills it looks at working in `folder`: Gemini CLI's
    checks of every SKILL.md it looks at and of its inbox (`agents/gemini/inbox.py`; an
    editor's unsaved `buffers` win over the disk), Claude Code's and Codex's on the skills they
    drop or cut; none for an agent without a skills listing. Each is shown only where its
    agent is (workspace/shown.py): the editor keeps them by agent, `memlens check` and the
    matrix add them to that agent's check (workspace/reading.py `agent_check`)."""
    if agent == "gemini":
        from memlens.agents.gemini.inbox import skill_diagnostics as gemini_skill_diagnostics

        return gemini_skill_diagnostics(settings.home, folder, trusted, buffers)
    if agent not in SKILL_AGENTS:
        return []
    return agent_skills(agent, settings.home, folder, trusted=trusted,
                        version=settings.agent_version(agent),
                        below=broad_folder(folder, settings) is None).diagnostics


def _on_read_diagnostics(found: list[SkillOnRead]) -> list[Diagnostic]:
    """Claude Code's verdicts on the skills a read below the working folder finds, in the
    words of the agent matrix's cells (workspace/reading.py): `skill-not-offered` on one it
    leaves out, `skill-listing-over-budget` on one it lists by name only."""
    out = []
    for s in found:
        if not s.offered:
            out.append(_at_top(s.path, "warning", NOT_OFFERED, f"This skill is {s.why}"))
        elif s.name_only:
            out.append(_at_top(s.path, "info", OVER_BUDGET,
                               f"Claude Code lists this skill by name only {s.trigger}: "
                               "the listing of the skills that read finds is past its budget"))
    return out
