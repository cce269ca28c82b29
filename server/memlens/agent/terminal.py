"""`memlens chat PROMPT`: one turn of the same agent in a terminal.

Text streams to stdout; tool activity goes to stderr; `--json` prints the memlens/chat/event
stream as JSON lines. Writes are approved on the terminal (/dev/tty), or by --approval-mode.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from ..discovery import MemoryEngine
from ..jit import JitSession
from ..model import MemorySettings
from ..skills import discover_skills
from .config import ChatSettings
from .events import ApprovalRequest, ApprovalResponse, ChatEvent
from .gemini import NoApiKey, make_client
from .records import chats_dir
from .session import AgentContext, ChatSession

UNTRUSTED_HINT = "trust the folder first: a rule in trustedFolders.json, " \
                 "GEMINI_CLI_TRUST_WORKSPACE=true or --trusted"


def _ask_terminal(request: ApprovalRequest) -> ApprovalResponse:
    try:
        tty = open("/dev/tty", "r+", encoding="utf-8")  # noqa: SIM115
    except OSError:
        print(f"memlens: no terminal to answer {request.tool}; denied "
              "(use --approval-mode autoEdit to allow edits)", file=sys.stderr)
        return ApprovalResponse(outcome="deny")
    if request.tool == "ask_user":
        with tty:
            options = request.args.get("options") or []
            hint = f" ({' / '.join(options)})" if options else ""
            tty.write(f"\n{request.title}{hint}\n> ")
            tty.flush()
            answer = tty.readline().strip()
        return ApprovalResponse(outcome="approve" if answer else "deny", answer=answer or None)
    with tty:
        tty.write(f"\n{request.title}\n")
        if request.diff:
            tty.write(request.diff if request.diff.endswith("\n") else request.diff + "\n")
        tty.write("Apply? [y]es, [a]lways for this tool, [N]o: ")
        tty.flush()
        answer = tty.readline().strip().lower()
    if answer in ("y", "yes"):
        return ApprovalResponse(outcome="approve")
    if answer in ("a", "always"):
        return ApprovalResponse(outcome="approveAlways")
    return ApprovalResponse(outcome="deny")


def run_chat(cwd: str, settings: MemorySettings, prompt: str, *, as_json: bool,
             approval_mode: str | None) -> int:
    chat = ChatSettings.from_sources({})
    try:
        make_client(None, chat)
    except NoApiKey as err:
        print(f"memlens: error: {err}", file=sys.stderr)
        return 2
    if approval_mode:
        chat = chat.model_copy(update={"approval_mode": approval_mode})
    engine = MemoryEngine(settings)
    startup = engine.load(cwd)
    if not startup.trusted:
        print("memlens: chat is off in an untrusted workspace: its tools read the workspace "
              f"({UNTRUSTED_HINT})", file=sys.stderr)
        return 2
    jit = JitSession.after_startup(engine, startup) if settings.jit_context else None
    skills = [s for s, _ in discover_skills(settings.home, cwd, startup.trusted)]
    try:
        transcripts: str | None = chats_dir(settings.home, cwd)
    except OSError:
        transcripts = None
    context = AgentContext(settings=settings, chat=chat, startup=startup, jit=jit,
                           skills=skills, transcripts=transcripts)
    session = ChatSession(context)
    printed_text = False

    async def emit(event: ChatEvent) -> None:
        nonlocal printed_text
        if as_json:
            sys.stdout.write(json.dumps(event.payload(), ensure_ascii=False) + "\n")
            sys.stdout.flush()
            return
        if event.kind == "text" and event.text:
            sys.stdout.write(event.text)
            sys.stdout.flush()
            printed_text = True
        elif event.kind == "toolCall":
            print(f"[{event.tool}] {_args(event.args)}", file=sys.stderr)
        elif event.kind == "toolResult":
            mark = "ok" if event.ok else "refused"
            print(f"[{event.tool}] {mark}: {event.summary}", file=sys.stderr)
        elif event.kind == "memoryLoaded":
            names = ", ".join(str(f.get("path")) for f in event.files or [])
            print(f"[memory loaded] {names}", file=sys.stderr)
        elif event.kind == "error":
            print(f"memlens: {event.message}", file=sys.stderr)

    async def approve(request: ApprovalRequest) -> ApprovalResponse:
        return await asyncio.to_thread(_ask_terminal, request)

    status = asyncio.run(session.send(prompt, emit, approve))
    if printed_text:
        sys.stdout.write("\n")
    return {"done": 0, "cancelled": 130}.get(status, 1)


def _args(args: dict[str, Any] | None) -> str:
    text = json.dumps(args or {}, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


def run_managed_add(cwd: str, settings: MemorySettings, fact: str, scope: str | None) -> int:
    """`memlens add --memory-manager`: the memory manager routes the fact (terminal approvals)."""
    from .memory_manager import manage_memory

    chat = ChatSettings.from_sources({})
    try:
        make_client(None, chat)
    except NoApiKey as err:
        print(f"memlens: error: {err}", file=sys.stderr)
        return 2
    engine = MemoryEngine(settings)
    startup = engine.load(cwd)
    if not startup.trusted:
        # Its tools read and edit the workspace's memory files: project memory (SPEC §12).
        print(f"memlens: the memory manager is off in an untrusted workspace ({UNTRUSTED_HINT})",
              file=sys.stderr)
        return 2
    context = AgentContext(settings=settings, chat=chat, startup=startup, jit=None, skills=[],
                           transcripts=None)

    async def emit(event: ChatEvent) -> None:
        if event.kind == "toolResult":
            print(f"[{event.tool}] {'ok' if event.ok else 'refused'}: {event.summary}",
                  file=sys.stderr)

    async def approve(request: ApprovalRequest) -> ApprovalResponse:
        return await asyncio.to_thread(_ask_terminal, request)

    status, sentence = asyncio.run(manage_memory(context, fact, scope, emit, approve))
    print(sentence or ("Done." if status == "done" else "The memory manager failed."))
    return 0 if status == "done" else 1


def run_extraction(cwd: str, settings: MemorySettings, *, as_json: bool) -> int:
    """`memlens skills extract`: mine the recorded sessions into the inbox."""
    from ..inbox import inbox_dir
    from .extraction import ExtractionBusy, extract_skills

    chat = ChatSettings.from_sources({})
    try:
        make_client(None, chat)
    except NoApiKey as err:
        print(f"memlens: error: {err}", file=sys.stderr)
        return 2
    engine = MemoryEngine(settings)
    startup = engine.load(cwd)
    context = AgentContext(settings=settings, chat=chat, startup=startup, jit=None, skills=[],
                           transcripts=None)
    inbox = inbox_dir(settings.home, cwd, claim=True)
    assert inbox is not None
    try:
        result = asyncio.run(extract_skills(context, chats_dir(settings.home, cwd), inbox))
    except ExtractionBusy as err:
        print(f"memlens: error: {err}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        created = ", ".join(result["created"]) or "no new skill"
        print(f"{result['message'] or 'Done.'}\nInbox: {created} ({inbox})")
    return 0 if result["status"] == "done" else 1
