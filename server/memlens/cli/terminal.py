"""The terminal side of an agent run: approvals and questions asked on the terminal, and the
chat's events printed (text to stdout as it streams, tool activity to stderr, or with --json
the memlens/chat/event stream as JSON lines)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from memlens.agent.records import Redactor
from memlens.agent.tools.base import Approve
from memlens.files.output import display_path, escape_controls, json_safe
from memlens.protocol.chat import ApprovalRequest, ApprovalResponse, ChatEvent

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


def ask_terminal(request: ApprovalRequest, redactor: Redactor | None = None) -> ApprovalResponse:
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


def terminal_approver(redactor: Redactor | None = None) -> Approve:
    """Approvals and questions asked on the terminal (in a thread: reading it blocks)."""

    async def approve(request: ApprovalRequest) -> ApprovalResponse:
        return await asyncio.to_thread(ask_terminal, request, redactor)

    return approve


class ChatPrinter:
    """Prints a chat's events: text to stdout as it streams, tool activity to stderr; with
    `as_json`, every event as one JSON line on stdout."""

    def __init__(self, as_json: bool):
        self.as_json = as_json
        self.printed_text = False
        # On a terminal the model's text cannot drive it (escape sequences that hide text,
        # set the title or the clipboard): control characters other than newline and tab are
        # shown escaped. Piped output stays exact.
        self.to_terminal = _isatty(sys.stdout)

    async def emit(self, event: ChatEvent) -> None:
        if self.as_json:
            sys.stdout.write(json.dumps(json_safe(event.payload()), ensure_ascii=False) + "\n")
            sys.stdout.flush()
            return
        if event.kind == "text" and event.text:
            sys.stdout.write(escape_controls(event.text, keep="\n\t") if self.to_terminal
                             else event.text)
            sys.stdout.flush()
            self.printed_text = True
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

    def finish(self) -> None:
        """End the streamed answer's last line."""
        if self.printed_text:
            sys.stdout.write("\n")


async def print_tool_results(event: ChatEvent) -> None:
    """The memory manager's progress: one line on stderr per tool result."""
    if event.kind == "toolResult":
        print(f"[{event.tool}] {'ok' if event.ok else 'refused'}: {event.summary}",
              file=sys.stderr)


def _args(args: dict[str, Any] | None) -> str:
    text = escape_controls(json.dumps(args or {}, ensure_ascii=False))
    return text if len(text) <= 120 else text[:117] + "..."


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
