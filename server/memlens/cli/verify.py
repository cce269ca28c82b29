"""`memlens verify [PATH] [--agent A ...] [--read FILE] [--json]`: run each installed agent
offline on a copy of the workspace and compare what it sent its model with the prediction
(memlens.verify.run). Exit 0 identical, 1 a payload differs (or an agent could not be
verified), 2 usage."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memlens.cli.common import Parser, UsageError, directory, print_json


def add_parser(commands: Any, common: Parser, summary: str) -> None:
    verify = commands.add_parser("verify", help=summary)
    verify.add_argument("path", nargs="?", default=".", metavar="PATH")
    verify.add_argument("--agent", action="append", dest="agents", metavar="NAME",
                        choices=["gemini", "claude", "codex", "copilot", "opencode", "pi"],
                        help="the agent to verify (repeatable; default: every installed one)")
    verify.add_argument("--home", metavar="DIR",
                        help="whose memory and settings files to copy (default: your home)")
    verify.add_argument("--read", metavar="FILE",
                        help="the file the scripted tool call reads, relative to PATH "
                             "(default: one beside a subfolder's memory file)")
    verify.add_argument("--json", action="store_true")
    verify.add_argument("--timeout", type=float, default=180.0, metavar="S",
                        help="seconds one agent run may take (default 180)")
    verify.add_argument("--no-remember", action="store_true",
                        help="do not record the result on this machine")
    verify.add_argument("--trusted", action="store_true",
                        help="trust PATH for this run (verify runs your agents on its files, "
                             "so an untrusted folder is refused)")
    verify.add_argument("--unsafe-no-sandbox", action="store_true",
                        help="run the agents even where no sandbox can (no bubblewrap): the "
                             "repository's files could then make them run commands as you")


def run(args: argparse.Namespace) -> int:
    from memlens.agent_versions import detect_installed
    from memlens.cli.tty import Progress
    from memlens.verify.run import VerifyError, verify

    folder = directory(args.path)
    quiet = args.json
    line = Progress("verify")

    def progress(message: str) -> None:
        if line.active:  # a terminal: the one updating line, with the seconds so far
            line.step(message)
        elif not quiet:
            print(f"memlens: {message} ...", file=sys.stderr, flush=True)

    try:
        with line:
            result = verify(folder, detect_installed(), args.agents, home=args.home,
                            read=args.read, remember=not args.no_remember, progress=progress,
                            timeout=args.timeout, trusted=True if args.trusted else None,
                            unsandboxed=args.unsafe_no_sandbox)
    except VerifyError as err:
        raise UsageError(str(err)) from None
    if args.json:
        print_json(result.wire())
    else:
        for agent in result.agents:
            where = {
                "sandbox": " (sandboxed: no network, HOME hidden, only the copy writable)",
                "network-namespace": " (UNSANDBOXED: network cut, nothing else)",
                "loopback-only": " (UNSANDBOXED: offline flags, model on 127.0.0.1)",
            }.get(agent.isolation or "", "")
            read = f", read {agent.read}" if agent.read else ""
            seconds = f", done after {agent.seconds:.0f} s" if agent.seconds else ""
            print(f"{agent.label}: {agent.message}{where}{read}{seconds}")
            for payload in agent.payloads:
                if not payload.identical:
                    sys.stdout.write(payload.diff if payload.diff.endswith("\n")
                                     else payload.diff + "\n")
            for note in agent.notes:
                print(f"  note: {note}")
            if agent.remembered:
                print(f"  remembered: {agent.label} is verified on this machine")
        ran = [a for a in result.agents if a.status != "missing"]
        if len(ran) > 1:
            print(f"{len(ran)} agents verified at once in {result.seconds:.0f} s")
    return 0 if result.identical else 1
