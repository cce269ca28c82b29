"""Skills over LSP: memlens/skills, memlens/inbox (+ accept / reject), memlens/skills/extract.

Each works in one workspace folder: the one holding the `uri` the request names; without one,
the only folder of a single-root window (a multi-root window's request must name it).
Hover on a SKILL.md's name lives in hover.py.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any

from memlens.agents.gemini import inbox as inbox_ops
from memlens.agents.gemini.skills import all_skill_files, discover_skills, load_skill_file
from memlens.lsp.agent_bridge import agent_context
from memlens.lsp.agents_shown import gemini_shown
from memlens.lsp.errors import RequestFailed, parse_params, plain
from memlens.protocol.skills import (
    AgentSkillsParams,
    AgentSkillsResults,
    ExtractResult,
    InboxActionResult,
    InboxEntry,
    InboxResult,
    NameParams,
    SkillItem,
    SkillsResult,
)

if TYPE_CHECKING:
    from memlens.lsp.state import MemlensServer

SKILLS, INBOX = "memlens/skills", "memlens/inbox"
AGENT_SKILLS = "memlens/agentSkills"
ACCEPT, REJECT, EXTRACT = "memlens/inbox/accept", "memlens/inbox/reject", "memlens/skills/extract"


def _uri(params: Any) -> str | None:
    """The optional `uri` of a request whose other params are ignored."""
    data = plain(params)
    uri = data.get("uri") if isinstance(data, dict) else None
    return uri if isinstance(uri, str) else None


def _workspace(ls: MemlensServer, uri: str | None, method: str) -> tuple[str, str, bool]:
    """(HOME, folder, trusted) of the folder the request is about."""
    folder = ls.folder_for_uri(uri, method)
    if folder is None:
        raise RequestFailed("open a workspace folder first")
    home = ls.service.index_of_folder(folder).settings.home
    return home, folder, ls.service.trusted(folder)


def register(server: MemlensServer) -> None:
    @server.feature(SKILLS)
    def skills(ls: MemlensServer, params: Any) -> dict[str, object]:
        home, folder, trusted = _workspace(ls, _uri(params), SKILLS)
        index = ls.service.index_of_folder(folder)
        winners = {s.location for s, _ in discover_skills(home, folder, trusted)}
        items = []
        for path, tier in all_skill_files(home, folder, trusted):
            skill = load_skill_file(path)
            problems = [d for d in index.skill_problems.get("gemini", []) if d.path == path]
            items.append(SkillItem(
                name=skill.name if skill else posixpath.basename(posixpath.dirname(path)),
                description=skill.description if skill else "", location=path, tier=tier,
                offered=path in winners, errors=sum(d.severity == "error" for d in problems),
                warnings=sum(d.severity == "warning" for d in problems)))
        return SkillsResult(skills=items, shown=gemini_shown(ls, folder)).wire()

    @server.feature(AGENT_SKILLS)
    def agent_skills(ls: MemlensServer, params: Any) -> dict[str, object]:
        """The skills each agent in use lists for the folder (Claude Code's when it has skills
        folders here, Codex's when it is in use; Gemini CLI's are memlens/skills), or the
        agents the request names; Claude Code's found on a read below the folder too, as the
        agent matrix has them, unless the folder is refused as too broad."""
        from memlens.workspace.queries import broad_folder
        from memlens.workspace.skills import SKILL_AGENTS, agent_skills, agents_with_skills

        request = parse_params(AgentSkillsParams, params)
        home, folder, trusted = _workspace(ls, request.uri, AGENT_SKILLS)
        settings = ls.service.index_of_folder(folder).settings
        wanted = ([a for a in request.agents if a in SKILL_AGENTS] if request.agents is not None
                  else agents_with_skills(settings, folder))
        below = broad_folder(folder, settings) is None
        # The skills folders below come from the index's walks while no file appeared or
        # vanished: a refresh of the view does not walk the tree again.
        with ls.service.index_of_folder(folder).walks_reused():
            return AgentSkillsResults(agents=[
                agent_skills(a, home, folder, trusted=trusted,
                             version=settings.agent_version(a), below=below)
                for a in wanted]).compact()

    @server.feature(INBOX)
    def inbox(ls: MemlensServer, params: Any) -> dict[str, object]:
        home, folder, _ = _workspace(ls, _uri(params), INBOX)
        # Compact: a problem without a detail has no `detail` key.
        return InboxResult(skills=[InboxEntry(name=i.name, path=i.path,
                                              description=i.description, problems=i.problems)
                                   for i in inbox_ops.list_inbox(home, folder)]).compact()

    @server.feature(ACCEPT)
    def accept(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(NameParams, params)
        home, folder, _ = _workspace(ls, request.uri, ACCEPT)
        try:
            target = inbox_ops.accept(home, folder, request.name)
        except inbox_ops.InboxError as err:
            return InboxActionResult(ok=False, message=str(err)).compact()
        ls.publish(ls.service.file_changed(target))
        return InboxActionResult(ok=True, message=f"Accepted {request.name}",
                                 path=target).compact()

    @server.feature(REJECT)
    def reject(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(NameParams, params)
        home, folder, _ = _workspace(ls, request.uri, REJECT)
        try:
            inbox_ops.reject(home, folder, request.name)
        except inbox_ops.InboxError as err:
            return InboxActionResult(ok=False, message=str(err)).compact()
        return InboxActionResult(ok=True, message=f"Rejected {request.name}").compact()

    @server.feature(EXTRACT)
    async def extract(ls: MemlensServer, params: Any) -> dict[str, object]:
        from memlens.agent.extraction import ExtractionBusy, extract_skills
        from memlens.agent.gemini import NoApiKey, make_client
        from memlens.agent.records import chats_dir

        home, folder, _ = _workspace(ls, _uri(params), EXTRACT)
        context = agent_context(ls, folder)
        context.transcripts = None
        try:
            make_client(context.api_key, context.chat)
        except NoApiKey:
            # "no-key": the editor offers its Set Gemini API Key action with the message.
            return ExtractResult(status="no-key", created=[],
                                 message="Extracting skills needs a Gemini API key (or "
                                         "GEMINI_API_KEY in the environment).").compact()
        inbox_path = inbox_ops.inbox_dir(home, folder, claim=True)
        if inbox_path is None:
            raise RequestFailed("this workspace has no skills inbox folder")
        try:
            result = await extract_skills(context, chats_dir(home, folder), inbox_path)
        except ExtractionBusy as err:
            raise RequestFailed(str(err)) from err
        return ExtractResult.model_validate(result).compact()
