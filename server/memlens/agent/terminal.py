"""`memlens chat PROMPT`: one turn of the same agent in a terminal.

Text streams to stdout; tool activity goes to stderr; `--json` prints the memlens/chat/event
stream as JSON lines. Writes are approved on the terminal (/dev/tty, else standard input when it
is a terminal), or by --approval-mode.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from ..discovery import MemoryEngine
from ..jit import JitSession
from ..model import MemorySettings
from ..output import display_path, escape_controls, json_safe
from ..protocol.chat import ApprovalRequest, ApprovalResponse, ChatEvent
from ..skills import discover_skills
from .config import ChatSettings
from .gemini import NoApiKey, make_client
from .records import Redactor, chats_dir, install_stream_redaction
from .session import AgentContext, ChatSession

UNTRUSTED_HINT = "trust the folder first: a rule in trustedFolders.json, " \
                 "GEMINI_CLI_TRUST_WORKSPACE=true or --trusted"
NO_TERMINAL = ("memlens: manual approval needs a terminal, and there is none to ask about "
               "{tool}; denied (use --approval-mode autoEdit to allow edits, or deny)")


class _Terminal:
    """A line-oriented exchange with the user: the controlling terminal (/dev/tty), else
    standard input when it is a terminal (the question then goes to standard error).

    /dev/tty is opened unbuffered, read and written through its descriptor: a buffered
    "r+" text file needs a seekable file, which a terminal never is."""

    def __init__(self, read_fd: int, write_fd: int, owned: bool):
        self.read_fd, self.write_fd, self.owned = read_fd, write_fd, owned

    @classmethod
    def open(cls) -> _Terminal | None:
        try:
            fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
            return cls(fd, fd, True)
        except OSError:
            pass
        try:
            if sys.stdin is not None and os.isatty(sys.stdin.fileno()):
                return cls(sys.stdin.fileno(), sys.stderr.fileno(), False)
        except (OSError, ValueError):
            pass
        return None

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        while data:
            data = data[os.write(self.write_fd, data):]

    def readline(self) -> str:
        line = bytearray()
        while not line.endswith(b"\n"):
            byte = os.read(self.read_fd, 1)
            if not byte:
                break
            line += byte
        return line.decode("utf-8", "replace").strip()

    def close(self) -> None:
        if self.owned:
            os.close(self.read_fd)


def _ask_terminal(request: ApprovalRequest, redactor: Redactor | None = None) -> ApprovalResponse:
    """Ask on the terminal; the question (the model's title, arguments and diff) is shown with
    its control characters escaped, so it cannot rewrite the screen the user decides on."""
    clean = redactor.text if redactor is not None else (lambda value: value)
    terminal = _Terminal.open()
    if terminal is None:
        print(NO_TERMINAL.format(tool=request.tool), file=sys.stderr)
        return ApprovalResponse(outcome="deny")
    try:
        title = escape_controls(clean(request.title))
        if request.tool == "ask_user":
            options = [escape_controls(clean(str(o)))
                       for o in request.args.get("options") or []]
            hint = f" ({' / '.join(options)})" if options else ""
            terminal.write(f"\n{title}{hint}\n> ")
            answer = terminal.readline()
            return ApprovalResponse(outcome="approve" if answer else "deny",
                                    answer=answer or None)
        terminal.write(f"\n{title}\n")
        if request.diff:
            diff = escape_controls(clean(request.diff), keep="\n\t")
            terminal.write(diff if diff.endswith("\n") else diff + "\n")
        terminal.write("Apply? [y]es, [a]lways for this tool, [N]o: ")
        answer = terminal.readline().lower()
    except OSError as err:
        print(f"memlens: the terminal failed ({err.strerror or err}); {request.tool} denied",
              file=sys.stderr)
        return ApprovalResponse(outcome="deny")
    finally:
        terminal.close()
    if answer in ("y", "yes"):
        return ApprovalResponse(outcome="approve")
    if answer in ("a", "always"):
        return ApprovalResponse(outcome="approveAlways")
    return ApprovalResponse(outcome="deny")


def run_chat(cwd: str, settings: MemorySettings, prompt: str, *, as_json: bool,
             approval_mode: str | None) -> int:
    install_stream_redaction()  # no key from the environment reaches the terminal
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
    # On a terminal the model's text cannot drive it (escape sequences that hide text, set
    # the title or the clipboard): control characters other than newline and tab are shown
    # escaped. Piped output stays exact.
    to_terminal = _isatty(sys.stdout)

    async def emit(event: ChatEvent) -> None:
        nonlocal printed_text
        if as_json:
            sys.stdout.write(json.dumps(json_safe(event.payload()), ensure_ascii=False) + "\n")
            sys.stdout.flush()
            return
        if event.kind == "text" and event.text:
            sys.stdout.write(escape_controls(event.text, keep="\n\t") if to_terminal
                             else event.text)
            sys.stdout.flush()
            printed_text = True
        elif event.kind == "toolCall":
            print(f"[{event.tool}] {_args(event.args)}", file=sys.stderr)
        elif event.kind == "toolResult":
            mark = "ok" if event.ok else "refused"
            print(f"[{event.tool}] {mark}: {escape_controls(event.summary or '')}",
                  file=sys.stderr)
        elif event.kind == "memoryLoaded":
            names = ", ".join(display_path(str(f.get("path"))) for f in event.files or [])
            print(f"[memory loaded] {names}", file=sys.stderr)
        elif event.kind == "error":
            print(f"memlens: {escape_controls(event.message or '')}", file=sys.stderr)

    async def approve(request: ApprovalRequest) -> ApprovalResponse:
        return await asyncio.to_thread(_ask_terminal, request, context.redactor)

    status = asyncio.run(session.send(prompt, emit, approve))
    if printed_text:
        sys.stdout.write("\n")
    return {"done": 0, "cancelled": 130}.get(status, 1)


def _args(args: dict[str, Any] | None) -> str:
    text = escape_controls(json.dumps(args or {}, ensure_ascii=False))
    return text if len(text) <= 120 else text[:117] + "..."


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def run_managed_add(cwd: str, settings: MemorySettings, fact: str, scope: str | None) -> int:
    """`memlens add --memory-manager`: the memory manager routes the fact (terminal approvals)."""
    from .memory_manager import manage_memory

    install_stream_redaction()  # no key from the environment reaches the terminal
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

    install_stream_redaction()  # no key from the environment reaches the terminal
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
        print(json.dumps(json_safe(result), ensure_ascii=False))
    else:
        created = ", ".join(result["created"]) or "no new skill"
        print(f"{result['message'] or 'Done.'}\nInbox: {created} ({inbox})")
    return 0 if result["status"] == "done" else 1
