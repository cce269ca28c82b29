"""The commands that run an agent in a terminal: `memlens chat PROMPT` (one turn of the same
chat the editor runs), `memlens add --memory-manager` and `memlens skills extract`.

Writes are approved on the terminal (/dev/tty, else standard input when it is a terminal),
or by --approval-mode. No key from the environment ever reaches the terminal.
"""

from __future__ import annotations

import asyncio
import json
import sys

from memlens.agent.chat import ChatSession
from memlens.agent.config import ChatSettings
from memlens.agent.context import assemble_context
from memlens.agent.extraction import ExtractionBusy, extract_skills
from memlens.agent.gemini import NoApiKey, make_client
from memlens.agent.memory_manager import manage_memory
from memlens.agent.records import chats_dir, install_stream_redaction
from memlens.agents.gemini.discovery import MemoryEngine, MemoryLoad
from memlens.agents.gemini.inbox import inbox_dir
from memlens.agents.gemini.jit import JitSession
from memlens.cli.terminal import ChatPrinter, print_tool_results, terminal_approver
from memlens.files.output import json_safe
from memlens.model import MemorySettings

UNTRUSTED_HINT = "trust the folder first: a rule in trustedFolders.json, " \
                 "GEMINI_CLI_TRUST_WORKSPACE=true or --trusted"


def _start(cwd: str, settings: MemorySettings
           ) -> tuple[ChatSettings, MemoryEngine, MemoryLoad] | None:
    """The chat settings, the engine and the workspace's memory; None (the reason printed)
    when there is no key to talk to the model with."""
    install_stream_redaction()  # no key from the environment reaches the terminal
    chat = ChatSettings.from_sources({})
    try:
        make_client(None, chat)
    except NoApiKey as err:
        print(f"memlens: error: {err}", file=sys.stderr)
        return None
    engine = MemoryEngine(settings)
    return chat, engine, engine.load(cwd)


def run_chat(cwd: str, settings: MemorySettings, prompt: str, *, as_json: bool,
             approval_mode: str | None) -> int:
    started = _start(cwd, settings)
    if started is None:
        return 2
    chat, engine, startup = started
    if approval_mode:
        chat = chat.model_copy(update={"approval_mode": approval_mode})
    if not startup.trusted:
        print("memlens: chat is off in an untrusted workspace: its tools read the workspace "
              f"({UNTRUSTED_HINT})", file=sys.stderr)
        return 2
    jit = JitSession.after_startup(engine, startup) if settings.jit_context else None
    context = assemble_context(settings, chat, startup, cwd, for_chat=True, jit=jit)
    printer = ChatPrinter(as_json)
    status = asyncio.run(ChatSession(context).send(prompt, printer.emit,
                                                   terminal_approver(context.redactor)))
    printer.finish()
    return {"done": 0, "cancelled": 130}.get(status, 1)


def run_managed_add(cwd: str, settings: MemorySettings, fact: str, scope: str | None) -> int:
    """`memlens add --memory-manager`: the memory manager routes the fact (terminal approvals)."""
    started = _start(cwd, settings)
    if started is None:
        return 2
    chat, _, startup = started
    if not startup.trusted:
        # Its tools read and edit the workspace's memory files: project memory
        # (docs/security.md "The trust model").
        print(f"memlens: the memory manager is off in an untrusted workspace ({UNTRUSTED_HINT})",
              file=sys.stderr)
        return 2
    context = assemble_context(settings, chat, startup, cwd, for_chat=False)
    status, sentence = asyncio.run(manage_memory(context, fact, scope, print_tool_results,
                                                 terminal_approver()))
    print(sentence or ("Done." if status == "done" else "The memory manager failed."))
    return 0 if status == "done" else 1


def run_extraction(cwd: str, settings: MemorySettings, *, as_json: bool) -> int:
    """`memlens skills extract`: mine the recorded sessions into the inbox."""
    started = _start(cwd, settings)
    if started is None:
        return 2
    chat, _, startup = started
    context = assemble_context(settings, chat, startup, cwd, for_chat=False)
    inbox = inbox_dir(settings.home, cwd, claim=True)
    assert inbox is not None
    try:
        result = asyncio.run(extract_skills(context, chats_dir(settings.home, cwd), inbox))
    except ExtractionBusy as err:
        print(f"memlens: error: {err}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(json_safe(result), ensure_ascii=False))
    else:
        created = ", ".join(result["created"]) or "no new skill"
        print(f"{result['message'] or 'Done.'}\nInbox: {created} ({inbox})")
    return 0 if result["status"] == "done" else 1
