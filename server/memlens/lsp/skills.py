"""Skills over LSP: memlens/skills, memlens/inbox (+ accept / reject), memlens/skills/extract,
and hover on a SKILL.md's name showing its tier and whether it is the one offered."""

from __future__ import annotations

import posixpath
import re
from typing import Any

from lsprotocol import types

from .. import inbox as inbox_ops
from ..protocol.skills import (
    ExtractResult,
    InboxActionResult,
    InboxEntry,
    InboxResult,
    NameParams,
    SkillItem,
    SkillsResult,
)
from ..skills import all_skill_files, discover_skills, load_skill_file
from .errors import RequestFailed, parse_params
from .server import MemlensServer

SKILLS, INBOX = "memlens/skills", "memlens/inbox"
ACCEPT, REJECT, EXTRACT = "memlens/inbox/accept", "memlens/inbox/reject", "memlens/skills/extract"


def _workspace(ls: MemlensServer) -> tuple[str, str, bool]:
    index = ls.require_index()
    if not index.folders:
        raise RequestFailed("open a workspace folder first")
    folder = index.folders[0]
    state = index.folder_states.get(folder)
    return index.settings.home, folder, bool(state and state.load.trusted)


def register(server: MemlensServer) -> None:
    @server.feature(SKILLS)
    def skills(ls: MemlensServer, params: Any) -> dict[str, object]:
        home, folder, trusted = _workspace(ls)
        index = ls.require_index()
        winners = {s.location for s, _ in discover_skills(home, folder, trusted)}
        items = []
        for path, tier in all_skill_files(home, folder, trusted):
            skill = load_skill_file(path)
            problems = [d for d in index.skill_problems if d.path == path]
            items.append(SkillItem(
                name=skill.name if skill else posixpath.basename(posixpath.dirname(path)),
                description=skill.description if skill else "", location=path, tier=tier,
                offered=path in winners, errors=sum(d.severity == "error" for d in problems),
                warnings=sum(d.severity == "warning" for d in problems)))
        return SkillsResult(skills=items).wire()

    @server.feature(INBOX)
    def inbox(ls: MemlensServer, params: Any) -> dict[str, object]:
        home, folder, _ = _workspace(ls)
        # Compact: a problem without a detail has no `detail` key.
        return InboxResult(skills=[InboxEntry(name=i.name, path=i.path,
                                              description=i.description, problems=i.problems)
                                   for i in inbox_ops.list_inbox(home, folder)]).compact()

    @server.feature(ACCEPT)
    def accept(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(NameParams, params)
        home, folder, _ = _workspace(ls)
        try:
            target = inbox_ops.accept(home, folder, request.name)
        except inbox_ops.InboxError as err:
            return InboxActionResult(ok=False, message=str(err)).compact()
        ls.publish(ls.require_index().file_changed(target))
        return InboxActionResult(ok=True, message=f"Accepted {request.name}",
                                 path=target).compact()

    @server.feature(REJECT)
    def reject(ls: MemlensServer, params: Any) -> dict[str, object]:
        request = parse_params(NameParams, params)
        home, folder, _ = _workspace(ls)
        try:
            inbox_ops.reject(home, folder, request.name)
        except inbox_ops.InboxError as err:
            return InboxActionResult(ok=False, message=str(err)).compact()
        return InboxActionResult(ok=True, message=f"Rejected {request.name}").compact()

    @server.feature(EXTRACT)
    async def extract(ls: MemlensServer, params: Any) -> dict[str, object]:
        from ..agent.extraction import ExtractionBusy, extract_skills
        from ..agent.gemini import NoApiKey, make_client
        from ..agent.records import chats_dir
        from .chat import agent_context

        home, folder, _ = _workspace(ls)
        context = agent_context(ls)
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


def skill_hover(ls: MemlensServer, path: str, text: str, position: types.Position
                ) -> types.Hover | None:
    """On the `name:` line of a SKILL.md: its tier and whether Gemini CLI offers it."""
    if posixpath.basename(path) != "SKILL.md":
        return None
    lines = text.split("\n")
    if position.line >= len(lines) or not re.match(r"^\s*name\s*:", lines[position.line]):
        return None
    home, folder, trusted = _workspace(ls)
    skill = load_skill_file(path)
    if skill is None:
        return None
    tier = next((t for p, t in all_skill_files(home, folder, trusted) if p == path), "not "
                "loaded (outside the skills folders)")
    winners = {s.name: (s, t) for s, t in discover_skills(home, folder, trusted)}
    winner = winners.get(skill.name)
    if winner is not None and winner[0].location == path:
        status = "offered to the agent"
    elif winner is not None:
        status = f"**not offered**: {winner[0].location} ({winner[1]}) wins"
    else:
        status = "not offered"
    value = (f"**Skill `{skill.name}`** — tier: {tier}; {status}\n\n{skill.description}")
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                    value=value))

